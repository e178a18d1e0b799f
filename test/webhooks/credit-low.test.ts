/**
 * `credit.low`: a send whose reservation takes the available credit (balance − reserved) from
 * at or above the portal's threshold to below it emits one event, in the send's transaction;
 * sends that stay above, or are already below, emit none. Also when the sends come at once
 * through two instances reserving from their own escrow blocks: one event, with the exact
 * credit left.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { hello, messagingInstances, messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { startReceiver } from './receiver.ts';

for (const backend of backends()) {
  describe(`credit.low webhook (${backend.name})`, () => {
    test('crossing the threshold emits one credit.low; staying above or below emits none', async (t) => {
      // A utility template costs 4; credit 20, threshold 10: 20 → 16 → 12 → 8 (crosses) → 4.
      const s = await messagingSetup(t, backend, { credit: 20 });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await s.services.webhooks.start();
      await s.services.webhooks.startWorker();
      const { secret } = await s.services.webhooks.addEndpoint(
        s.portalId,
        { url: receiver.url, eventTypes: ['credit.low'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      await s.services.webhooks.setCreditLowThreshold(s.portalId, 10, { actor: CLI_ACTOR });

      for (let i = 0; i < 4; i++) {
        const res = await s.send(hello(`+1650555123${i}`, s.numbers[0]!));
        assert.equal(res.statusCode, 202, res.body);
      }
      const [low] = await receiver.waitFor(1);
      assert.equal(low!.event?.type, 'credit.low');
      assert.deepEqual(low!.event?.data, { available: 8, threshold: 10, currency: 'EUR' });
      // The fourth send (8 → 4) stayed below: still one event after its delivery had time.
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(receiver.received.length, 1);
    });

    test('30 sends at once through two instances cross the threshold once: one credit.low, exact', async (t) => {
      // Credit 120, threshold 24, 4 a send: the 25th send takes the available credit 24 → 20.
      const s = await messagingInstances(t, backend, 120);
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      // Either instance's send may emit the event: both have the webhooks' queue.
      await s.b.services.webhooks.start();
      const webhooks = s.a.services.webhooks;
      await webhooks.start();
      await webhooks.startWorker();
      const { secret } = await webhooks.addEndpoint(
        s.portalId,
        { url: receiver.url, eventTypes: ['credit.low'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      await webhooks.setCreditLowThreshold(s.portalId, 24, { actor: CLI_ACTOR });

      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => s.send(i % 2 === 0 ? s.a : s.b)),
      );
      assert.deepEqual(
        answers.map((r) => r.statusCode),
        Array<number>(30).fill(202),
      );
      const [low] = await receiver.waitFor(1);
      assert.deepEqual(low!.event?.data, { available: 20, threshold: 24, currency: 'EUR' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(receiver.received.length, 1);
    });
  });
}
