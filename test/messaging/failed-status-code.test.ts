/**
 * A failed status's provider code is one integer everywhere: the `message.status` webhook a
 * tenant's endpoint receives (verified as docs/how-to/webhook-receiver.md
 * tells a user to) carries the same integer
 * as the API's `GET` of the message. The failure is a real one: the sandbox fails a send to a
 * `0000` number with 131026 and delivers the status over its signed webhook.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { eventually } from '../helpers/instances.ts';
import { hello, messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { startReceiver } from '../webhooks/receiver.ts';

for (const backend of backends()) {
  describe(`a failed status's code (${backend.name})`, () => {
    test('131026: the message.status webhook and the API carry the same integer code', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 10 });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await s.services.webhooks.start();
      await s.services.webhooks.startWorker();
      const { secret } = await s.services.webhooks.addEndpoint(
        s.portalId,
        { url: receiver.url, eventTypes: ['message.status'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);

      const res = await s.send(hello('+16505550000', s.numbers[0]!));
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().data.id as string;
      await eventually(async () => (await s.message(id)).status === 'failed', 'the message fails');
      const api = (await s.message(id)).error as { code: unknown; title: string } | null;
      assert.ok(api, 'the API names the error');
      assert.equal(typeof api.code, 'number', `the API's code ${JSON.stringify(api.code)}`);
      assert.equal(api.code, 131026);

      const failedEvent = async () =>
        receiver.received.find(
          (r) => r.event?.type === 'message.status' && r.event.data.status === 'failed',
        );
      await eventually(async () => (await failedEvent()) !== undefined, 'the failed event');
      const event = (await failedEvent())!.event!;
      assert.equal(event.data.messageId, id);
      const hook = event.data.error as { code: unknown; title: string } | undefined;
      assert.ok(hook, `the webhook names the error: ${JSON.stringify(event.data)}`);
      assert.equal(typeof hook.code, 'number', `the webhook's code ${JSON.stringify(hook.code)}`);
      assert.equal(hook.code, api.code, 'the same code in the webhook and the API');
      assert.deepEqual(hook, api);
    });
  });
}
