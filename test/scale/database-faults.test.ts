/**
 * Invariant 13, no dependency fault ends the process, on PostgreSQL servers of the test's own
 * (test/helpers/private-postgres.ts; never the shared one): two instances keep serving through a
 * restart of the database and through connections cut under them, every accepted send reaches
 * the provider exactly once (the sandbox counts sends by Portico's message id), the credit is
 * exact, and a request refused meanwhile is a 503 `unavailable` with `Retry-After`, never a 500.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { buildApp } from '../../src/app.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { openStorage } from '../../src/db/client.ts';
import { createJobQueue } from '../../src/jobs/job-queue.ts';
import { toAppError } from '../../src/platform/error-envelope.ts';
import { dependencyFaults } from '../../src/platform/fault-summary.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { captureLogs, createPortal, testConfig } from '../helpers/app.ts';
import { eventually, FAST_LISTENER } from '../helpers/instances.ts';
import { hello, MESSAGES } from '../helpers/messaging.ts';
import { connectPortal, startTestProvider, type TestProvider } from '../helpers/provider.ts';
import {
  cuttableProxy,
  privatePostgresSkip,
  startPrivatePostgres,
} from '../helpers/private-postgres.ts';
import { queryRows } from '../helpers/sql.ts';

const PRICE = 4; // hello_world's price in minor units (the test configuration's default)
const CREDIT = 10_000;
const CREDIT_URL = '/api/v1/external/messaging/credit';

interface Node {
  services: Services;
  app: Awaited<ReturnType<typeof buildApp>>;
  logs: string[];
}

/** Two instances over `url` (own pools), the portal connected, credit added, workers running. */
async function twoInstances(
  t: TestContext,
  url: string,
  provider: TestProvider,
  connectMs = 1_000,
) {
  const nodes: Node[] = [];
  const env = {
    ...provider.env,
    RATE_LIMIT_PER_MINUTE: '1000000',
    TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    MESSAGING_RETRY_DELAY_S: '1',
    MESSAGING_JOB_EXPIRE_S: '10',
  };
  t.after(async () => {
    for (const n of nodes) await n.app.close();
    for (const n of nodes) await n.services.stop();
    for (const n of nodes) await n.services.storage.close();
  });
  for (let i = 0; i < 2; i++) {
    const storage = await openStorage({
      kind: 'postgres',
      url,
      poolSize: 4,
      timeouts: { statementMs: 5_000, lockMs: 2_000, idleInTransactionMs: 10_000, connectMs },
    });
    if (i === 0) await storage.migrate();
    const config = testConfig(env);
    const { logs, stream } = captureLogs();
    const logger = createLogger(config.LOG_LEVEL, stream);
    const services = createServices({ config, storage, logger });
    const app = await buildApp({ services, logger, listenerTiming: FAST_LISTENER });
    nodes.push({ services, app, logs });
  }
  const [a, b] = nodes as [Node, Node];
  const webhookUrl = await a.app.listen({ host: '127.0.0.1', port: 0 });
  provider.sandbox.configureApp(provider.appId, {
    webhookUrl: `${webhookUrl}/api/provider/webhooks`,
    webhookVerifyToken: provider.webhookVerifyToken,
  });
  const portal = await createPortal(a.services);
  const portalId = await a.services.accounts.portalIdFor(portal.portalCode);
  await connectPortal(a.services, provider, { portalId, userId: portal.userId });
  await a.services.messaging.addCredit({ portalId, amount: CREDIT, note: 'n', actor: CLI_ACTOR });
  for (const n of nodes) await n.services.messaging.start();
  for (const n of nodes) await n.services.messaging.startWorkers();
  const [from] = (await a.services.messagingProvider.numbers(portalId)).map((n) => n.id);
  let next = 0;
  const accepted: string[] = [];
  const refusals: { status: number; code: string; retryAfter: string | undefined }[] = [];
  /** One send through `node`: its id kept when accepted, its refusal otherwise. */
  const send = async (node: Node) => {
    const res = await node.app.inject({
      method: 'POST',
      url: MESSAGES,
      headers: { authorization: portal.token, 'idempotency-key': `k-${next}` },
      payload: hello(`+1650555${String(1000 + next++)}`, from!),
    });
    if (res.statusCode === 202) accepted.push(res.json<{ data: { id: string } }>().data.id);
    else
      refusals.push({
        status: res.statusCode,
        code: res.json<{ error: { code: string } }>().error.code,
        retryAfter: res.headers['retry-after'],
      });
    return res.statusCode;
  };
  /** Every accepted message has left `queued` (sent, delivered or read). */
  const allSent = async () => {
    const rows = await queryRows<{ n: number }>(
      a.services.storage,
      sql`select count(*)::int as n from messages
        where portal_id = ${portalId} and status in ('sent', 'delivered', 'read')`,
    );
    return Number(rows[0]!.n) === accepted.length;
  };
  return { a, b, nodes, portalId, token: portal.token, send, accepted, refusals, allSent };
}

type Setup = Awaited<ReturnType<typeof twoInstances>>;

/**
 * `check`, reading `false` while the instance refuses it as `unavailable` (its pool still busy
 * with the backlog): the test reads through the pool under test.
 */
function orRefused(check: () => Promise<boolean>): () => Promise<boolean> {
  return async () => {
    try {
      return await check();
    } catch (err) {
      if (toAppError(err).code === 'unavailable') return false;
      throw err;
    }
  };
}

/** What must hold after a fault: alive, each accepted send exactly once, credit exact. */
async function assertRecovered(s: Setup, provider: TestProvider): Promise<void> {
  for (const r of s.refusals) {
    assert.equal(r.status, 503, `a refusal during the fault: ${JSON.stringify(r)}`);
    assert.equal(r.code, 'unavailable');
    assert.equal(r.retryAfter, '1');
  }
  // Both instances still answer (the process is alive and serves again).
  for (const n of s.nodes) {
    await eventually(
      async () => (await n.app.inject({ url: '/readyz' })).statusCode === 200,
      'the instance is ready again',
      30_000,
    );
  }
  await eventually(orRefused(s.allSent), 'every accepted send is sent', 60_000);
  const { cloud } = provider.sandbox;
  for (const id of s.accepted) assert.equal(cloud.sendsOf(id), 1, `message ${id} sent once`);
  assert.equal(cloud.stats().sends, s.accepted.length, 'no other send');
  // Captured at `sent` by the status webhooks (retried by the sandbox until they land).
  await eventually(
    orRefused(async () => {
      const c = await s.a.services.messaging.credit({ portalId: s.portalId });
      return c.balance === CREDIT - PRICE * s.accepted.length && c.reserved === 0;
    }),
    'the credit settles at the price of each accepted send',
    60_000,
  );
}

const skip = privatePostgresSkip();

describe('database faults on two instances (a private PostgreSQL)', { skip }, () => {
  test('a restart of the database during sends: both alive, each send once, credit exact', async (t) => {
    const server = await startPrivatePostgres(t);
    const provider = await startTestProvider(t);
    const s = await twoInstances(t, server.url, provider);
    for (let i = 0; i < 6; i++) assert.equal(await s.send(i % 2 ? s.b : s.a), 202);

    // Sends keep coming on both instances while the server restarts under them.
    let sending = true;
    const traffic = (async () => {
      for (let i = 0; sending; i++) {
        await s.send(i % 2 ? s.b : s.a);
        await delay(10);
      }
    })();
    await delay(200);
    await server.restart();
    // After the restart, sends are accepted again on both.
    await eventually(async () => (await s.send(s.a)) === 202, 'A accepts again', 30_000);
    await eventually(async () => (await s.send(s.b)) === 202, 'B accepts again', 30_000);
    sending = false;
    await traffic;

    assert.ok(s.accepted.length > 8, `accepted ${s.accepted.length}`);
    await assertRecovered(s, provider);
  });

  test('a connection cut while a send is held at the provider: both alive, the send once, 503 not 500', async (t) => {
    const server = await startPrivatePostgres(t);
    const proxy = await cuttableProxy(t, server.port);
    const provider = await startTestProvider(t, { cloud: { sendAnswerDelayMs: 1_500 } });
    const s = await twoInstances(t, proxy.url, provider);

    // A transaction open on each instance when the connections are cut: the checked-out
    // client's 'error' must not end the process, and the request answers 503 `unavailable`.
    let afterCut!: () => void;
    const cutDone = new Promise<void>((resolve) => (afterCut = resolve));
    const held = s.nodes.map((n) =>
      n.services.storage.db
        .transaction(async (tx) => {
          await tx.execute(sql`select 1`);
          await cutDone;
          await tx.execute(sql`select 1`);
        })
        .then(
          () => null,
          (err: unknown) => err,
        ),
    );
    // Two sends, one per instance, then held at the provider for 1.5 s.
    assert.equal(await s.send(s.a), 202);
    assert.equal(await s.send(s.b), 202);
    await eventually(
      () => provider.sandbox.cloud.stats().sends === 2,
      'both sends reach the provider',
    );
    await delay(100);
    const open = proxy.open();
    proxy.cut();
    afterCut();
    for (const err of await Promise.all(held)) {
      assert.ok(err, 'the transaction lost its connection');
      const answer = toAppError(err);
      assert.equal(answer.status, 503, `a lost connection answers ${answer.status}`);
      assert.equal(answer.code, 'unavailable');
      assert.equal(answer.headers['retry-after'], '1');
    }
    assert.ok(open > 0, 'connections were open through the proxy');
    // Sends right after the cut: accepted, or 503 while the pools reconnect.
    for (let i = 0; i < 4; i++) await s.send(i % 2 ? s.b : s.a);
    await assertRecovered(s, provider);
    // The outage said once per interval, never as a stack per refused request.
    for (const n of s.nodes)
      assert.ok(
        !n.logs.some((l) => l.includes('"code":"unavailable"') && l.includes('"stack"')),
        'no stack for a refused request',
      );
  });

  test('the database stopped: /readyz and the API answer 503 with Retry-After, one summary line per interval, all back after the start', async (t) => {
    const server = await startPrivatePostgres(t);
    const provider = await startTestProvider(t);
    const s = await twoInstances(t, server.url, provider);
    assert.equal(await s.send(s.a), 202);
    await eventually(orRefused(s.allSent), 'the first send is sent');
    // The process's one log: both instances write to it (the summary is process-wide).
    type Line = { msg: string; level: number; time: number; count?: number; reqId?: string };
    const mark = () => s.nodes.map((n) => n.logs.length);
    /** Lines both instances wrote since `from` (a mark), once the log stream has written them. */
    const since = async (from: number[]) => {
      await delay(20);
      return s.nodes.flatMap((n, i) => n.logs.slice(from[i]));
    };
    dependencyFaults.flush(); // a new interval, without what earlier tests left

    await server.stop();
    const refused = async (node: Node, url: string) => {
      const res = await node.app.inject({ url, headers: { authorization: s.token } });
      assert.equal(res.statusCode, 503, `${url}: ${res.statusCode} ${res.body}`);
      assert.equal(res.json<{ error: { code: string } }>().error.code, 'unavailable', url);
      assert.equal(res.headers['retry-after'], '1', `${url} says when to retry`);
    };
    // Two intervals of the outage: readiness, an API read and a send on both instances.
    const refusedPerInterval = 2 * (3 * 2 + 1);
    for (let round = 0; round < 2; round++) {
      const from = mark();
      for (const node of s.nodes) {
        for (let i = 0; i < 3; i++) {
          await refused(node, '/readyz');
          await refused(node, CREDIT_URL);
        }
        assert.equal(await s.send(node), 503);
      }
      dependencyFaults.flush(); // what the interval's timer does when it ends
      const lines = await since(from);
      // No error line, and no stack, for any refused request.
      const requestLines = lines.filter((l) => l.includes('"reqId"'));
      // Every API request has its access line (/readyz's only at warn and above).
      assert.ok(
        requestLines.length >= 2 * (3 + 1),
        `the requests were logged: ${requestLines.length}`,
      );
      assert.deepEqual(
        requestLines.filter((l) => l.includes('"stack"') || (JSON.parse(l) as Line).level >= 50),
        [],
        'no stack and no error line for a refused request',
      );
      // Nor for anything else: the listeners' reconnects are counted, not logged with a stack.
      assert.deepEqual(
        lines.filter((l) => l.includes('"stack"')),
        [],
        'no line of the outage carries a stack',
      );
      // Said at once, then the rest counted into one summary line at the interval's end (a
      // listener's retry right after the flush opens the next interval: not this one's).
      const said = lines
        .map((l) => JSON.parse(l) as Line)
        .filter((l) => l.msg.startsWith('storage unavailable'));
      const summary = said.find((l) => l.count !== undefined);
      const storage = said.filter((l) => l.time <= summary!.time);
      // One summary line; at most one line said at once (the interval's first fault: in the
      // first round the outage's first, later it may be a listener's retry before the mark).
      const atOnce = storage.filter((l) => l.count === undefined);
      assert.deepEqual(
        atOnce.map((l) => l.msg),
        round === 0 || atOnce.length > 0 ? ['storage unavailable'] : [],
        `interval ${round}: ${JSON.stringify(storage)}`,
      );
      assert.deepEqual(
        storage.filter((l) => l.count !== undefined).map((l) => l.msg),
        [`storage unavailable: ${summary?.count} more failure(s) in the last 10 s`],
      );
      assert.ok(
        summary!.count! >= refusedPerInterval - 1,
        `the summary counts every refusal: ${summary!.count}`,
      );
    }

    await server.start();
    for (const node of s.nodes) {
      await eventually(
        async () => (await node.app.inject({ url: '/readyz' })).statusCode === 200,
        'ready again after the start',
        30_000,
      );
      await eventually(
        async () =>
          (await node.app.inject({ url: CREDIT_URL, headers: { authorization: s.token } }))
            .statusCode === 200,
        'the API answers again after the start',
        30_000,
      );
      assert.equal(await s.send(node), 202, 'a send is accepted again');
    }
    await assertRecovered(s, provider);
  });

  test("a job's fail and complete rejected by a stopped database: no unhandled rejection, the outcome written once it is back", async (t) => {
    const server = await startPrivatePostgres(t);
    const storage = await openStorage({
      kind: 'postgres',
      url: server.url,
      poolSize: 4,
      timeouts: {
        statementMs: 5_000,
        lockMs: 2_000,
        idleInTransactionMs: 10_000,
        connectMs: 1_000,
      },
    });
    await storage.migrate();
    const { logs, stream } = captureLogs();
    const queue = createJobQueue({
      storage,
      logger: createLogger('info', stream),
      maintenanceIntervalS: 1,
    });
    t.after(async () => {
      await queue.stop();
      await storage.close();
    });
    // Anything that escapes the worker reaches the process as an unhandled rejection.
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    t.after(() => process.off('unhandledRejection', onUnhandled));

    await queue.start();
    const name = 'test.fault';
    await queue.boss.createQueue(name, {
      name,
      retryLimit: 3,
      retryDelay: 0,
      expireInSeconds: 300,
    });
    // The handler ends when the test says, after it stopped the database: the batch's outcome
    // (fail on the first run, complete on the second) is then written to a stopped server.
    const runs: { release: () => void }[] = [];
    queue.work<{ n: number }>(name, { batchSize: 1, pollingIntervalS: 0.5 }, async (jobs) => {
      const run = runs.length;
      await new Promise<void>((resolve) => runs.push({ release: resolve }));
      return run === 0 ? { retry: jobs.map((j) => j.id) } : undefined;
    });
    const runStarted = (n: number) =>
      eventually(() => runs.length >= n, `the job's run ${n} started`, 30_000);
    const id = (await queue.boss.send(name, { n: 1 }))!;
    const stateOf = async () => (await queue.boss.getJobById(name, id))?.state;

    for (const run of [1, 2]) {
      await runStarted(run);
      dependencyFaults.flush(); // a new interval: its first fault is said at once
      const from = logs.length;
      await server.stop();
      runs[run - 1]!.release(); // fail (run 1) or complete (run 2) is now refused
      await eventually(
        () => logs.slice(from).some((l) => l.includes('"fault":"job-queue"')),
        `run ${run}: the refused write is said as a job-queue fault`,
      );
      await delay(600); // one polling interval: the write is tried again, and refused again
      assert.deepEqual(unhandled, [], `run ${run}: no unhandled rejection`);
      await server.start();
      if (run === 1) continue; // its fail, written now, makes pg-boss run the job again
      await eventually(
        async () => (await stateOf().catch(() => undefined)) === 'completed',
        'the job completes once the database is back',
        30_000,
      );
    }
    assert.equal(runs.length, 2, 'the job ran twice: failed once, then completed');
    assert.deepEqual(unhandled, [], 'no unhandled rejection');
  });

  test('a full pool queue answers 503 with Retry-After at once; the accepted sends go out', async (t) => {
    const server = await startPrivatePostgres(t);
    const provider = await startTestProvider(t);
    // A connect timeout far longer than the test: only the bounded queue can refuse quickly.
    const s = await twoInstances(t, server.url, provider, 120_000);
    // 4 connections and a queue of 40 per instance: 200 sends at once.
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => s.send(i % 2 ? s.b : s.a)),
    );
    assert.ok(
      statuses.every((c) => c === 202 || c === 503),
      statuses.join(','),
    );
    assert.ok(statuses.includes(503), 'some sends were refused by the bounded queue');
    await assertRecovered(s, provider);
  });
});
