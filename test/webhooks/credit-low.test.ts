/**
 * `credit.low`: a send whose reservation takes the available credit (balance − reserved) from
 * at or above the portal's threshold to below it emits one event, in the send's transaction;
 * sends that stay above, or are already below, emit none.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { hello, messagingSetup } from '../helpers/messaging.ts';
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
  });
}
