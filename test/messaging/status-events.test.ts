/**
 * The provider's events applied to messages (messaging's webhook sink) and the revocation
 * step, on both backends: statuses never go backwards, duplicates change nothing, `sent`
 * captures and `failed` releases the credit, inbound messages open the window, a revoked
 * connection fails the queued messages and releases their credit.
 *
 * The messages are written as a send writes them (row + reservation in one transaction); the
 * send itself is covered end to end in send.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { reserve } from '../../src/messaging/credit/credit-ledger.ts';
import { newMessageId } from '../../src/messaging/messages/message-sending.ts';
import { insertMessage, findMessage } from '../../src/messaging/messages/messages-repository.ts';
import type { Services } from '../../src/services.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { backends } from '../helpers/storage.ts';

async function queuedMessage(services: Services, portalId: number, wamid: string | null = null) {
  const id = newMessageId();
  await services.storage.db.transaction(async (tx) => {
    await insertMessage(tx, {
      id,
      portalId,
      to: '+16505550101',
      from: '1234567891',
      type: 'template',
      templateName: 'hello',
      templateLanguage: 'en_US',
      templateCategory: 'MARKETING',
      priceMinor: 10,
      currency: 'EUR',
      providerMessageId: wamid,
    });
    assert.ok(
      await reserve(tx, { portalId, amount: 10, currency: 'EUR', messageId: id, actor: 'api' }),
    );
  });
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
      assert.deepEqual(row.error, { code: '131026', title: 'Message undeliverable' });
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

    test('inbound messages record lastInboundAt, creating unknown senders', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const inbound = (second: number) => ({
        wamid: `wamid.in${second}`,
        from: '16505550199',
        timestamp: at(second),
        type: 'text',
        text: 'hi',
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
