/**
 * People without a phone number, on both backends, through the sandbox over real HTTP: a person
 * who writes with a WhatsApp username comes with a business-scoped user id (BSUID) and no phone;
 * the message is stored, listed and threaded, the contact shows the BSUID, username and profile
 * name, and a send to the BSUID reaches them (on the provider's `recipient` field) and its
 * statuses match. When the phone later arrives with the BSUID, the person stays one contact,
 * merged (and audited) when the phone was another contact's.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { eventually } from '../helpers/instances.ts';
import { MESSAGES, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const CONTACTS = '/api/v1/external/crm/contacts';
const CONVERSATIONS = '/api/v1/external/messaging/conversations';

const get = (s: MessagingSetup, url: string) =>
  s.app.inject({ url, headers: { authorization: s.token } });

/** The person writes `text` to the first number; the webhook's item, as the sandbox sent it. */
async function writes(
  s: MessagingSetup,
  person: { from?: string; userId?: string; username?: string; name?: string },
  text: string,
) {
  const out = await s.provider.sandbox.cloud.writeIn({
    phoneNumberId: s.numbers[0]!,
    ...person,
    text,
  });
  assert.ok(out.ok, JSON.stringify(out));
  return s.provider.sandbox.cloud.messages.find((m) => m.wamid === out.wamid)!.inbound!;
}

const contactsOf = async (s: MessagingSetup) =>
  queryRows<{ id: string; phone: string | null; wa_user_id: string | null }>(
    s.services.storage,
    sql`select id, phone, wa_user_id from contacts where portal_id = ${s.portalId} order by id`,
  );

for (const backend of backends()) {
  describe(`people without a phone number (${backend.name})`, () => {
    test('a username person writes in: stored, listed, shown, and answered by their BSUID', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      const item = await writes(s, { username: 'ada.lovelace', name: 'Ada L' }, 'hello there');
      assert.equal(item.from, undefined, 'no phone in the webhook');
      const userId = String(item.from_user_id);
      assert.match(userId, /^[A-Z]{2}\.[0-9]{20}$/);

      const found = (await get(s, `${CONTACTS}?waUserId=${encodeURIComponent(userId)}`)).json().data
        .items;
      assert.equal(found.length, 1);
      assert.equal(found[0].phone, null);
      assert.equal(found[0].waUserId, userId);
      assert.equal(found[0].username, 'ada.lovelace');
      assert.equal(found[0].profileName, 'Ada L');
      const contactId = found[0].id;

      const inbound = (await get(s, `${MESSAGES}?direction=inbound`)).json().data.items;
      assert.equal(inbound.length, 1);
      assert.equal(inbound[0].contactId, contactId);
      const [conversation] = (await get(s, CONVERSATIONS)).json().data.items;
      assert.equal(conversation.contact.id, contactId);
      assert.equal(conversation.contact.name, 'Ada L');
      assert.equal(conversation.contact.phone, null);
      assert.equal(conversation.contact.waUserId, userId);
      assert.equal(conversation.contact.username, 'ada.lovelace');
      assert.equal(conversation.lastMessage.preview, 'hello there');

      // The provider sends authentication templates to phone numbers only: refused up front.
      for (const wabaId of await s.services.partner.wabaIdsOf(s.portalId))
        s.provider.sandbox.cloud.templatesOf(wabaId).push({
          id: `${wabaId}8`,
          name: 'login_code',
          language: 'en_US',
          category: 'AUTHENTICATION',
          status: 'APPROVED',
          components: [{ type: 'BODY', text: '{{1}} is your verification code.' }],
          appId: undefined,
        });
      const auth = await s.send({
        to: userId,
        from: s.numbers[0],
        type: 'template',
        template: { name: 'login_code', language: 'en_US', parameters: ['123456'] },
      });
      assert.equal(auth.statusCode, 422, auth.body);
      assert.equal(auth.json().error.code, 'recipient_needs_phone');

      // A reply inside the window, by `to` as the BSUID and by `contactId`.
      for (const recipient of [{ to: userId }, { contactId }]) {
        const res = await s.send({
          ...recipient,
          from: s.numbers[0],
          type: 'text',
          text: { body: 'hi Ada' },
        });
        assert.equal(res.statusCode, 202, res.body);
        const queued = res.json().data;
        assert.equal(queued.contactId, contactId);
        await eventually(
          async () => (await s.message(queued.id)).status === 'read',
          'the statuses of the message sent to the BSUID arrive and match',
        );
      }
      const received = s.provider.sandbox.cloud.messages.filter((m) => m.direction === 'received');
      assert.equal(received.length, 2);
      for (const m of received) assert.equal(m.waId, userId, 'addressed by `recipient`');
      const [thread] = (await get(s, CONVERSATIONS)).json().data.items;
      assert.equal(thread.lastMessage.direction, 'outbound');
      assert.equal((await contactsOf(s)).length, 1);
    });

    test('the phone arrives later with the BSUID: still one contact', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      const userId = 'GB.40817502934810293841';
      await writes(s, { userId, username: 'grace.h' }, 'first, without a phone');
      const [before] = await contactsOf(s);
      assert.equal(before!.phone, null);
      await writes(s, { userId, from: '447700900123' }, 'now with a phone');
      const after = await contactsOf(s);
      assert.deepEqual(after, [{ id: before!.id, phone: '+447700900123', wa_user_id: userId }]);
      const inbound = (await get(s, `${MESSAGES}?direction=inbound`)).json().data.items;
      assert.equal(inbound.length, 2);
      for (const m of inbound) assert.equal(m.contactId, before!.id);
      const conversations = (await get(s, CONVERSATIONS)).json().data.items;
      assert.equal(conversations.length, 1);
      assert.equal(conversations[0].unreadCount, 2);
      // The phone now answers the person too.
      const res = await s.send({
        to: '+447700900123',
        from: s.numbers[0],
        type: 'text',
        text: { body: 'thanks' },
      });
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json().data.contactId, before!.id);
    });

    test('a BSUID contact and a phone contact of one person are merged, audited', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100 });
      const created = await s.app.inject({
        method: 'POST',
        url: CONTACTS,
        headers: { authorization: s.token },
        payload: { phone: '+16505550199', firstName: 'Katherine' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const phoneContact = created.json().data.id;
      const userId = 'US.13491208655302741918';
      await writes(s, { userId, username: 'kj' }, 'hello, no phone');
      assert.equal((await contactsOf(s)).length, 2);
      await writes(s, { userId, from: '16505550199' }, 'hello, with my phone');

      const after = await contactsOf(s);
      assert.deepEqual(after, [{ id: phoneContact, phone: '+16505550199', wa_user_id: userId }]);
      const inbound = (await get(s, `${MESSAGES}?direction=inbound`)).json().data.items;
      assert.equal(inbound.length, 2);
      for (const m of inbound) assert.equal(m.contactId, phoneContact);
      const conversations = (await get(s, CONVERSATIONS)).json().data.items;
      assert.equal(conversations.length, 1);
      assert.equal(conversations[0].unreadCount, 2);
      assert.equal(conversations[0].contact.name, 'Katherine');
      const contact = (await get(s, `${CONTACTS}/${phoneContact}`)).json().data;
      assert.equal(contact.username, 'kj');
      const audit = await queryRows<{ action: string; reason: string }>(
        s.services.storage,
        sql`select action, reason from audit_events
          where portal_id = ${s.portalId} and action = 'contact.merged'`,
      );
      assert.equal(audit.length, 1);
      assert.match(audit[0]!.reason, new RegExp(`into ${phoneContact}$`));
      assert.doesNotMatch(audit[0]!.reason, /US\.|kj|\+1/, 'ids only in the audit');
    });
  });
}
