/**
 * Erasing a contact (GDPR art. 17) with messaging's data around it, on both backends: after
 * `DELETE /crm/contacts/{id}` no table and no stored `Idempotency-Key` response holds the
 * person's phone or name; their messages are anonymised, the queued ones failed with their own
 * reason and their credit released; drafts lose them; and the answer counts each.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import type { Storage } from '../../src/db/client.ts';
import { personWrites } from '../helpers/inbound.ts';
import { eventually } from '../helpers/instances.ts';
import { greeting, hello, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { startReceiver } from '../webhooks/receiver.ts';

const CONTACTS = '/api/v1/external/crm/contacts';
const DRAFTS = '/api/v1/external/messaging/drafts';
const MEDIA = '/api/v1/external/messaging/media';

/** Every row of every table of every schema (pg-boss's too), as one text. */
async function dumpDatabase(storage: Storage): Promise<string> {
  const tables = await queryRows<{ schema: string; name: string }>(
    storage,
    sql`select table_schema as schema, table_name as name from information_schema.tables
        where table_type = 'BASE TABLE'
          and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  assert.ok(tables.some((t) => t.name === 'messages'));
  const out: string[] = [];
  for (const { schema, name } of tables) {
    const rows = await queryRows<{ row: unknown }>(
      storage,
      sql.raw(`select row_to_json(t)::text as row from "${schema}"."${name}" t`),
    );
    out.push(`${schema}.${name}`, ...rows.map((r) => String(r.row)));
  }
  return out.join('\n');
}

function call(s: MessagingSetup, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string) {
  return (payload?: object, headers: Record<string, string> = {}) =>
    s.app.inject({
      method,
      url,
      headers: { authorization: s.token, ...headers },
      ...(payload !== undefined && { payload }),
    });
}

async function createContact(s: MessagingSetup, body: object, key?: string) {
  const res = await call(s, 'POST', CONTACTS)(body, key ? { 'idempotency-key': key } : {});
  assert.equal(res.statusCode, 201, res.body);
  return res.json().data as { id: string; phone: string };
}

for (const backend of backends()) {
  describe(`messaging: contact erasure (${backend.name})`, () => {
    test('no table and no stored response names the erased person', async (t) => {
      const s = await messagingSetup(t, backend);
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await s.services.webhooks.start();
      await s.services.webhooks.startWorker();
      const { secret } = await s.services.webhooks.addEndpoint(
        s.portalId,
        { url: receiver.url, eventTypes: ['message.status', 'message.received'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const phone = '+16505557777';
      const contact = await createContact(
        s,
        { phone, firstName: 'Zenobia', lastName: 'Quixotic', tags: ['vip'] },
        'create-zenobia',
      );
      await s.provider.sandbox.cloud.writeIn({
        phoneNumberId: s.numbers[0]!,
        from: phone.slice(1),
        text: 'hi',
      });
      await eventually(
        async () =>
          (await s.services.contacts.getContact({ portalId: s.portalId }, contact.id))
            .lastInboundAt !== null,
        'the inbound message reached the contact',
      );
      const byContact = {
        contactId: contact.id,
        from: s.numbers[0],
        type: 'text',
        text: { body: 'Dear Zenobia Quixotic, your order shipped' },
      };
      const first = await s.send(byContact, { 'idempotency-key': 'send-1' });
      assert.equal(first.statusCode, 202, first.body);
      const byTo = greeting(phone, s.numbers[0]!, 'Zenobia');
      const second = await s.send(byTo, { 'idempotency-key': 'send-2' });
      assert.equal(second.statusCode, 202, second.body);
      const replay = await s.send(byContact, { 'idempotency-key': 'send-1' });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      const onlyHer = await call(
        s,
        'POST',
        DRAFTS,
      )({
        type: 'text',
        text: { body: 'Zenobia, a word' },
        recipients: { contactIds: [contact.id] },
      });
      assert.equal(onlyHer.statusCode, 201, onlyHer.body);
      const shared = await call(
        s,
        'POST',
        DRAFTS,
      )({
        type: 'text',
        text: { body: 'News for everyone' },
        recipients: { contactIds: [contact.id], phones: [phone, '+16505550001'] },
      });
      assert.equal(shared.statusCode, 201, shared.body);
      for (const res of [first, second])
        await eventually(
          async () => (await s.message(res.json().data.id)).status === 'read',
          'read',
        );
      await receiver.waitFor(7); // received + 2 × (sent, delivered, read)

      const erased = await call(s, 'DELETE', `${CONTACTS}/${contact.id}`)();
      assert.equal(erased.statusCode, 200, erased.body);
      const data = erased.json().data;
      assert.deepEqual(data.erased, { contact: 1, drafts: 1, webhookEvents: 1 });
      assert.deepEqual(data.anonymised, {
        storedResponses: 3,
        messageRecipients: 2,
        inboundMessages: 1,
        drafts: 1,
        tickets: 0,
        ticketComments: 0,
        ticketNotes: 0,
      });
      assert.deepEqual(data.failed, { queuedMessages: 0 });

      // The key's tombstone answers the replay as the first response did: no new send, no charge.
      const credit = await s.services.messaging.credit({ portalId: s.portalId });
      const replayed = await s.send(byContact, { 'idempotency-key': 'send-1' });
      assert.equal(replayed.headers['idempotent-replayed'], 'true');
      assert.equal(replayed.statusCode, 202, replayed.body);
      assert.equal(replayed.json().data.id, first.json().data.id);
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), credit);
      const dump = await dumpDatabase(s.services.storage);
      for (const needle of ['6505557777', 'Zenobia', 'Quixotic'])
        assert.ok(!dump.includes(needle), `${needle} is still stored`);
      // The shared draft keeps its other recipient; the one for her alone is gone.
      const left = await call(s, 'GET', `${DRAFTS}/${shared.json().data.id}`)();
      assert.deepEqual(left.json().data.recipients, {
        contactIds: [],
        phones: ['+16505550001'],
        tag: null,
      });
      assert.equal((await call(s, 'GET', `${DRAFTS}/${onlyHer.json().data.id}`)()).statusCode, 404);
    });

    test('messages by contactId and by to are anonymised; queued ones fail with their own reason, credit released', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 100, workers: false });
      const contact = await createContact(s, { phone: '+16505558888', firstName: 'Ada' });
      const byContact = await s.send({
        ...greeting('', s.numbers[0]!, 'Ada'),
        contactId: contact.id,
        to: undefined,
      });
      assert.equal(byContact.statusCode, 202, byContact.body);
      const byTo = await s.send(hello('+1 650 555 8888', s.numbers[0]!));
      assert.equal(byTo.statusCode, 202, byTo.body);
      // The phone changes after a send: the earlier message is still hers, by its contact link.
      const patched = await call(
        s,
        'PATCH',
        `${CONTACTS}/${contact.id}`,
      )({ phone: '+16505559999' });
      assert.equal(patched.statusCode, 200, patched.body);
      const byNewPhone = await s.send(hello('+16505559999', s.numbers[0]!));
      assert.equal(byNewPhone.statusCode, 202, byNewPhone.body);
      const other = await s.send(hello('+16505550002', s.numbers[0]!));
      assert.deepEqual((await s.services.messaging.credit({ portalId: s.portalId })).reserved, 16);

      const erased = await call(s, 'DELETE', `${CONTACTS}/${contact.id}`)();
      assert.equal(erased.statusCode, 200, erased.body);
      assert.deepEqual(erased.json().data.anonymised, {
        storedResponses: 0,
        messageRecipients: 3,
        inboundMessages: 0,
        drafts: 0,
        tickets: 0,
        ticketComments: 0,
        ticketNotes: 0,
      });
      assert.deepEqual(erased.json().data.failed, { queuedMessages: 3 });
      for (const res of [byContact, byTo, byNewPhone]) {
        const m = await s.message(res.json().data.id);
        assert.equal(m.to, 'erased');
        assert.equal(m.contactId, null);
        assert.equal(m.status, 'failed');
        assert.deepEqual(m.error, {
          code: 'recipient_erased',
          title: 'The recipient was erased before the message was sent',
        });
        assert.deepEqual((m.template as { parameters: unknown }).parameters, []);
      }
      assert.equal((await s.message(other.json().data.id)).status, 'queued');
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 4,
        currency: 'EUR',
      });
      // The delivery worker, started now, sends only the other message.
      await s.services.messaging.startWorkers();
      await eventually(
        async () => (await s.message(other.json().data.id)).status === 'read',
        'the other message is read',
      );
      for (const res of [byContact, byTo, byNewPhone])
        assert.equal(s.provider.sandbox.cloud.sendsOf(res.json().data.id), 0);
    });

    test("the person's media go with them: their media rows, and their downloads", async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const photo = await personWrites(s, '16505557788', {
        type: 'image',
        image: { caption: 'my passport' },
      });
      const others = await personWrites(s, '16505557789', { type: 'image', image: {} });
      const media = (id: string) => call(s, 'GET', `${MEDIA}/${id}`)();
      assert.equal((await media(photo.mediaId!)).statusCode, 200, 'served before the erasure');

      const erased = await call(s, 'DELETE', `${CONTACTS}/${photo.contactId}`)();
      assert.equal(erased.statusCode, 200, erased.body);
      const rows = async (id: string) =>
        (await queryRows(s.services.storage, sql`select id from media where id = ${id}`)).length;
      assert.equal(await rows(photo.mediaId!), 0, 'her media row is deleted');
      assert.equal((await media(photo.mediaId!)).statusCode, 404, 'and no longer served');
      assert.equal(await rows(others.mediaId!), 1, "another person's medium stays");
      assert.equal((await media(others.mediaId!)).statusCode, 200);
    });
  });
}
