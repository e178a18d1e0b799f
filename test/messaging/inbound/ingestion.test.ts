/**
 * Inbound messages stored, on both backends: from the sandbox phone over the signed webhook to
 * the row (content sealed), the conversation and the tenant's `message.received`; a replay
 * stores and emits nothing; replies and reactions link to our own message; a medium gets its
 * row; one bad message of a batch does not lose the others.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../../src/audit/audit-log.ts';
import type { InboundMessageEvent } from '../../../src/partner/cloud-api/provider-webhook-events.ts';
import { messagingSetup, type MessagingSetup } from '../../helpers/messaging.ts';
import { queryRows } from '../../helpers/sql.ts';
import { backends } from '../../helpers/storage.ts';
import { startReceiver, type Receiver } from '../../webhooks/receiver.ts';
import { deadline } from '../../helpers/deadlines.ts';

const FROM = '16505551234';
/** Times an hour ago (the window they open is still open), `second` apart. */
const BASE = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
const at = (second: number) => new Date(BASE + second * 1000);

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000) {
  const giveUp = Date.now() + deadline(ms);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > giveUp) assert.fail(`timed out waiting for ${what}`);
    await delay(20);
  }
}

async function withReceiver(t: Parameters<typeof messagingSetup>[0], s: MessagingSetup) {
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  await s.services.webhooks.start();
  await s.services.webhooks.startWorker();
  const { secret } = await s.services.webhooks.addEndpoint(
    s.portalId,
    { url: receiver.url, eventTypes: ['message.received', 'message.reaction'] },
    { actor: CLI_ACTOR },
  );
  receiver.secrets.push(secret);
  return receiver;
}

const inboundRows = (s: MessagingSetup) =>
  queryRows<Record<string, unknown>>(
    s.services.storage,
    sql`select * from messages where portal_id = ${s.portalId} and direction = 'inbound'
      order by created_at, id`,
  );

const text = (
  wamid: string,
  body: string,
  second: number,
  extra: Partial<InboundMessageEvent> = {},
) =>
  ({
    wamid,
    from: FROM,
    timestamp: at(second),
    type: 'text',
    content: { type: 'text', text: { body } },
    ...extra,
  }) satisfies InboundMessageEvent;

/** Every row of every table as JSON text: what a dump of the database would show. */
async function dumpDatabase(s: MessagingSetup): Promise<string> {
  const tables = await queryRows<{ schema: string; name: string }>(
    s.services.storage,
    sql`select table_schema as schema, table_name as name from information_schema.tables
        where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')`,
  );
  const out: string[] = [];
  for (const { schema, name } of tables) {
    const rows = await queryRows<{ row: unknown }>(
      s.services.storage,
      sql.raw(`select row_to_json(t)::text as row from "${schema}"."${name}" t`),
    );
    out.push(...rows.map((r) => String(r.row)));
  }
  return out.join('\n');
}

const eventsOf = (r: Receiver, type: string) =>
  r.received.filter((x) => x.event?.type === type).map((x) => x.event!.data);

for (const backend of backends()) {
  describe(`inbound messages stored (${backend.name})`, () => {
    test('the sandbox phone writes: one sealed row, a conversation, message.received with the text; a replay adds nothing', async (t) => {
      const s = await messagingSetup(t, backend);
      const receiver = await withReceiver(t, s);
      const res = await fetch(`${s.provider.sandbox.url}/sandbox/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ phoneNumberId: s.numbers[0], from: FROM, text: 'hello' }),
      });
      assert.equal(res.status, 200);
      const { wamid } = (await res.json()) as { wamid: string };
      const [received] = await receiver.waitFor(1);
      const data = received!.event!.data;
      assert.equal(data.providerMessageId, wamid);
      assert.equal(data.direction, 'inbound');
      assert.equal(data.from, `+${FROM}`);
      assert.equal(data.phoneNumberId, s.numbers[0]);
      assert.deepEqual(data.text, { body: 'hello' });

      const [row, ...others] = await inboundRows(s);
      assert.deepEqual(others, []);
      assert.equal(row!.id, data.id);
      assert.equal(row!.contact_id, data.contactId);
      assert.ok(!JSON.stringify(row).includes('hello'), 'the text is sealed in the row');

      const [conversation] = await queryRows<Record<string, unknown>>(
        s.services.storage,
        sql`select * from conversations where portal_id = ${s.portalId}`,
      );
      assert.equal(conversation!.last_message_id, data.id);
      assert.equal(conversation!.last_direction, 'inbound');
      assert.equal(conversation!.unread_count, 1);
      assert.match(String(conversation!.id), /^cnv_/);

      // The provider's retry of the same message: nothing stored, nothing emitted.
      await s.services.messaging.webhookSink.inboundMessages(s.portalId, s.numbers[0]!, [
        text(wamid, 'hello', 0),
      ]);
      assert.equal((await inboundRows(s)).length, 1);
      const events = await queryRows(
        s.services.storage,
        sql`select id from webhook_events where portal_id = ${s.portalId} and type = 'message.received'`,
      );
      assert.equal(events.length, 1);
      const [again] = await queryRows<{ unread_count: number }>(
        s.services.storage,
        sql`select unread_count from conversations where portal_id = ${s.portalId}`,
      );
      assert.equal(again!.unread_count, 1);
    });

    test('a dump of the database shows neither a received text or caption (nor their webhook events), nor a sent text, nor template parameters; the API reads them', async (t) => {
      const s = await messagingSetup(t, backend);
      const receiver = await withReceiver(t, s);
      const phoneNumberId = s.numbers[0]!;
      await s.provider.sandbox.cloud.writeIn({ phoneNumberId, from: FROM, text: 'hello-inbound' });
      await until('stored', async () => ((await inboundRows(s)).length === 1 ? true : undefined));
      await s.services.messaging.webhookSink.inboundMessages(s.portalId, phoneNumberId, [
        {
          wamid: 'wamid.captioned',
          from: FROM,
          timestamp: at(5),
          type: 'image',
          content: {
            type: 'image',
            media: {
              providerMediaId: '1003383421387256',
              mimeType: 'image/jpeg',
              caption: 'Cap-Qx',
            },
          },
        },
      ]);
      // The receiver gets the text and the caption; the events' rows hold neither.
      const delivered = await receiver.waitFor(2);
      const data = delivered.map((r) => r.event!.data);
      assert.ok(
        data.some((d) => (d.text as { body?: string } | undefined)?.body === 'hello-inbound'),
      );
      assert.ok(
        data.some((d) => (d.media as { caption?: string } | undefined)?.caption === 'Cap-Qx'),
      );
      const events = await queryRows<Record<string, unknown>>(
        s.services.storage,
        sql`select * from webhook_events where portal_id = ${s.portalId} and type = 'message.received'`,
      );
      assert.equal(events.length, 2);
      for (const needle of ['hello-inbound', 'Cap-Qx'])
        assert.ok(!JSON.stringify(events).includes(needle), `${needle} is in a webhook event`);
      const body = {
        to: `+${FROM}`,
        from: phoneNumberId,
        type: 'text',
        text: { body: 'sent-text-x' },
      };
      const sent = await s.send(body, { 'idempotency-key': 'k-1' });
      assert.equal(sent.statusCode, 202, sent.body);
      const id = sent.json<{ data: { id: string } }>().data.id;
      assert.deepEqual(sent.json<{ data: { text: unknown } }>().data.text, { body: 'sent-text-x' });
      const template = await s.send({
        to: `+${FROM}`,
        from: phoneNumberId,
        type: 'template',
        template: { name: 'greeting', language: 'en_US', parameters: ['Param-Zed'] },
      });
      assert.equal(template.statusCode, 202, template.body);
      await until('sent', async () =>
        (await s.message(id)).status !== 'queued' ? true : undefined,
      );
      const dump = await dumpDatabase(s);
      for (const needle of ['hello-inbound', 'Cap-Qx', 'sent-text-x', 'Param-Zed'])
        assert.ok(!dump.includes(needle), `${needle} is stored in clear`);
      // Read back through the API, and replayed with its content.
      assert.deepEqual((await s.message(id)).text, { body: 'sent-text-x' });
      const tid = template.json<{ data: { id: string } }>().data.id;
      assert.deepEqual(((await s.message(tid)).template as { parameters: string[] }).parameters, [
        'Param-Zed',
      ]);
      const replay = await s.send(body, { 'idempotency-key': 'k-1' });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.deepEqual(replay.json<{ data: { text: unknown } }>().data.text, {
        body: 'sent-text-x',
      });
      // A sent message is the conversation's newest once the provider accepted it.
      const conversation = await until('the conversation moved on', async () => {
        const [c] = await queryRows<Record<string, unknown>>(
          s.services.storage,
          sql`select * from conversations where portal_id = ${s.portalId}`,
        );
        return c?.last_direction === 'outbound' ? c : undefined;
      });
      assert.ok([id, tid].includes(String(conversation.last_message_id)));
      assert.equal(conversation.unread_count, 2);
    });

    test('a reply and a reaction to our own message link to it; the reaction is message.reaction', async (t) => {
      const s = await messagingSetup(t, backend);
      const receiver = await withReceiver(t, s);
      const sink = s.services.messaging.webhookSink;
      const phoneNumberId = s.numbers[0]!;
      await sink.inboundMessages(s.portalId, phoneNumberId, [text('wamid.first', 'hi', 1)]);
      const sent = await s.send({
        to: `+${FROM}`,
        from: phoneNumberId,
        type: 'text',
        text: { body: 'How can we help?' },
      });
      assert.equal(sent.statusCode, 202, sent.body);
      const ours = sent.json<{ data: { id: string } }>().data.id;
      const wamid = await until('the wamid', async () => {
        const m = await s.message(ours);
        return typeof m.providerMessageId === 'string' ? m.providerMessageId : undefined;
      });
      await sink.inboundMessages(s.portalId, phoneNumberId, [
        text('wamid.reply', 'thanks', 5, {
          context: { providerMessageId: wamid, from: '15550001111' },
        }),
        {
          wamid: 'wamid.react',
          from: FROM,
          timestamp: at(6),
          type: 'reaction',
          content: { type: 'reaction', reaction: { providerMessageId: wamid, emoji: '❤️' } },
        },
        // A reaction to a message of the same batch.
        {
          wamid: 'wamid.react2',
          from: FROM,
          timestamp: at(7),
          type: 'reaction',
          content: { type: 'reaction', reaction: { providerMessageId: 'wamid.reply', emoji: '' } },
        },
      ]);
      const got = await receiver.waitFor(4);
      const replies = eventsOf(receiver, 'message.received');
      const reply = replies.find((d) => d.providerMessageId === 'wamid.reply')!;
      assert.deepEqual(reply.context, {
        messageId: ours,
        providerMessageId: wamid,
        forwarded: false,
        frequentlyForwarded: false,
      });
      const reactions = eventsOf(receiver, 'message.reaction');
      assert.equal(got.length, 4);
      const byEmoji = (d: Record<string, unknown>) => (d.reaction as { emoji: string }).emoji;
      assert.deepEqual(
        reactions.sort((a, b) => byEmoji(a).localeCompare(byEmoji(b))).map((d) => d.reaction),
        [
          { messageId: reply.id, providerMessageId: 'wamid.reply', emoji: '' },
          { messageId: ours, providerMessageId: wamid, emoji: '❤️' },
        ],
      );
      const rows = await inboundRows(s);
      assert.deepEqual(
        rows.map((r) => [r.provider_message_id, r.context_message_id]),
        [
          ['wamid.first', null],
          ['wamid.reply', ours],
          ['wamid.react', ours],
          ['wamid.react2', reply.id],
        ],
      );
      const [conversation] = await queryRows<Record<string, unknown>>(
        s.services.storage,
        sql`select * from conversations where portal_id = ${s.portalId}`,
      );
      // The reactions are the newest, not unread: 'hi' and 'thanks' are.
      assert.equal(conversation!.unread_count, 2);
      // The newest is our reply (sent now, after these written an hour ago) once accepted.
      assert.ok([ours, rows[3]!.id].includes(String(conversation!.last_message_id)));
    });

    test('an image gets its medium row; one bad message of a batch does not lose the others', async (t) => {
      const s = await messagingSetup(t, backend);
      const sink = s.services.messaging.webhookSink;
      const phoneNumberId = s.numbers[0]!;
      const sha = 'a'.repeat(64);
      await sink.inboundMessages(s.portalId, phoneNumberId, [
        text('wamid.one', 'one', 1),
        {
          wamid: 'wamid.image',
          from: FROM,
          timestamp: at(2),
          type: 'image',
          content: {
            type: 'image',
            media: {
              providerMediaId: '1003383421387256',
              mimeType: 'image/jpeg',
              sha256: sha,
              caption: 'my receipt',
            },
          },
        },
        // A wamid PostgreSQL cannot store (a NUL): fails the batch's statement.
        text('wamid.\u0000bad', 'lost', 3),
        text('wamid.two', 'two', 4),
      ]);
      const rows = await inboundRows(s);
      assert.deepEqual(
        rows.map((r) => r.provider_message_id),
        ['wamid.one', 'wamid.image', 'wamid.two'],
      );
      const image = rows[1]!;
      assert.match(String(image.media_id), /^med_/);
      assert.ok(!JSON.stringify(image).includes('my receipt'), 'the caption is sealed');
      const [medium] = await queryRows<Record<string, unknown>>(
        s.services.storage,
        sql`select * from media where portal_id = ${s.portalId}`,
      );
      assert.equal(medium!.id, image.media_id);
      assert.equal(medium!.message_id, image.id);
      assert.equal(medium!.provider_media_id, '1003383421387256');
      assert.equal(medium!.mime_type, 'image/jpeg');
      assert.equal(medium!.sha256, sha);
      assert.ok(s.logs.some((l) => l.includes('inbound message could not be stored')));
      assert.ok(
        !s.logs.some((l) => l.includes('lost') || l.includes('my receipt')),
        'no content in logs',
      );
    });
  });
}
