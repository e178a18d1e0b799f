/**
 * A person's business-scoped user id (BSUID) changes, on both backends, through the sandbox over
 * real HTTP (`POST /sandbox/signals/user-id`, the provider's `user_changed_user_id` system
 * message): the contact takes the new BSUID and keeps its messages; when another contact already
 * holds the new BSUID, the two are merged (audited, ids only), the one with a phone kept.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { MESSAGES, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const CONTACTS = '/api/v1/external/crm/contacts';

const get = (s: MessagingSetup, url: string) =>
  s.app.inject({ url, headers: { authorization: s.token } });

async function writes(
  s: MessagingSetup,
  person: { from?: string; userId?: string; username?: string },
  text: string,
) {
  const out = await s.provider.sandbox.cloud.writeIn({
    phoneNumberId: s.numbers[0]!,
    ...person,
    text,
  });
  assert.ok(out.ok, JSON.stringify(out));
}

/** The sandbox's form: the person's BSUID changes from `previous` to `next`. */
async function changeUserId(s: MessagingSetup, previous: string, next?: string) {
  const res = await fetch(`${s.provider.sandbox.url}/sandbox/signals/user-id`, {
    method: 'POST',
    body: new URLSearchParams({
      phone_number_id: s.numbers[0]!,
      previous_user_id: previous,
      ...(next !== undefined && { user_id: next }),
    }),
  });
  const page = await res.text();
  assert.equal(res.status, 200, page);
  assert.match(page, /answered 200/);
}

const contactsOf = async (s: MessagingSetup) =>
  queryRows<{ id: string; phone: string | null; wa_user_id: string | null }>(
    s.services.storage,
    sql`select id, phone, wa_user_id from contacts where portal_id = ${s.portalId} order by id`,
  );

for (const backend of backends()) {
  describe(`a person's BSUID changes (${backend.name})`, () => {
    test('the contact takes the new BSUID; later messages under it thread on', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      const previous = 'GB.40817502934810293841';
      const next = 'GB.99817502934810293841';
      await writes(s, { userId: previous, username: 'grace.h' }, 'before');
      const [before] = await contactsOf(s);
      await changeUserId(s, previous, next);
      assert.deepEqual(await contactsOf(s), [{ id: before!.id, phone: null, wa_user_id: next }]);
      const found = (await get(s, `${CONTACTS}?waUserId=${encodeURIComponent(next)}`)).json().data
        .items;
      assert.equal(found.length, 1);
      assert.equal(found[0].id, before!.id);
      // The system message is no message of the person's.
      assert.equal((await get(s, `${MESSAGES}?direction=inbound`)).json().data.items.length, 1);
      await writes(s, { userId: next, username: 'grace.h' }, 'after');
      assert.equal((await contactsOf(s)).length, 1);
      const inbound = (await get(s, `${MESSAGES}?direction=inbound`)).json().data.items;
      assert.equal(inbound.length, 2);
      for (const m of inbound) assert.equal(m.contactId, before!.id);
      // A replayed change, or one about an unknown person, changes nothing.
      await changeUserId(s, previous, next);
      await changeUserId(s, 'US.11111111111111111111');
      assert.deepEqual(await contactsOf(s), [{ id: before!.id, phone: null, wa_user_id: next }]);
    });

    test('the new BSUID is already another contact: merged, the phone contact kept', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      const previous = 'US.13491208655302741918';
      await writes(s, { userId: previous, username: 'kj' }, 'no phone');
      await writes(s, { from: '16505550199' }, 'with my phone');
      const both = await contactsOf(s);
      assert.equal(both.length, 2);
      const phoneContact = both.find((c) => c.phone !== null)!;
      await changeUserId(s, previous, phoneContact.wa_user_id!);
      assert.deepEqual(await contactsOf(s), [phoneContact]);
      const inbound = (await get(s, `${MESSAGES}?direction=inbound`)).json().data.items;
      assert.equal(inbound.length, 2);
      for (const m of inbound) assert.equal(m.contactId, phoneContact.id);
      const contact = (await get(s, `${CONTACTS}/${phoneContact.id}`)).json().data;
      assert.equal(contact.username, 'kj');
      const audit = await queryRows<{ reason: string }>(
        s.services.storage,
        sql`select reason from audit_events
          where portal_id = ${s.portalId} and action = 'contact.merged'`,
      );
      assert.equal(audit.length, 1);
      assert.match(audit[0]!.reason, new RegExp(`into ${phoneContact.id}$`));
      assert.doesNotMatch(audit[0]!.reason, /US\.|kj|\+1/, 'ids only in the audit');
    });

    test('the sandbox refuses a change that is not one', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      const same = await fetch(`${s.provider.sandbox.url}/sandbox/signals/user-id`, {
        method: 'POST',
        body: new URLSearchParams({
          phone_number_id: s.numbers[0]!,
          previous_user_id: 'US.1',
          user_id: 'US.1',
        }),
      });
      assert.equal(same.status, 400);
    });
  });
}
