/**
 * The provider's events applied to messages (messaging's webhook sink) and the revocation
 * step, on both backends: statuses never go backwards, duplicates change nothing, `sent`
 * captures and `failed` releases the credit, inbound messages open the window, a revoked
 * connection fails the queued messages and releases their credit.
 *
 * The messages are written as a send writes them (row, reservation from an escrow block and job
 * in one statement; the block then settled, as its holder does); the send itself is covered end
 * to end in send.test.ts.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { settleLease, takeLease } from '../../src/messaging/credit/credit-leases.ts';
import { insertQueuedMessage } from '../../src/messaging/outbound/message-insert.ts';
import { newMessageId } from '../../src/messaging/outbound/message-sending.ts';
import {
  findMessage,
  recordProviderMessageId,
} from '../../src/messaging/store/messages-repository.ts';
import type { InboundMessageEvent } from '../../src/partner/cloud-api/provider-webhook-events.ts';
import type { Services } from '../../src/services.ts';
import { createWebhookSink } from '../../src/messaging/provider-webhooks/status-events.ts';
import { createMessagingEvents } from '../../src/messaging/events/messaging-events.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { backends } from '../helpers/storage.ts';

async function queuedMessage(services: Services, portalId: number, wamid: string | null = null) {
  const db = services.storage.db;
  await services.messaging.start();
  const { lease } = await takeLease(db, {
    portalId,
    holder: 'test',
    price: 10,
    desired: 10,
    settleAll: true,
    maxAgeS: 60,
  });
  assert.ok(lease, 'the credit covers the message');
  const id = newMessageId();
  const outcome = await insertQueuedMessage(
    db,
    {
      id,
      portalId,
      waId: '+16505550101',
      contactId: null,
      phoneNumberId: '1234567891',
      type: 'template',
      templateName: 'hello',
      templateLanguage: 'en_US',
      templateCategory: 'MARKETING',
      content: null,
      priceMinor: 10,
      currency: 'EUR',
    },
    { leaseId: lease.id, actor: 'api' },
  );
  assert.equal(outcome.kind, 'queued');
  assert.equal(await settleLease(db, portalId, lease.id), true);
  if (wamid) await recordProviderMessageId(db, id, wamid);
  return id;
}

const at = (s: number) => new Date(Date.UTC(2026, 10, 23, 12, 0, s));
const status = (
  id: string,
  s: 'sent' | 'delivered' | 'read' | 'failed',
  second: number,
  errors: { code: number; title: string }[] = [],
) => ({
  wamid: `wamid.${id}`,
  status: s,
  timestamp: at(second),
  recipientId: '16505550101',
  bizOpaqueCallbackData: id,
  errors,
});

/** The event as a provider sends it without `biz_opaque_callback_data`: matched by wamid. */
function withoutCallbackData<T extends { bizOpaqueCallbackData?: string }>(event: T) {
  const { bizOpaqueCallbackData: _omitted, ...rest } = event;
  return rest;
}

/** POST a signed provider notification of `statuses` for the portal's first WABA. */
async function postStatuses(
  app: Awaited<ReturnType<typeof buildTestApp>>['app'],
  appSecret: string,
  wabaId: string,
  value: Record<string, unknown>,
) {
  const body = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: wabaId,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550111234', phone_number_id: '1234567891' },
              ...value,
            },
          },
        ],
      },
    ],
  });
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

for (const backend of backends()) {
  describe(`messaging webhook events (${backend.name})`, () => {
    test('monotonic statuses, duplicates, capture and release', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.messaging.addCredit({ portalId, amount: 100, note: 'n', actor: CLI_ACTOR });
      const sink = services.messaging.webhookSink;
      const a = await queuedMessage(services, portalId);
      const b = await queuedMessage(services, portalId);
      assert.deepEqual(await services.messaging.credit({ portalId }), {
        balance: 100,
        reserved: 20,
        currency: 'EUR',
      });

      // `read` first: it implies sent and delivered.
      await sink.messageStatuses(portalId, '1234567891', [status(a, 'read', 30)]);
      let row = await services.messaging.getMessage({ portalId }, a);
      assert.equal(row.status, 'read');
      assert.equal(row.providerMessageId, `wamid.${a}`);
      assert.deepEqual(
        [row.sentAt, row.deliveredAt, row.readAt],
        [at(30).toISOString(), at(30).toISOString(), at(30).toISOString()],
      );
      // A late `delivered`, a duplicate `read`, a `sent` and a `failed` change nothing.
      await sink.messageStatuses(portalId, '1234567891', [
        status(a, 'delivered', 20),
        status(a, 'read', 40),
        status(a, 'sent', 10),
        status(a, 'failed', 50, [{ code: 131026, title: 'Message undeliverable' }]),
      ]);
      assert.deepEqual(await services.messaging.getMessage({ portalId }, a), row);
      assert.deepEqual(await services.messaging.credit({ portalId }), {
        balance: 90,
        reserved: 10,
        currency: 'EUR',
      });

      // By wamid alone (no biz_opaque_callback_data) once the wamid is known.
      await sink.messageStatuses(portalId, 'x', [
        {
          ...status(b, 'failed', 5, [{ code: 131026, title: 'Message undeliverable' }]),
          bizOpaqueCallbackData: b,
        },
      ]);
      row = await services.messaging.getMessage({ portalId }, b);
      assert.equal(row.status, 'failed');
      // The provider's code is the integer it sent, as in the `message.status` webhook.
      assert.deepEqual(row.error, { code: 131026, title: 'Message undeliverable' });
      await sink.messageStatuses(portalId, 'x', [withoutCallbackData(status(b, 'delivered', 9))]);
      assert.equal((await services.messaging.getMessage({ portalId }, b)).status, 'failed');
      assert.deepEqual(await services.messaging.credit({ portalId }), {
        balance: 90,
        reserved: 0,
        currency: 'EUR',
      });

      const kinds = (
        await services.messaging.listCreditTransactions({ portalId }, { limit: 100 })
      ).items
        .map((i) => `${i.kind}:${i.messageId ?? ''}`)
        .sort();
      assert.deepEqual(
        kinds,
        [`capture:${a}`, `release:${b}`, `reserve:${a}`, `reserve:${b}`, 'topup:'].sort(),
      );

      // Another portal's events never touch this portal's messages.
      const other = await createPortal(services);
      const otherId = await services.accounts.portalIdFor(other.portalCode);
      const c = await queuedMessage(services, portalId);
      await sink.messageStatuses(otherId, 'x', [status(c, 'sent', 1)]);
      assert.equal((await findMessage(services.storage.db, portalId, c))!.status, 'queued');
    });

    test("a status naming another portal's message by its callback id: no capture in this portal's ledger, no event", async (t) => {
      const { services } = await buildTestApp(t, backend);
      const [a, b] = await Promise.all([createPortal(services), createPortal(services)]);
      const aId = await services.accounts.portalIdFor(a.portalCode);
      const bId = await services.accounts.portalIdFor(b.portalCode);
      for (const portalId of [aId, bId])
        await services.messaging.addCredit({ portalId, amount: 100, note: 'n', actor: CLI_ACTOR });
      const ofB = await queuedMessage(services, bId);
      const events: { portalId: number; messageId: string }[] = [];
      // The sink as services.ts composes it, its status events recorded.
      const recorded = createMessagingEvents();
      recorded.on(
        'message.status_changed',
        ({ portalId, change }) => void events.push({ portalId, ...change }),
      );
      recorded.on(
        'message.statuses_changed',
        ({ portalId, changes }) => void events.push(...changes.map((e) => ({ portalId, ...e }))),
      );
      const sink = createWebhookSink({
        db: services.storage.db,
        logger: createLogger('silent'),
        onTemplateChange: () => undefined,
        inbound: { store: async () => 0 },
        events: recorded,
      });
      // Portal A's webhook carries B's message id as its biz_opaque_callback_data.
      await sink.messageStatuses(aId, '1234567891', [status(ofB, 'sent', 1)]);
      assert.deepEqual(events, []);
      const ledgerOfA = (
        await services.messaging.listCreditTransactions(
          { portalId: aId },
          {
            limit: 100,
          },
        )
      ).items.map((i) => i.kind);
      assert.deepEqual(ledgerOfA, ['topup']);
      assert.deepEqual(await services.messaging.credit({ portalId: aId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });
      assert.equal((await findMessage(services.storage.db, bId, ofB))!.status, 'queued');
    });

    test("a bad item of a provider batch is skipped and logged by id; the rest apply; another portal's message is untouched", async (t) => {
      const provider = await startTestProvider(t);
      const { app, services, logs } = await buildTestApp(t, backend, provider.env);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await connectPortal(services, provider, { portalId, userId: portal.userId });
      await services.messaging.addCredit({ portalId, amount: 100, note: 'n', actor: CLI_ACTOR });
      const other = await createPortal(services);
      const otherId = await services.accounts.portalIdFor(other.portalCode);
      await services.messaging.addCredit({
        portalId: otherId,
        amount: 100,
        note: 'n',
        actor: CLI_ACTOR,
      });
      const [a, b, c] = [
        await queuedMessage(services, portalId),
        await queuedMessage(services, portalId),
        await queuedMessage(services, otherId),
      ];
      const wabaId = (await services.partner.wabaIdsOf(portalId))[0]!;
      const item = (id: string, timestamp: unknown) => ({
        id: `wamid.${id}`,
        status: 'sent',
        timestamp,
        recipient_id: '16505550101',
        biz_opaque_callback_data: id,
      });
      const res = await postStatuses(app, provider.appSecret, wabaId, {
        statuses: [
          item(a, 1e20),
          item(a, '999999999999'),
          item(b, '1764000000'),
          item(c, '1764000000'),
        ],
      });
      assert.equal(res.statusCode, 200, res.body);
      await services.messaging.statusesApplied();
      assert.equal((await services.messaging.getMessage({ portalId }, a)).status, 'queued');
      const sent = await services.messaging.getMessage({ portalId }, b);
      assert.equal(sent.status, 'sent');
      assert.equal(sent.sentAt, new Date(1764000000 * 1000).toISOString());
      // The callback data names another portal's message: nothing changes there.
      const untouched = await services.messaging.getMessage({ portalId: otherId }, c);
      assert.equal(untouched.status, 'queued');
      assert.equal(untouched.providerMessageId, null);
      assert.deepEqual(await services.messaging.credit({ portalId: otherId }), {
        balance: 100,
        reserved: 10,
        currency: 'EUR',
      });
      const line = logs.find((l) => l.includes('provider webhook handled'));
      assert.ok(line, 'the batch is logged');
      assert.deepEqual(JSON.parse(line).skippedIds, [`wamid.${a}`, `wamid.${a}`]);
      assert.ok(!logs.some((l) => l.includes('16505550101')), 'no phone in the logs');
    });

    test('inbound messages record lastInboundAt, creating unknown senders', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const inbound = (second: number): InboundMessageEvent => ({
        wamid: `wamid.in${second}`,
        from: '16505550199',
        timestamp: at(second),
        type: 'text',
        content: { type: 'text', text: { body: 'hi' } },
      });
      await services.messaging.webhookSink.inboundMessages(portalId, 'x', [inbound(20)]);
      const page = await services.contacts.listContacts({ portalId }, { limit: 10 });
      assert.equal(page.items.length, 1);
      const contact = page.items[0]!;
      assert.equal(contact.phone, '+16505550199');
      assert.equal(contact.consent.whatsapp, 'unknown');
      assert.equal(contact.consent.source, 'provider');
      assert.equal(contact.lastInboundAt, at(20).toISOString());
      // An older or repeated one leaves it; a newer one moves it.
      await services.messaging.webhookSink.inboundMessages(portalId, 'x', [
        inbound(10),
        inbound(20),
      ]);
      assert.equal(
        (await services.contacts.getContact({ portalId }, contact.id)).lastInboundAt,
        at(20).toISOString(),
      );
      await services.messaging.webhookSink.inboundMessages(portalId, 'x', [inbound(30)]);
      assert.equal(
        (await services.contacts.getContact({ portalId }, contact.id)).lastInboundAt,
        at(30).toISOString(),
      );
    });

    test('an inbound message from a number the phone library calls invalid is kept, with the raw wa_id', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.messaging.webhookSink.inboundMessages(portalId, 'x', [
        {
          wamid: 'wamid.odd',
          from: '999123',
          timestamp: at(20),
          type: 'text',
          content: { type: 'text', text: { body: 'hi' } },
        },
      ]);
      const page = await services.contacts.listContacts({ portalId }, { limit: 10 });
      assert.deepEqual(
        page.items.map((c) => [c.phone, c.lastInboundAt]),
        [['+999123', at(20).toISOString()]],
      );
    });

    test('revocation fails the queued messages not yet accepted and releases their credit', async (t) => {
      const provider = await startTestProvider(t);
      const { services } = await buildTestApp(t, backend, provider.env);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await connectPortal(services, provider, { portalId, userId: portal.userId });
      await services.messaging.addCredit({ portalId, amount: 100, note: 'n', actor: CLI_ACTOR });
      const waiting = await queuedMessage(services, portalId);
      const accepted = await queuedMessage(services, portalId, 'wamid.accepted');
      await services.partner.revokeConnection(portalId, {
        actor: CLI_ACTOR,
        reason: 'disconnect',
      });
      const failed = await services.messaging.getMessage({ portalId }, waiting);
      assert.equal(failed.status, 'failed');
      assert.deepEqual(failed.error, {
        code: 'not_connected',
        title: 'The provider connection was revoked',
      });
      assert.equal((await services.messaging.getMessage({ portalId }, accepted)).status, 'queued');
      assert.deepEqual(await services.messaging.credit({ portalId }), {
        balance: 100,
        reserved: 10,
        currency: 'EUR',
      });
      // A second revocation path changes nothing more.
      await services.partner.revokeConnection(portalId, {
        actor: CLI_ACTOR,
        reason: 'deauthorize',
      });
      const releases = (
        await services.messaging.listCreditTransactions({ portalId }, { limit: 100 })
      ).items.filter((i) => i.kind === 'release');
      assert.equal(releases.length, 1);
    });
  });
}
