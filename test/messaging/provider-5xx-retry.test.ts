/**
 * Graph answering a send with a 5xx carrying code 131000 ("Something went wrong"), end to end:
 * the sandbox answers the first send so (its `failNextSend` fault hook), the delivery worker
 * retries, and the message ends sent — once at the provider, its credit captured once.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually } from '../helpers/instances.ts';
import { hello, messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';

for (const backend of backends()) {
  describe(`a provider 5xx with Graph code 131000 (${backend.name})`, () => {
    test('a send answered 500 with code 131000 once is retried and sent once, its credit captured once', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 10 });
      const { cloud } = s.provider.sandbox;
      cloud.failNextSend(500, { code: 131000, message: '(#131000) Something went wrong' });
      const before = cloud.stats().sends;
      const res = await s.send(hello('+16505556201', s.numbers[0]!));
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().data.id as string;
      await eventually(
        async () => ['read', 'failed'].includes((await s.message(id)).status),
        'the message is sent, or fails',
      );
      const message = await s.message(id);
      assert.equal(message.status, 'read', JSON.stringify(message.error));
      assert.equal(message.error, null);
      assert.ok(
        s.logs.some((l) => l.includes('will retry') && l.includes('131000')),
        'the 131000 answer was retried',
      );
      assert.equal(cloud.sendsOf(id), 1, 'sent exactly once at the provider');
      assert.equal(cloud.stats().sends - before, 1, 'no other send reached the provider');
      assert.equal(
        cloud.messages.filter((m) => m.direction === 'received' && m.waId === '16505556201').length,
        1,
      );
      const ledger = (
        await s.services.messaging.listCreditTransactions({ portalId: s.portalId }, { limit: 100 })
      ).items
        .filter((i) => i.messageId === id)
        .map((i) => i.kind)
        .sort();
      assert.deepEqual(ledger, ['capture', 'reserve'], 'reserved once, captured once');
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 6,
        reserved: 0,
        currency: 'EUR',
      });
    });
  });
}
