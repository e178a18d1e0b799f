/**
 * The delivery worker against the sandbox on both backends: a final failure releases the
 * credit, 130429 is retried until sent, a restart loses nothing, a revocation fails what is
 * queued and the jobs then send nothing, a job out of attempts fails its message (dead letter).
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'drizzle-orm';
import { takeLease } from '../../src/messaging/credit/credit-leases.ts';
import { claimDueMessages } from '../../src/messaging/outbound/delivery-queue.ts';
import { createServices } from '../../src/services.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { graphProxy } from '../helpers/graph-proxy.ts';
import { eventually } from '../helpers/instances.ts';
import { hello, messagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

/**
 * A proxy to the sandbox that answers the first message send 429 (Graph 130429) with
 * `Retry-After: 3`, forwards everything else, and keeps the time of every message send (ms).
 */
function throttlingProxy(t: TestContext, sendTimes: number[]) {
  return graphProxy(t, (req, _body, res) => {
    if (req.method !== 'POST' || !/\/messages$/.test(req.url ?? '')) return false;
    sendTimes.push(Date.now());
    if (sendTimes.length > 1) return false;
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
    res.end(JSON.stringify({ error: { code: 130429, message: 'Rate limit hit' } }));
    return true;
  });
}

for (const backend of backends()) {
  describe(`messaging: delivery (${backend.name})`, () => {
    test('131026 (a 0000 number) fails the message and releases its credit', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 10 });
      const res = await s.send(hello('+16505550000', s.numbers[0]!));
      const id = res.json().data.id as string;
      await eventually(async () => (await s.message(id)).status === 'failed', 'the message fails');
      assert.deepEqual((await s.message(id)).error, {
        code: 131026,
        title: 'Message undeliverable',
      });
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 10,
        reserved: 0,
        currency: 'EUR',
      });
    });

    test('130429 from the provider is retried until sent', async (t) => {
      const s = await messagingSetup(t, backend, {
        cloud: { sendsPerSecond: 1 },
        env: { MESSAGING_RATE_PER_NUMBER: '1000' },
      });
      // Accepted together, so that the worker's sends fall within one second of the sandbox's
      // window however loaded the machine is.
      const ids = await Promise.all(
        [0, 1, 2, 3, 4].map(
          async (i) =>
            (await s.send(hello(`+1650555600${i}`, s.numbers[0]!))).json().data.id as string,
        ),
      );
      await eventually(
        async () =>
          (await Promise.all(ids.map((id) => s.message(id)))).every((m) => m.status === 'read'),
        'all five read',
        30_000,
      );
      assert.ok(
        s.logs.some((l) => l.includes('will retry') && l.includes('130429')),
        'a 130429 was retried',
      );
      for (const id of ids) assert.equal(s.provider.sandbox.cloud.sendsOf(id), 1);
    });

    test("a provider 429's Retry-After holds the sender number's next send until it passes", async (t) => {
      const sendTimes: number[] = [];
      const s = await messagingSetup(t, backend, {
        graphBaseUrl: await throttlingProxy(t, sendTimes),
      });
      const id = (await s.send(hello('+16505556101', s.numbers[0]!))).json().data.id as string;
      await eventually(async () => (await s.message(id)).status === 'read', 'the message is read');
      assert.equal(sendTimes.length, 2, 'one throttled send, one retry');
      // pg-boss alone would retry after MESSAGING_RETRY_DELAY_S (1 s).
      const waited = sendTimes[1]! - sendTimes[0]!;
      assert.ok(waited >= 2_900, `the retry waited ${waited} ms, less than Retry-After's 3 s`);
    });

    test('a restart loses nothing: jobs queued while no worker runs are sent by a new one', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await s.send(hello(`+1650555700${i}`, s.numbers[1]!))).json().data.id);
      // This instance stops (its job queue too), as a server shutting down does.
      await s.services.stop();
      assert.equal(s.provider.sandbox.cloud.stats().sends, 0);
      // Another instance's services over the same database start their workers.
      const next = createServices({
        config: s.config,
        storage: s.services.storage,
        logger: createLogger('silent'),
      });
      t.after(() => next.stop());
      await next.messaging.start();
      await next.messaging.startWorkers();
      await eventually(
        async () =>
          (await Promise.all(ids.map((id) => s.message(id)))).every((m) => m.status === 'read'),
        'all five read',
      );
      for (const id of ids) assert.equal(s.provider.sandbox.cloud.sendsOf(id), 1);
    });

    test('revocation fails the queued messages; their jobs then send nothing', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false, credit: 100 });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++)
        ids.push((await s.send(hello(`+1650555800${i}`, s.numbers[0]!))).json().data.id);
      await s.services.partner.revokeConnection(s.portalId, {
        actor: { type: 'user', id: '1' },
        reason: 'disconnect',
      });
      for (const id of ids) {
        const m = await s.message(id);
        assert.equal(m.status, 'failed');
        assert.deepEqual(m.error, {
          code: 'not_connected',
          title: 'The provider connection was revoked',
        });
      }
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });
      await s.services.messaging.startWorkers();
      await eventually(
        async () => (await s.services.messaging.waitingJobs()) === 0,
        'the jobs are taken',
      );
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(s.provider.sandbox.cloud.stats().sends, 0);
    });

    test('a send in flight at a revocation is waited for: it keeps its wamid and is billed', async (t) => {
      const s = await messagingSetup(t, backend, {
        credit: 100,
        cloud: { sendAnswerDelayMs: 800 },
      });
      const id = (await s.send(hello('+16505558101', s.numbers[0]!))).json().data.id as string;
      // The provider has accepted the message and not answered yet when the portal disconnects.
      await eventually(
        async () => s.provider.sandbox.cloud.sendsOf(id) === 1,
        'the provider accepts the send',
      );
      await s.services.partner.revokeConnection(s.portalId, {
        actor: { type: 'user', id: '1' },
        reason: 'disconnect',
      });
      assert.notEqual((await s.message(id)).status, 'failed');
      await eventually(async () => (await s.message(id)).status === 'read', 'the message is read');
      const credit = await s.services.messaging.credit({ portalId: s.portalId });
      assert.equal(credit.reserved, 0);
      assert.ok(credit.balance < 100, 'the message is billed');
      assert.equal(s.provider.sandbox.cloud.sendsOf(id), 1);
    });

    test('a send with no answer is never sent again: it fails with delivery_unknown after MESSAGING_SEND_CONFIRM_S', async (t) => {
      const s = await messagingSetup(t, backend, {
        credit: 10,
        // The provider takes the message, answers after the timeout and posts no status.
        cloud: { sendAnswerDelayMs: 5_000, statusDelaysMs: [600_000, 600_000, 600_000] },
        env: { PROVIDER_TIMEOUT_MS: '300', MESSAGING_SEND_CONFIRM_S: '2' },
      });
      // The settlement sweep is a background task (src/background-tasks.ts).
      s.services.background.start();
      const id = (await s.send(hello('+16505559101', s.numbers[0]!))).json().data.id as string;
      await eventually(async () => (await s.message(id)).status === 'failed', 'the message fails');
      assert.deepEqual((await s.message(id)).error, {
        code: 'delivery_unknown',
        title: 'The provider never confirmed the message; it was not sent again',
      });
      assert.equal(s.provider.sandbox.cloud.sendsOf(id), 1, 'the timed-out send is not repeated');
      assert.ok(s.logs.some((l) => l.includes(id) && l.includes('not sent again')));
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 10,
        reserved: 0,
        currency: 'EUR',
      });
    });

    test('an accepted message with no status webhook fails with status_unknown after MESSAGING_STATUS_WAIT_S', async (t) => {
      const s = await messagingSetup(t, backend, {
        credit: 10,
        cloud: { statusDelaysMs: [600_000, 600_000, 600_000] },
        env: { MESSAGING_STATUS_WAIT_S: '2' },
      });
      s.services.background.start();
      const id = (await s.send(hello('+16505559102', s.numbers[0]!))).json().data.id as string;
      await eventually(
        async () => (await s.message(id)).providerMessageId !== null,
        'the provider accepts it',
      );
      assert.equal((await s.message(id)).status, 'queued');
      await eventually(async () => (await s.message(id)).status === 'failed', 'the message fails');
      assert.deepEqual((await s.message(id)).error, {
        code: 'status_unknown',
        title: 'The provider reported no status for the message',
      });
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 10,
        reserved: 0,
        currency: 'EUR',
      });
    });

    test("a dead instance's expired escrow block is settled: by the next lease, or by the sweep", async (t) => {
      const s = await messagingSetup(t, backend, {
        credit: 1000,
        workers: false,
        env: { MESSAGING_SEND_CONFIRM_S: '2' },
      });
      const db = s.services.storage.db;
      /** A block leased by an instance that then died, older than LEASE_MAX_AGE_S. */
      const deadBlock = async () => {
        const { lease } = await takeLease(db, {
          portalId: s.portalId,
          holder: 'dead-instance',
          price: 4,
          desired: 100,
          settleAll: false,
          maxAgeS: 60,
        });
        assert.ok(lease);
        await queryRows(
          s.services.storage,
          sql`update credit_leases set created_at = now() - interval '5 minutes' where id = ${lease.id}`,
        );
        return lease.id;
      };
      const blockExists = async (id: number) =>
        (await queryRows(s.services.storage, sql`select id from credit_leases where id = ${id}`))
          .length === 1;

      const first = await deadBlock();
      assert.equal((await s.services.messaging.credit({ portalId: s.portalId })).reserved, 0);
      assert.equal((await s.send(hello('+16505559201', s.numbers[0]!))).statusCode, 202);
      assert.equal(await blockExists(first), false, 'the next lease settled the dead block');

      // A portal that never sends again: the settlement sweep returns the block.
      const second = await deadBlock();
      s.services.background.start();
      await eventually(async () => !(await blockExists(second)), 'the sweep settles the block');
      // Nothing lost: what is not reserved for the one message (or captured by it) is free.
      const credit = await s.services.messaging.credit({ portalId: s.portalId });
      assert.equal(credit.balance - credit.reserved, 996);
    });

    test('a message out of attempts with no outcome fails and its credit is released', async (t) => {
      const s = await messagingSetup(t, backend, {
        workers: false,
        credit: 10,
        env: { MESSAGING_RETRY_LIMIT: '0' },
      });
      const id = (await s.send(hello('+16505559001', s.numbers[0]!))).json().data.id as string;
      assert.ok((await s.services.messaging.credit({ portalId: s.portalId })).reserved > 0);
      // A worker claims the message and its one attempt ends without an outcome (its lease, of
      // 0 s here, ends as when the worker dies or the database fails under it).
      const claimed = await claimDueMessages(s.services.storage.db, 10, 0);
      assert.deepEqual(
        claimed.map((r) => [r.id, r.deliveryAttempts]),
        [[id, 1]],
      );
      await s.services.messaging.startWorkers();
      await eventually(async () => (await s.message(id)).status === 'failed', 'the message fails');
      assert.deepEqual((await s.message(id)).error, {
        code: 'delivery_failed',
        title: 'The message could not be handed to the provider',
      });
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), {
        balance: 10,
        reserved: 0,
        currency: 'EUR',
      });
      assert.equal(s.provider.sandbox.cloud.stats().sends, 0);
    });
  });
}
