/**
 * The provider's events, as messaging records them, become webhooks in the same transaction:
 * an inbound message (`message.received`, without its text) and a template review
 * (`template.status_updated`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
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
    test('message.received and template.status_updated, verified, with no message text', async (t) => {
      const { services } = await buildTestApp(t, backend, {}, {}, { webhooks: FAST });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await services.webhooks.start();
      await services.webhooks.startWorker();
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const { secret } = await services.webhooks.addEndpoint(
        portalId,
        { url: receiver.url, eventTypes: ['message.received', 'template.status_updated'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      await services.messaging.webhookSink.inboundMessages(portalId, '1055500001', [
        {
          wamid: 'wamid.INBOUND1',
          from: '14155550142',
          timestamp: new Date(),
          type: 'text',
          content: { type: 'text', text: { body: 'a private reply' } },
        },
      ]);
      const [inbound] = await receiver.waitFor(1);
      assert.equal(inbound!.event?.type, 'message.received');
      assert.equal(inbound!.event?.data.providerMessageId, 'wamid.INBOUND1');
      assert.match(String(inbound!.event?.data.contactId), /^ctc_/);
      assert.ok(!inbound!.body.includes('private reply'), 'no message text');
      assert.ok(!inbound!.body.includes('4155550142'), 'no phone');

      await services.messaging.webhookSink.templateStatusUpdated(portalId, {
        wabaId: 'waba_1',
        templateId: 'tpl_9',
        name: 'order_ready',
        language: 'en_US',
        status: 'APPROVED',
      });
      const [, template] = await receiver.waitFor(2);
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
