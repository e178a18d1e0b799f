/**
 * The provider's events, as messaging records them, become webhooks in the same transaction:
 * an inbound message (`message.received`, with its content: the tenant's own conversation), a
 * reaction (`message.reaction`) and a template review (`template.status_updated`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { startReceiver } from './receiver.ts';

const FAST = {
  retryScheduleMs: [0, 50],
  attemptTimeoutMs: 2_000,
  addressPolicy: 'development-any-address' as const,
};

for (const backend of backends()) {
  describe(`messaging events as webhooks (${backend.name})`, () => {
    test('message.received with the text, once per wamid; message.reaction; template.status_updated', async (t) => {
      const { services } = await buildTestApp(t, backend, {}, {}, { webhooks: FAST });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await services.webhooks.start();
      await services.webhooks.startWorker();
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const { secret } = await services.webhooks.addEndpoint(
        portalId,
        {
          url: receiver.url,
          eventTypes: ['message.received', 'message.reaction', 'template.status_updated'],
        },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const text = {
        wamid: 'wamid.INBOUND1',
        from: '14155550142',
        timestamp: new Date('2026-11-23T18:05:00.000Z'),
        type: 'text',
        content: { type: 'text' as const, text: { body: 'a private reply' } },
      };
      await services.messaging.webhookSink.inboundMessages(portalId, '1055500001', [text]);
      // The provider's retry of the same webhook: nothing stored, nothing sent.
      await services.messaging.webhookSink.inboundMessages(portalId, '1055500001', [text]);
      await services.messaging.webhookSink.inboundMessages(portalId, '1055500001', [
        {
          wamid: 'wamid.REACTION1',
          from: '14155550142',
          timestamp: new Date('2026-11-23T18:06:00.000Z'),
          type: 'reaction',
          content: {
            type: 'reaction',
            reaction: { providerMessageId: 'wamid.INBOUND1', emoji: '👍' },
          },
        },
      ]);
      const got = await receiver.waitFor(2);
      const inbound = got.find((r) => r.event?.type === 'message.received');
      const reaction = got.find((r) => r.event?.type === 'message.reaction');
      assert.ok(inbound && reaction);
      const data = inbound.event?.data as Record<string, unknown>;
      assert.match(String(data.id), /^msg_/);
      assert.match(String(data.contactId), /^ctc_/);
      assert.deepEqual(
        { ...data, id: 'x', contactId: 'y' },
        {
          id: 'x',
          direction: 'inbound',
          from: '+14155550142',
          contactId: 'y',
          phoneNumberId: '1055500001',
          providerMessageId: 'wamid.INBOUND1',
          type: 'text',
          text: { body: 'a private reply' },
          context: null,
          receivedAt: '2026-11-23T18:05:00.000Z',
          readAt: null,
        },
      );
      assert.equal(reaction.event?.type, 'message.reaction');
      assert.deepEqual(reaction.event?.data.reaction, {
        messageId: data.id,
        providerMessageId: 'wamid.INBOUND1',
        emoji: '👍',
      });

      await services.messaging.webhookSink.templateStatusUpdated(portalId, {
        wabaId: 'waba_1',
        templateId: 'tpl_9',
        name: 'order_ready',
        language: 'en_US',
        status: 'APPROVED',
      });
      const template = (await receiver.waitFor(3)).find(
        (r) => r.event?.type === 'template.status_updated',
      );
      const events: unknown = await services.storage.db.execute(
        sql`select type from webhook_events where portal_id = ${portalId} order by type`,
      );
      assert.deepEqual(
        (events as { rows: { type: string }[] }).rows.map((r) => r.type),
        ['message.reaction', 'message.received', 'template.status_updated'],
        'one message.received for the replayed wamid',
      );
      assert.equal(template!.event?.type, 'template.status_updated');
      assert.deepEqual(template!.event?.data, {
        templateId: 'tpl_9',
        name: 'order_ready',
        language: 'en_US',
        status: 'APPROVED',
        wabaId: 'waba_1',
      });
    });
  });
}
