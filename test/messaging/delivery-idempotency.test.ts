/**
 * Delivery at most once at the provider boundary (docs/messaging.md "Retries and failures"): a worker killed
 * (`kill -9`) after the provider accepted a message and before it recorded the answer never
 * makes another worker send it again; the message's status webhook settles it.
 *
 * PostgreSQL only: the killed worker is another process on the same database (CI sets
 * TEST_DATABASE_URL).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { eventually } from '../helpers/instances.ts';
import { hello, messagingSetup } from '../helpers/messaging.ts';
import { ROOT } from '../helpers/root.ts';
import { childEnv, STARTUP_MS } from '../helpers/spawn.ts';
import { backends } from '../helpers/storage.ts';

const WORKER = join(ROOT, 'test', 'messaging', 'fixtures', 'send-worker.ts');
const postgres = backends().find((b) => b.name === 'postgres');

describe('messaging: delivery at most once (postgres)', () => {
  test(
    'a worker killed between the provider accepting and the record: the sandbox counts one send',
    { skip: postgres ? false : 'needs TEST_DATABASE_URL (the worker is another process)' },
    async (t) => {
      const s = await messagingSetup(t, postgres!, {
        workers: false,
        credit: 100,
        // The provider takes the message and holds its answer: the worker dies before it.
        cloud: { sendAnswerDelayMs: 120_000 },
        env: { MESSAGING_JOB_EXPIRE_S: '10' },
      });
      // The app's webhook endpoint is down for now: the provider keeps the status webhooks and
      // retries them (as the Cloud API does), so the retried job finds no wamid.
      const { port } = s.app.server.address() as AddressInfo;
      const webhookUrl = `http://127.0.0.1:${port}/api/provider/webhooks`;
      s.provider.sandbox.configureApp(s.provider.appId, {
        webhookUrl: 'http://127.0.0.1:1/down',
      });
      const id = (await s.send(hello('+16505551301', s.numbers[0]!))).json().data.id as string;

      const child = spawn(process.execPath, ['--import', 'tsx', WORKER], {
        cwd: ROOT,
        env: childEnv({
          ...s.provider.env,
          DATA_DIR: s.config.dataDir,
          PROVIDER_WEBHOOK_VERIFY_TOKEN: 'test-verify-token',
          MESSAGING_JOB_EXPIRE_S: '10',
          MESSAGING_RETRY_DELAY_S: '1',
          WORKER_DATABASE_URL: String(s.services.storage.pool!.options.connectionString),
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      t.after(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));

      await eventually(
        async () => s.provider.sandbox.cloud.sendsOf(id) === 1,
        `the worker process sends the message (its output: ${output})`,
        STARTUP_MS,
      );
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      assert.equal((await s.message(id)).status, 'queued');

      // This instance's workers take the job again once it expires.
      await s.services.messaging.startWorkers();
      await eventually(
        async () =>
          s.provider.sandbox.cloud.sendsOf(id) > 1 ||
          s.logs.some((l) => l.includes(id) && l.includes('not sent again')),
        'the job is taken again',
        60_000,
      );
      assert.equal(s.provider.sandbox.cloud.sendsOf(id), 1, 'the provider got one send');
      assert.equal((await s.message(id)).status, 'queued');

      // The endpoint is back: the provider's retried status webhook settles the message.
      s.provider.sandbox.configureApp(s.provider.appId, { webhookUrl });
      await eventually(
        async () => (await s.message(id)).status === 'read',
        'the status webhooks settle the message',
        90_000,
      );
      const wamid = s.provider.sandbox.cloud.messages.find((m) => m.waId === '16505551301')?.wamid;
      assert.equal((await s.message(id)).providerMessageId, wamid);
      assert.equal(s.provider.sandbox.cloud.sendsOf(id), 1);
      assert.deepEqual(s.provider.sandbox.cloud.stats().duplicates, 0);
      const credit = await s.services.messaging.credit({ portalId: s.portalId });
      assert.equal(credit.reserved, 0);
      assert.equal(credit.balance, 96, 'the one send is billed once');
    },
  );
});
