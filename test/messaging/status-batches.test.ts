/**
 * A provider webhook carrying a thousand statuses, on both backends: applied as one set, it
 * lands exactly as the same statuses applied one transaction each (the per-status path,
 * `applyOneByOne`) land on an identical portal: each message's statuses and times, the ledger's
 * captures and releases, the daily counts and the `message.status` events, in order. Sent again,
 * it changes nothing; unknown ids and another portal's message change nothing either. Also: the
 * batch is one transaction, not one per status. The webhook is answered once its statuses are
 * stored (one job), and they are applied after it, by any instance, exactly once. (Its speed is
 * measured by `npm run bench:statuses`, never asserted here.)
 */
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import type { Database } from '../../src/db/client.ts';
import { messages as messagesTable } from '../../src/db/schema/messages.ts';
import { settleLease, takeLease } from '../../src/messaging/credit/credit-leases.ts';
import { insertQueuedMessage } from '../../src/messaging/outbound/message-insert.ts';
import { newMessageId } from '../../src/messaging/outbound/message-sending.ts';
import { findMessage } from '../../src/messaging/store/messages-repository.ts';
import {
  applyOneByOne,
  createWebhookSink,
} from '../../src/messaging/provider-webhooks/status-events.ts';
import {
  createMessagingEvents,
  type MessagingEvents,
} from '../../src/messaging/events/messaging-events.ts';
import type { MessageStatusEvent } from '../../src/partner/cloud-api/provider-webhook-events.ts';
import { parseProviderWebhook } from '../../src/partner/cloud-api/provider-webhook-payload.ts';
import { loadKeyring } from '../../src/platform/keyring.ts';
import { createLogger } from '../../src/platform/logger.ts';
import type { Services } from '../../src/services.ts';
import { webhookEventSteps } from '../../src/webhooks/event-hooks.ts';
import { openEventPayload } from '../../src/webhooks/event-payload.ts';
import { STATUS_QUEUE } from '../../src/messaging/provider-webhooks/status-queue.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { openInstances, type Instance } from '../helpers/instances.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const PRICE = 10;
const PHONE_NUMBER_ID = '1234567891';
const T0 = 1_764_000_000;

/** `n` queued messages of the portal, written as sends write them, from one escrow block. */
async function queuedMessages(services: Services, portalId: number, n: number) {
  const db = services.storage.db;
  await services.messaging.start();
  const { lease } = await takeLease(db, {
    portalId,
    holder: 'test',
    price: PRICE,
    desired: PRICE * n,
    settleAll: true,
    maxAgeS: 60,
  });
  assert.ok(lease, 'the credit covers the messages');
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = newMessageId();
    const outcome = await insertQueuedMessage(
      db,
      {
        id,
        portalId,
        waId: '+16505550101',
        contactId: null,
        phoneNumberId: PHONE_NUMBER_ID,
        type: 'template',
        templateName: 'hello',
        templateLanguage: 'en_US',
        templateCategory: 'MARKETING',
        content: null,
        priceMinor: PRICE,
        currency: 'EUR',
      },
      { leaseId: lease.id, actor: 'api' },
    );
    assert.equal(outcome.kind, 'queued');
    ids.push(id);
  }
  assert.equal(await settleLease(db, portalId, lease.id), true);
  return ids;
}

/**
 * `n` queued messages of the portal with their reservations, written in one statement (the
 * account's `reserved` raised by their prices, a `reserve` row each): thousands in a moment.
 */
async function seededMessages(services: Services, portalId: number, n: number) {
  const tag = randomBytes(4).toString('hex');
  const rows = await queryRows<{ id: string }>(
    services.storage,
    sql`with inserted as (
      insert into messages (id, portal_id, direction, wa_id, phone_number_id, type, template_name,
        template_language, template_category, status, queued_at, price_minor, currency)
      select 'msg_' || ${tag} || lpad(g::text, 6, '0'), ${portalId}, 'outbound', '+16505550101',
        ${PHONE_NUMBER_ID}, 'template', 'hello', 'en_US', 'UTILITY', 'queued', now(), ${PRICE},
        'EUR'
      from generate_series(1, ${n}) g
      returning id, price_minor),
    reserved as (
      insert into credit_transactions (id, portal_id, kind, amount, currency, message_id, actor)
      select 'ctx_' || id, ${portalId}, 'reserve', price_minor, 'EUR', id, 'api' from inserted),
    account as (
      update credit_accounts set reserved = reserved + (select sum(price_minor) from inserted)
      where portal_id = ${portalId})
    select id from inserted order by id`,
  );
  return rows.map((r) => r.id);
}

type Item = Record<string, unknown>;

/** A status item as the Cloud API sends it; `callback` false leaves out the callback data. */
function item(
  id: string,
  status: string,
  second: number,
  opts: { callback?: boolean; error?: number } = {},
): Item {
  return {
    id: `wamid.${id}`,
    status,
    timestamp: String(T0 + second),
    recipient_id: '16505550101',
    ...(opts.callback !== false && { biz_opaque_callback_data: id }),
    ...(opts.error !== undefined && {
      errors: [{ code: opts.error, title: 'Message undeliverable', message: 'x' }],
    }),
  };
}

/**
 * The statuses of the `i`th message, in the order sent: in order, backwards, failed from
 * queued, failed from sent, duplicates, and matched by wamid alone after a first status.
 */
function statusesOf(id: string, i: number): Item[] {
  switch (i % 6) {
    case 0:
      return [item(id, 'sent', 1), item(id, 'delivered', 2), item(id, 'read', 3)];
    case 1:
      return [item(id, 'read', 5), item(id, 'delivered', 4), item(id, 'sent', 3)];
    case 2:
      return [item(id, 'failed', 2, { error: 131026 }), item(id, 'delivered', 3)];
    case 3:
      return [item(id, 'sent', 1), item(id, 'failed', 4, { error: 131049 }), item(id, 'read', 5)];
    case 4:
      return [
        item(id, 'sent', 1),
        item(id, 'sent', 1),
        item(id, 'delivered', 2),
        item(id, 'delivered', 2),
      ];
    default:
      return [
        item(id, 'sent', 1),
        item(id, 'delivered', 2, { callback: false }),
        item(id, 'read', 3, { callback: false }),
      ];
  }
}

/** The messages' statuses interleaved (each message's in its order), then the `extra` ones. */
function batchOf(ids: readonly string[], extra: Item[] = []): Item[] {
  const lists = ids.map((id, i) => statusesOf(id, i));
  const out: Item[] = [];
  for (let round = 0; lists.some((l) => l.length > round); round++)
    for (const l of lists) if (l[round]) out.push(l[round]!);
  return [...out, ...extra];
}

function webhookBody(wabaId: string, statuses: Item[]): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: wabaId,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550111234', phone_number_id: PHONE_NUMBER_ID },
              statuses,
            },
          },
        ],
      },
    ],
  });
}

/** The events of a body as the receiver parses them. */
function eventsOf(body: string): MessageStatusEvent[] {
  const parsed = parseProviderWebhook(JSON.parse(body));
  assert.ok(parsed.ok);
  const [change] = parsed.changes;
  assert.ok(change?.kind === 'statuses');
  return change.events;
}

/** An emitter of messaging's status events with the webhooks' listeners of services.ts. */
function statusSteps(services: Services): MessagingEvents {
  const hooks = webhookEventSteps(services.webhooks);
  const events = createMessagingEvents();
  events.on('message.status_changed', (e) => hooks.messageStatus(e.tx, e.portalId, e.change));
  events.on('message.statuses_changed', (e) => hooks.messageStatuses(e.tx, e.portalId, e.changes));
  return events;
}

/**
 * What the statuses left in a portal, its message ids replaced by their index in `ids`: each
 * message's status columns, the ledger's rows, the daily counts, the credit, the
 * `message.status` events in the log's order.
 */
async function landed(services: Services, portalId: number, ids: readonly string[]) {
  const db = services.storage.db;
  const index = new Map(ids.map((id, i) => [id, i]));
  const name = (s: unknown) =>
    typeof s === 'string'
      ? s.replace(/msg_[0-9A-Za-z]+/g, (id) => `#${index.get(id) ?? 'other'}`)
      : s;
  const byId = new Map(
    (await db.select().from(messagesTable).where(eq(messagesTable.portalId, portalId))).map((m) => [
      m.id,
      m,
    ]),
  );
  const messages = ids.map((id) => {
    const m = byId.get(id)!;
    return {
      status: m.status,
      wamid: name(m.providerMessageId),
      times: [m.sentAt, m.deliveredAt, m.readAt, m.failedAt].map((t) => t?.toISOString() ?? null),
      error: [m.errorCode, m.errorTitle],
    };
  });
  const ledger = (
    await queryRows<{ kind: string; amount: number; message_id: string | null; actor: string }>(
      services.storage,
      sql`select kind, amount, message_id, actor from credit_transactions
          where portal_id = ${portalId}`,
    )
  )
    .map((r) => `${r.kind} ${r.amount} ${String(name(r.message_id))} ${r.actor}`)
    .sort();
  const counts = await queryRows(
    services.storage,
    sql`select day::text, sum(sent)::int as sent, sum(delivered)::int as delivered,
          sum(read)::int as read, sum(failed)::int as failed
        from message_daily_counts where portal_id = ${portalId} group by day order by day`,
  );
  // The log's rows in its order, read from the table: the log's API serves only the events
  // below the server's horizon, which another test's open transaction may hold back.
  const rows = await queryRows<{ id: string; payload: Record<string, unknown> }>(
    services.storage,
    sql`select id, payload from webhook_events
        where portal_id = ${portalId} and type = 'message.status' order by writer_xid, position`,
  );
  const keyring = loadKeyring(services.config);
  const events = rows.map(
    (r) =>
      JSON.parse(
        JSON.stringify(
          openEventPayload(keyring, portalId, r.id, r.payload).data,
          (_k, v: unknown) => name(v),
        ),
      ) as unknown,
  );
  const credit = await services.messaging.credit({ portalId });
  return { messages, ledger, counts, events, credit };
}

async function post(
  app: Awaited<ReturnType<typeof buildTestApp>>['app'],
  appSecret: string,
  body: string,
) {
  return app.inject({
    method: 'POST',
    url: '/api/provider/webhooks',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', appSecret).update(body).digest('hex')}`,
    },
    payload: body,
  });
}

/** The database, counting the transactions begun on it. */
function countingTransactions(db: Database): { db: Database; count: () => number } {
  let n = 0;
  const counted = new Proxy(db, {
    get(target, key, receiver) {
      if (key === 'transaction') {
        return (...args: Parameters<Database['transaction']>) => {
          n++;
          return target.transaction(...args);
        };
      }
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { db: counted, count: () => n };
}

for (const backend of backends()) {
  describe(`status webhooks in batches (${backend.name})`, () => {
    test("a webhook of 1,000+ statuses lands as the per-status path does; sent again it changes nothing; unknown and another portal's ids change nothing", async (t) => {
      const provider = await startTestProvider(t);
      const { app, services } = await buildTestApp(t, backend, provider.env);
      const [a, b, c] = [
        await createPortal(services),
        await createPortal(services),
        await createPortal(services),
      ];
      const [aId, bId, cId] = [
        await services.accounts.portalIdFor(a.portalCode),
        await services.accounts.portalIdFor(b.portalCode),
        await services.accounts.portalIdFor(c.portalCode),
      ];
      await connectPortal(services, provider, { portalId: aId, userId: a.userId });
      for (const portalId of [aId, bId, cId])
        await services.messaging.addCredit({
          portalId,
          amount: 100_000,
          note: 'n',
          actor: CLI_ACTOR,
        });
      const n = 340;
      const ofA = await queuedMessages(services, aId, n);
      const ofB = await queuedMessages(services, bId, n);
      const [ofC] = await queuedMessages(services, cId, 1);
      const cBefore = await landed(services, cId, [ofC!]);

      // Portal A: one signed webhook, with an unknown id, an unknown wamid and C's message.
      const extra = [
        item('msg_unknown0000000000000000', 'sent', 1),
        { ...item('nothing', 'delivered', 2, { callback: false }) },
        item(ofC!, 'sent', 1),
      ];
      const wabaId = (await services.partner.wabaIdsOf(aId))[0]!;
      const body = webhookBody(wabaId, batchOf(ofA, extra));
      assert.ok(eventsOf(body).length >= 1000, 'a thousand statuses or more');
      const res = await post(app, provider.appSecret, body);
      assert.equal(res.statusCode, 200, res.body);
      await services.messaging.statusesApplied();

      // Portal B: the same statuses, one transaction each (the per-status path).
      const events = eventsOf(webhookBody(wabaId, batchOf(ofB)));
      assert.equal(await applyOneByOne(services.storage.db, bId, events, statusSteps(services)), 0);

      const batch = await landed(services, aId, ofA);
      const oneByOne = await landed(services, bId, ofB);
      assert.deepEqual(batch.messages, oneByOne.messages);
      assert.deepEqual(batch.ledger, oneByOne.ledger);
      assert.deepEqual(batch.counts, oneByOne.counts);
      assert.deepEqual(batch.events, oneByOne.events);
      assert.deepEqual(batch.credit, oneByOne.credit);
      // What the per-status path gives, spelled out for a few: sent → delivered → read; a
      // capture for each message sent, a release for each failed from queued.
      assert.deepEqual(batch.messages[0], {
        status: 'read',
        wamid: 'wamid.#0',
        times: [...[1, 2, 3].map((s) => new Date((T0 + s) * 1000).toISOString()), null],
        error: [null, null],
      });
      assert.equal(batch.messages[2]!.status, 'failed');
      assert.equal(batch.messages[3]!.status, 'failed');
      assert.equal(batch.messages[5]!.status, 'read');
      const kinds = (kind: string) => batch.ledger.filter((l) => l.startsWith(`${kind} `)).length;
      assert.equal(kinds('release'), Math.ceil((n - 2) / 6));
      assert.equal(kinds('capture'), n - Math.ceil((n - 2) / 6));
      // Changes per message of each kind of `statusesOf`: one event each, none for a duplicate.
      const changes = [3, 1, 1, 2, 2, 3];
      assert.equal(
        batch.events.length,
        ofA.reduce((sum, _id, i) => sum + changes[i % 6]!, 0),
        'one event per change',
      );
      assert.deepEqual(
        batch.events.filter((e) => (e as { messageId: string }).messageId === '#0'),
        ['sent', 'delivered', 'read'].map((status, s) => ({
          messageId: '#0',
          providerMessageId: 'wamid.#0',
          status,
          occurredAt: new Date((T0 + s + 1) * 1000).toISOString(),
        })),
      );

      // Sent again (as the provider does when an answer is late): nothing changes.
      const again = await post(app, provider.appSecret, body);
      assert.equal(again.statusCode, 200, again.body);
      await services.messaging.statusesApplied();
      assert.deepEqual(await landed(services, aId, ofA), batch);
      // Another portal's message named in A's webhook: untouched, no ledger row, no event.
      assert.deepEqual(await landed(services, cId, [ofC!]), cBefore);
      assert.equal(cBefore.messages[0]!.status, 'queued');
    });

    test('a batch of statuses is applied in one transaction, not one per status', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.messaging.addCredit({ portalId, amount: 10_000, note: 'n', actor: CLI_ACTOR });
      const ids = await queuedMessages(services, portalId, 60);
      const counting = countingTransactions(services.storage.db);
      const sink = createWebhookSink({
        db: counting.db,
        logger: createLogger('silent'),
        onTemplateChange: () => undefined,
        inbound: { store: async () => 0 },
        events: statusSteps(services),
      });
      const events = eventsOf(webhookBody('1', batchOf(ids)));
      assert.equal(events.length, 180);
      await sink.messageStatuses(portalId, PHONE_NUMBER_ID, events);
      // One for the statuses; at most one more posting the captures and releases.
      assert.ok(counting.count() <= 2, `${counting.count()} transactions for 180 statuses`);
      const read = await findMessage(services.storage.db, portalId, ids[0]!);
      assert.equal(read!.status, 'read');
    });

    test('the webhook is answered once its statuses are stored as one job (no phone in it); another instance applies the job, exactly once, as the per-status path would', async (t) => {
      const provider = await startTestProvider(t);
      const instances: Instance[] = [];
      // Registered first, so it runs before openInstances closes the storage.
      t.after(async () => {
        for (const i of instances) await i.services.stop();
      });
      instances.push(
        ...(await openInstances(t, backend, 2, {
          ...provider.env,
          // One key for both, as instances of one deployment share it (the events' data).
          TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        })),
      );
      const [a, b] = instances as [Instance, Instance];
      const [p, q] = [await createPortal(a.services), await createPortal(a.services)];
      const [pId, qId] = [
        await a.services.accounts.portalIdFor(p.portalCode),
        await a.services.accounts.portalIdFor(q.portalCode),
      ];
      await connectPortal(a.services, provider, { portalId: pId, userId: p.userId });
      for (const portalId of [pId, qId])
        await a.services.messaging.addCredit({
          portalId,
          amount: 10_000,
          note: 'n',
          actor: CLI_ACTOR,
        });
      const ofP = await queuedMessages(a.services, pId, 24);
      const ofQ = await queuedMessages(a.services, qId, 24);
      // The sends are not this test's subject: no delivery worker takes these messages.
      await queryRows(a.services.storage, sql`update messages set delivery_due_at = null`);
      const jobs = () =>
        queryRows<{ state: string; data: unknown }>(
          a.services.storage,
          sql`select state, data from pgboss.job where name = ${STATUS_QUEUE}`,
        );
      const before = await landed(a.services, pId, ofP);

      // Instance A stops applying (as an instance that stops or dies right after answering).
      await a.services.messaging.stop();
      const wabaId = (await a.services.partner.wabaIdsOf(pId))[0]!;
      const body = webhookBody(wabaId, batchOf(ofP));
      const res = await post(a.app, provider.appSecret, body);
      assert.equal(res.statusCode, 200, res.body);
      await a.services.messaging.statusesApplied();
      assert.deepEqual(await landed(a.services, pId, ofP), before, 'answered, not yet applied');
      const stored = await jobs();
      assert.equal(stored.length, 1, 'one job for the webhook');
      assert.equal(stored[0]!.state, 'created');
      assert.ok(!JSON.stringify(stored[0]!.data).includes('16505550101'), 'no phone in the job');

      // Instance B's sweep takes it at once on start.
      await b.services.messaging.start();
      await b.services.messaging.startWorkers();
      await b.services.messaging.statusesApplied();
      assert.deepEqual(await jobs(), [], 'the job is gone with its statuses applied');
      const events = eventsOf(body).map((e) =>
        e.bizOpaqueCallbackData === undefined
          ? e
          : { ...e, bizOpaqueCallbackData: ofQ[ofP.indexOf(e.bizOpaqueCallbackData)]! },
      );
      for (const e of events)
        e.wamid = e.wamid.replace(/msg_[0-9A-Za-z]+/, (id) => ofQ[ofP.indexOf(id)]!);
      assert.equal(
        await applyOneByOne(a.services.storage.db, qId, events, statusSteps(a.services)),
        0,
      );
      const applied = await landed(a.services, pId, ofP);
      assert.deepEqual(applied, await landed(a.services, qId, ofQ));
      assert.equal(applied.messages[0]!.status, 'read');
    });
    test('a webhook of 10,000 statuses as the Cloud API sends them (over 1 MiB) is answered, then applied whole', async (t) => {
      const provider = await startTestProvider(t);
      const [a] = (await openInstances(t, backend, 1, {
        ...provider.env,
        TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      })) as [Instance];
      t.after(() => a.services.stop());
      const p = await createPortal(a.services);
      const portalId = await a.services.accounts.portalIdFor(p.portalCode);
      await connectPortal(a.services, provider, { portalId, userId: p.userId });
      await a.services.messaging.addCredit({
        portalId,
        amount: 1_000_000,
        note: 'n',
        actor: CLI_ACTOR,
      });
      await a.services.messaging.start();
      await a.services.messaging.startWorkers();
      const ids = await seededMessages(a.services, portalId, 5000);
      // As Meta sends them: the conversation and the pricing on each (some 350 bytes a status).
      const full = (id: string, status: string, second: number): Item => ({
        ...item(id, status, second),
        conversation: {
          id: `c${id.padEnd(31, '0')}`,
          ...(status === 'sent' && { expiration_timestamp: String(T0 + 86_400) }),
          origin: { type: 'utility' },
        },
        pricing: { billable: true, pricing_model: 'PMP', category: 'utility', type: 'regular' },
      });
      const statuses = [
        ...ids.map((id) => full(id, 'sent', 1)),
        ...ids.map((id) => full(id, 'delivered', 2)),
      ];
      const wabaId = (await a.services.partner.wabaIdsOf(portalId))[0]!;
      const body = webhookBody(wabaId, statuses);
      assert.equal(statuses.length, 10_000);
      assert.ok(Buffer.byteLength(body) > 1024 * 1024, `${Buffer.byteLength(body)} bytes`);
      const res = await post(a.app, provider.appSecret, body);
      assert.equal(res.statusCode, 200, res.body);
      await a.services.messaging.statusesApplied();
      // Each settled at the category billed (the price table's, not the reserved price).
      const [counts] = await queryRows<{ n: number; unsettled: number; charged: number }>(
        a.services.storage,
        sql`select count(*) filter (where status = 'delivered')::int as n,
              count(*) filter (where charged_minor is null)::int as unsettled,
              coalesce(sum(charged_minor), 0)::int as charged
            from messages where portal_id = ${portalId}`,
      );
      assert.equal(counts!.n, 5000);
      assert.equal(counts!.unsettled, 0);
      const [events] = await queryRows<{ n: number }>(
        a.services.storage,
        sql`select count(*)::int as n from webhook_events
            where portal_id = ${portalId} and type = 'message.status'`,
      );
      assert.equal(events!.n, 10_000);
      const credit = await a.services.messaging.credit({ portalId });
      assert.deepEqual(
        { balance: credit.balance, reserved: credit.reserved },
        { balance: 1_000_000 - counts!.charged, reserved: 0 },
      );
    });

    test("the webhooks waiting are applied together, each portal's statuses as one set in one transaction, as the per-status path would", async (t) => {
      const provider = await startTestProvider(t);
      const instances: Instance[] = [];
      t.after(async () => {
        for (const i of instances) await i.services.stop();
      });
      instances.push(
        ...(await openInstances(t, backend, 2, {
          ...provider.env,
          TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        })),
      );
      const [a, b] = instances as [Instance, Instance];
      const [p, q] = [await createPortal(a.services), await createPortal(a.services)];
      const [pId, qId] = [
        await a.services.accounts.portalIdFor(p.portalCode),
        await a.services.accounts.portalIdFor(q.portalCode),
      ];
      await connectPortal(a.services, provider, { portalId: pId, userId: p.userId });
      for (const portalId of [pId, qId])
        await a.services.messaging.addCredit({
          portalId,
          amount: 10_000,
          note: 'n',
          actor: CLI_ACTOR,
        });
      await a.services.messaging.start();
      const ofP = await seededMessages(a.services, pId, 12);
      const ofQ = await seededMessages(a.services, qId, 12);
      await a.services.messaging.stop();
      // One status a webhook, as the sandbox and many providers send them: a job each, waiting.
      const wabaId = (await a.services.partner.wabaIdsOf(pId))[0]!;
      const all = batchOf(ofP);
      for (const status of all) {
        const res = await post(a.app, provider.appSecret, webhookBody(wabaId, [status]));
        assert.equal(res.statusCode, 200, res.body);
      }
      const [waiting] = await queryRows<{ n: number }>(
        a.services.storage,
        sql`select count(*)::int as n from pgboss.job where name = ${STATUS_QUEUE}`,
      );
      assert.equal(waiting!.n, all.length);

      await b.services.messaging.start();
      await b.services.messaging.startWorkers();
      await b.services.messaging.statusesApplied();
      const [left] = await queryRows<{ n: number }>(
        a.services.storage,
        sql`select count(*)::int as n from pgboss.job where name = ${STATUS_QUEUE}`,
      );
      assert.equal(left!.n, 0, 'every job gone with its statuses applied');
      // The events of one transaction share its id: one set, not one per webhook.
      const [sets] = await queryRows<{ n: number }>(
        a.services.storage,
        sql`select count(distinct writer_xid)::int as n from webhook_events
            where portal_id = ${pId} and type = 'message.status'`,
      );
      assert.equal(sets!.n, 1);
      const events = eventsOf(webhookBody(wabaId, all)).map((e) =>
        e.bizOpaqueCallbackData === undefined
          ? e
          : { ...e, bizOpaqueCallbackData: ofQ[ofP.indexOf(e.bizOpaqueCallbackData)]! },
      );
      for (const e of events)
        e.wamid = e.wamid.replace(/msg_[0-9A-Za-z]+/, (id) => ofQ[ofP.indexOf(id)]!);
      assert.equal(
        await applyOneByOne(a.services.storage.db, qId, events, statusSteps(a.services)),
        0,
      );
      const applied = await landed(a.services, pId, ofP);
      assert.deepEqual(applied, await landed(a.services, qId, ofQ));
      assert.equal(applied.messages[0]!.status, 'read');
    });
  });
}
