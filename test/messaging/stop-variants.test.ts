/**
 * STOP as people type it, end to end: `Stop!`, `STOP.` and a full-width `ＳＴＯＰ` written from
 * the sandbox phone reach the app as the provider's signed webhooks and opt the person out (a
 * later template send is refused as opted out); `STOP please` is a sentence, not the keyword.
 * The matching rule itself is in docs/messaging.md and its unit test in messaging-settings.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { eventually } from '../helpers/instances.ts';
import { GREETING, MESSAGES, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const CONTACTS = '/api/v1/external/crm/contacts';

const get = (s: MessagingSetup, url: string) =>
  s.app.inject({ url, headers: { authorization: s.token } });

/** The person (`from`, digits) writes `body` from the sandbox phone; resolves with their contact's id once the message is stored. */
async function writes(s: MessagingSetup, from: string, body: string): Promise<string> {
  const out = await s.provider.sandbox.cloud.writeIn({
    phoneNumberId: s.numbers[0]!,
    from,
    message: { type: 'text', text: { body } },
  });
  assert.ok(out.ok, JSON.stringify(out));
  let contactId = '';
  await eventually(
    async () => {
      const [contact] = await queryRows<{ id: string }>(
        s.services.storage,
        sql`select id from contacts where portal_id = ${s.portalId} and phone = ${`+${from}`}`,
      );
      if (!contact) return false;
      const items = (await get(s, `${MESSAGES}?direction=inbound&contactId=${contact.id}`)).json()
        .data.items as { text?: { body: string } }[];
      contactId = contact.id;
      return items.some((m) => m.text?.body === body);
    },
    `the webhook of ${JSON.stringify(body)} is stored`,
  );
  return contactId;
}

const template = (to: string, from: string) => ({
  to,
  from,
  type: 'template',
  template: { name: GREETING.name, language: 'en_US', parameters: ['Ada'] },
});

for (const backend of backends()) {
  describe(`STOP variants from the sandbox phone (${backend.name})`, () => {
    test('Stop!, STOP. and a full-width ＳＴＯＰ opt out; STOP please does not', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const cases = [
        { from: '16505550201', body: 'Stop!', optedOut: true },
        { from: '16505550202', body: 'STOP.', optedOut: true },
        { from: '16505550203', body: 'ＳＴＯＰ', optedOut: true },
        { from: '16505550204', body: 'STOP please', optedOut: false },
      ];
      for (const c of cases) {
        const contactId = await writes(s, c.from, c.body);
        const contact = (await get(s, `${CONTACTS}/${contactId}`)).json().data;
        assert.equal(
          contact.consent.whatsapp,
          c.optedOut ? 'opted_out' : 'unknown',
          `${c.body}: ${JSON.stringify(contact.consent)}`,
        );
        const sent = await s.send(template(`+${c.from}`, s.numbers[0]!));
        if (c.optedOut) {
          assert.equal(sent.statusCode, 422, `${c.body}: ${sent.body}`);
          assert.equal(sent.json().error.code, 'recipient_opted_out', c.body);
        } else assert.equal(sent.statusCode, 202, `${c.body}: ${sent.body}`);
      }
    });
  });
}
