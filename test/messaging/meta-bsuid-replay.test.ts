/**
 * Meta's documented payloads for people known by their business-scoped user id
 * (test/fixtures/meta-webhooks/bsuid, each with the page it comes from), replayed signed through
 * Portico's provider-webhook route over real storage, each checked where it lands: a message
 * from a username person (`from_user_id`, no `from`) → a contact with the BSUID, parent BSUID,
 * username and profile name, the message on it, and `message.received` naming the sender by
 * BSUID and username; a status naming them by
 * `recipient_user_id` (no `recipient_id`) → the message Portico sent them is delivered; a
 * `user_changed_user_id` system message → the same contact under the new BSUID, no message added.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { eventually } from '../helpers/instances.ts';
import { MESSAGES, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { replaySigned } from '../helpers/provider-webhook.ts';
import { ROOT } from '../helpers/root.ts';
import { backends } from '../helpers/storage.ts';
import { startReceiver } from '../webhooks/receiver.ts';

// From the repository root: the suite runs this file bundled into test-output/suite.
const FIXTURES = pathToFileURL(join(ROOT, 'test', 'fixtures', 'meta-webhooks', 'bsuid') + '/');
const CONTACTS = '/api/v1/external/crm/contacts';
const PAGES = new Set([
  'https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/',
  'https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/',
]);

interface Value {
  metadata: Record<string, string>;
  messages?: Record<string, unknown>[];
  statuses?: Record<string, unknown>[];
}
interface Fixture {
  source: string;
  body: { entry: { id: string; changes: { field: string; value: Value }[] }[] };
}

function fixture(name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Fixture;
}

/** The fixture to the test's WABA and number, its items timed now, `patch` on its first item. */
function replayBody(
  name: string,
  s: { wabaId: string; phoneNumberId: string },
  patch: Record<string, unknown> = {},
): string {
  const body = structuredClone(fixture(name).body);
  body.entry[0]!.id = s.wabaId;
  const value = body.entry[0]!.changes[0]!.value;
  value.metadata.phone_number_id = s.phoneNumberId;
  const now = String(Math.floor(Date.now() / 1000));
  for (const item of [...(value.messages ?? []), ...(value.statuses ?? [])]) item.timestamp = now;
  Object.assign((value.messages ?? value.statuses)![0]!, patch);
  return JSON.stringify(body);
}

const get = (s: MessagingSetup, url: string) =>
  s.app.inject({ url, headers: { authorization: s.token } });

test('every BSUID fixture names the Meta page it comes from', () => {
  const names = readdirSync(FIXTURES).filter((n) => n.endsWith('.json'));
  assert.equal(names.length, 3);
  for (const name of names) {
    const f = fixture(name.replace(/\.json$/, ''));
    assert.ok(PAGES.has(f.source), name);
    assert.equal(f.body.entry[0]!.changes[0]!.field, 'messages', name);
  }
});

for (const backend of backends()) {
  describe(`Meta's documented BSUID payloads, replayed (${backend.name})`, () => {
    test('a username person writes, is answered and delivered to, then changes BSUID', async (t) => {
      // The sandbox's own statuses come far later: the replayed one is the first.
      const s = await messagingSetup(t, backend, {
        credit: 100,
        cloud: { statusDelaysMs: [3_600_000, 3_600_001, 3_600_002] },
      });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await s.services.webhooks.start();
      await s.services.webhooks.startWorker();
      const { secret } = await s.services.webhooks.addEndpoint(
        s.portalId,
        { url: receiver.url, eventTypes: ['message.received'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const wabaId = (await s.services.partner.wabaIdsOf(s.portalId))[0]!;
      const phoneNumberId = s.numbers.find((n) => n.startsWith(wabaId))!;
      const to = { wabaId, phoneNumberId };
      const userId = 'US.13491208655302741918';

      await replaySigned(s, replayBody('text-username', to));
      const found = (await get(s, `${CONTACTS}?waUserId=${encodeURIComponent(userId)}`)).json().data
        .items;
      assert.equal(found.length, 1);
      const contact = found[0];
      assert.equal(contact.phone, null);
      assert.equal(contact.username, 'sheena.nelson');
      assert.equal(contact.profileName, 'Sheena Nelson');
      assert.equal(contact.parentWaUserId, 'US.ENT.11815799212886844830');
      const inbound = (await get(s, `${MESSAGES}?direction=inbound`)).json().data.items;
      assert.equal(inbound.length, 1);
      assert.equal(inbound[0].contactId, contact.id);
      // The event names the sender by BSUID and username, as the provider gave them.
      const [received] = await receiver.waitFor(1);
      assert.equal(received!.event?.type, 'message.received');
      assert.equal(received!.event?.data.from, userId);
      assert.equal(received!.event?.data.waUserId, userId);
      assert.equal(received!.event?.data.username, 'sheena.nelson');
      assert.equal(received!.event?.data.contactId, contact.id);

      // Answered by the BSUID; the provider's status names them by `recipient_user_id` only.
      const sent = await s.send({
        to: userId,
        from: phoneNumberId,
        type: 'text',
        text: { body: 'Yes: blue and green.' },
      });
      assert.equal(sent.statusCode, 202, sent.body);
      const id = sent.json().data.id as string;
      await eventually(
        async () => typeof (await s.message(id)).providerMessageId === 'string',
        'the provider accepted the send',
      );
      const wamid = (await s.message(id)).providerMessageId as string;
      const delivered = s.provider.sandbox.cloud.messages.find((m) => m.wamid === wamid)!;
      assert.equal(delivered.waId, userId, 'addressed by `recipient`');
      await replaySigned(s, replayBody('status-recipient-user-id', to, { id: wamid }));
      await eventually(
        async () => (await s.message(id)).status === 'delivered',
        'the status by recipient_user_id lands on the message',
      );

      // The BSUID changes: the same contact, under the new one; no message added.
      await replaySigned(s, replayBody('system-user_changed_user_id', to));
      const next = 'US.20937459123874510293';
      const after = (await get(s, `${CONTACTS}/${contact.id}`)).json().data;
      assert.equal(after.waUserId, next);
      assert.equal(after.parentWaUserId, 'US.ENT.11815799212886844830');
      assert.equal((await get(s, `${MESSAGES}?direction=inbound`)).json().data.items.length, 1);
      const old = (await get(s, `${CONTACTS}?waUserId=${encodeURIComponent(userId)}`)).json().data
        .items;
      assert.equal(old.length, 0);
    });
  });
}
