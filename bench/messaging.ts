/**
 * `npm run bench:messaging`: the messaging area on PostgreSQL, against the sandbox provider.
 *
 * 1. Accepted sends per second for one portal: autocannon in this process, 50 connections,
 *    BENCH_DURATION_S (10) seconds of `POST /messaging/messages` (a template), to Portico in a
 *    process of its own (bench/messaging-server.ts: `services.start()`, so the delivery workers
 *    deliver meanwhile, the sender number paced at MESSAGING_RATE_PER_NUMBER = 1000; the access
 *    log written), and the messages handed to the provider per second meanwhile, twice: with the sandbox provider inside the
 *    server's process (the development default) and in this process (as the real provider is
 *    remote). Right after each, in the same run, `pgbench` with as many clients for as long:
 *    single-row inserts into a throwaway table (bench/pgbench.ts), reported as
 *    accepted ÷ inserts. Then `pgbench` runs the send's own statement (message-insert.ts: the
 *    message, its reservation from an escrow block, its job) with the same clients: what the
 *    database alone commits of this design.
 * 2. End to end (sandbox inside): BENCH_E2E messages sent 20 per second; the time from the 202
 *    to the message being `delivered` in the database (polled every 10 ms): p50 and p99, ms.
 *    The sandbox's default status delays (sent 200 ms, delivered 400 ms after the send) are in it.
 * 3. Two spawned instances (dist/main.js) on one database: BENCH_KILL_RUN messages sent by 50
 *    clients to both, one instance SIGKILLed as soon as the sandbox has received half of them
 *    (while sends are still arriving); a send the kill cut off is retried on the other instance
 *    with the same Idempotency-Key, as a client would. Then: delivered, lost (not delivered by
 *    the deadline), duplicated at the provider (sends per biz_opaque_callback_data > 1), and the
 *    instances' log lines at level error or above.
 *
 * 4. Inbound ingestion (bench/messaging-inbound.ts): the sandbox (in this process) sends signed
 *    webhook batches of 100 inbound messages, several in flight, to Portico in its own process
 *    for BENCH_DURATION_S seconds: messages stored per second, the webhook's p50 / p99, a stored
 *    row checked sealed, and the same run's `pgbench` single-insert rate.
 *
 * 5. A burst (bench/messaging-burst.ts): 2,000 sends at once against a pool of 10 connections,
 *    with the API's admission at its defaults and without it; the distribution of answer times
 *    and statuses, and the messages stored against the 202s.
 *
 * `BENCH_ONLY=accepted|kill|inbound|burst` runs one part; `BENCH_PROFILE=1` writes a CPU profile of the
 * server during each accepted run beside the results. Writes `bench/results/messaging-<time>.json`
 * and the instances' logs beside it; prints the figures with the load average; a whole run
 * redraws the messaging section of docs/performance.md (bench/messaging-doc.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../src/audit/audit-log.ts';
import { parseConfig } from '../src/config.ts';
import { openStorage } from '../src/db/client.ts';
import { createLogger } from '../src/platform/logger.ts';
import { startSandboxProvider } from '../src/sandbox-provider/sandbox-provider.tsx';
import { createServices } from '../src/services.ts';
import { acceptedRun, body, sleep, waitFor } from './messaging-accepted.ts';
import { messagingSection, type AcceptedRunResult, type KillRunResult } from './messaging-doc.ts';
import { burstRun, type BurstRunResult } from './messaging-burst.ts';
import { inboundRun, type InboundRunResult } from './messaging-inbound.ts';
import { redrawSection, runContext } from './performance-doc.ts';
import { createThrowawayDatabase } from './postgres.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const KILL_RUN = Number(process.env.BENCH_KILL_RUN ?? 5000);
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

async function setUp(dbUrl: string, env: Record<string, string>) {
  const appId = '424242424';
  const appSecret = randomBytes(24).toString('hex');
  const sandbox = await startSandboxProvider({
    port: 0,
    apps: [{ appId, appSecret, redirectUris: ['http://localhost:3000/api/auth/partner/callback'] }],
  });
  const providerEnv = {
    PROVIDER_AUTHORIZATION_BASE_URL: sandbox.url,
    PROVIDER_GRAPH_BASE_URL: sandbox.url,
    PROVIDER_APP_ID: appId,
    PROVIDER_APP_SECRET: appSecret,
    PROVIDER_REDIRECT_URI: 'http://localhost:3000/api/auth/partner/callback',
    PROVIDER_WEBHOOK_VERIFY_TOKEN: 'bench-verify-token-0001',
    TOKEN_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    DATABASE_URL: dbUrl,
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...env,
  };
  const config = parseConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-bench-msg-')),
    ...providerEnv,
  });
  const storage = await openStorage({ kind: 'postgres', url: dbUrl, poolSize: 20 });
  await storage.migrate();
  const logger = createLogger('warn');
  const services = createServices({ config, storage, logger });
  const portal = await services.accounts.createPortal({
    name: 'Bench',
    adminEmail: 'bench@messaging.test',
    actor: CLI_ACTOR,
  });
  const portalId = await services.accounts.portalIdFor(portal.portalCode);
  const code = sandbox.authorize({ appId, redirectUri: providerEnv.PROVIDER_REDIRECT_URI });
  await services.partner.completeAuthorization({
    portalId,
    userId: portal.userId,
    authorizationCode: code as never, // a code as the callback's validation hands it on
  });
  await services.messaging.addCredit({ portalId, amount: 1e12, note: 'bench', actor: CLI_ACTOR });
  await services.messaging.start();
  const numbers = (await services.messagingProvider.numbers(portalId)).map((n) => n.id);
  const from = numbers[0]!;
  return {
    sandbox,
    config,
    storage,
    services,
    portal,
    portalId,
    from,
    numbers,
    providerEnv,
    appId,
  };
}

function startInstance(
  env: Record<string, string>,
  logFile: string,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('instance did not start')), 60_000);
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      if (out.includes('Server listening')) return;
      out += c.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    });
    child.once('exit', () => reject(new Error(`instance exited: ${out.slice(-500)}`)));
  });
}

async function killedInstance(dbUrl: string, logDir: string) {
  const s = await setUp(dbUrl, {});
  const env = {
    ...s.providerEnv,
    MESSAGING_JOB_EXPIRE_S: '10',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'pb-')),
  };
  const logs = [join(logDir, 'instance-a.log'), join(logDir, 'instance-b.log')] as const;
  const a = await startInstance(env, logs[0]);
  const b = await startInstance({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'pb-')) }, logs[1]);
  try {
    s.sandbox.configureApp(s.appId, {
      webhookUrl: `${a.url}/api/provider/webhooks`,
      webhookVerifyToken: 'bench-verify-token-0001',
    });
    const started = Date.now();
    const ids = new Set<string>();
    let next = 0;
    let killedAtSends = -1;
    let retriedAfterKill = 0;
    let retriedUnavailable = 0;
    const send = async (base: string, i: number) =>
      fetch(`${base}/api/v1/external/messaging/messages`, {
        method: 'POST',
        headers: {
          authorization: s.portal.token,
          'content-type': 'application/json',
          'idempotency-key': `bench-${i}`,
        },
        body: body(s.numbers[i % s.numbers.length]!, 10_000 + i),
      });
    const killer = waitFor(async () => s.sandbox.cloud.stats().sends >= KILL_RUN / 2, 300_000).then(
      () => {
        killedAtSends = s.sandbox.cloud.stats().sends;
        b.child.kill('SIGKILL');
      },
    );
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < KILL_RUN) {
          const i = next++;
          const useB = i % 2 === 1 && killedAtSends < 0;
          let res: Response;
          try {
            res = await send(useB ? b.url : a.url, i);
          } catch {
            // The kill cut this request off: the send may or may not have been queued.
            retriedAfterKill++;
            res = await send(a.url, i);
          }
          // 503 `unavailable` asks the client to retry later (storage answered too slowly, as
          // on a loaded machine): a client retries with the same Idempotency-Key.
          for (let tries = 0; res.status === 503 && tries < 10; tries++) {
            retriedUnavailable++;
            await sleep(500);
            res = await send(a.url, i);
          }
          if (res.status !== 202) throw new Error(`send ${i}: ${res.status} ${await res.text()}`);
          ids.add(((await res.json()) as { data: { id: string } }).data.id);
        }
      }),
    );
    const queuedS = (Date.now() - started) / 1000;
    await killer;
    const count = async () => {
      const r: unknown = await s.storage.db.execute(
        sql`select count(*)::int as n from messages where status in ('delivered','read')`,
      );
      return (r as { rows: { n: number }[] }).rows[0]!.n;
    };
    await waitFor(async () => (await count()) >= ids.size, 300_000);
    const delivered = await count();
    const stats = s.sandbox.cloud.stats();
    // What became of any message not delivered: its row, its leases, the sandbox's count of it.
    const notDelivered: unknown = await s.storage.db.execute(
      sql`select m.id, m.status, m.error_code, m.provider_message_id is not null as has_wamid,
            m.delivery_due_at, m.delivery_attempts
          from messages m where m.status not in ('delivered','read') limit 20`,
    );
    const undelivered = (notDelivered as { rows: { id: string }[] }).rows.map((r) => ({
      ...r,
      sandboxSends: s.sandbox.cloud.sendsOf(r.id),
    }));
    return {
      queued: ids.size,
      queuedInS: queuedS,
      killedAtSends,
      retriedAfterKill,
      retriedUnavailable,
      delivered,
      lost: ids.size - delivered,
      duplicatedAtProvider: stats.duplicates,
      totalS: (Date.now() - started) / 1000,
      sandboxSends: stats.sends,
      webhookAnswers: s.sandbox.cloud.deliveries.reduce<Record<string, number>>((n, d) => {
        n[d.status] = (n[d.status] ?? 0) + 1;
        return n;
      }, {}),
      errorLogLines: logs.map(errorLines),
      undelivered,
    };
  } finally {
    a.child.kill('SIGTERM');
    b.child.kill('SIGKILL');
    await sleep(1000);
    await s.services.stop();
    await s.sandbox.close();
    await s.storage.close();
  }
}

/** Log lines at level error (50) or above in a pino JSON log file. */
function errorLines(file: string): number {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => /"level":(5|6)\d/.test(line)).length;
}

/** Part 1 and 2: each placement of the sandbox on a database of its own. */
async function acceptedParts(logDir: string) {
  const runs: Record<string, unknown>[] = [];
  for (const placement of ['inside', 'outside'] as const) {
    const db = await createThrowawayDatabase();
    if ('error' in db) throw new Error(`PostgreSQL: ${db.error}`);
    try {
      runs.push(
        await acceptedRun(db.url, placement, {
          endToEnd: placement === 'inside',
          acceptStatement: placement === 'outside',
          profile:
            process.env.BENCH_PROFILE === '1'
              ? join(logDir, `server-${placement}.cpuprofile`)
              : undefined,
        }),
      );
    } finally {
      await db.drop();
    }
  }
  return runs;
}

async function main() {
  const context = runContext();
  const results: Record<string, unknown> = { cpus: cpus().length, loadBefore: loadavg() };
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const logDir = join(RESULTS, `messaging-${stamp}-logs`);
  mkdirSync(logDir, { recursive: true });
  const only = process.env.BENCH_ONLY;
  if (!only || only === 'accepted') results.accepted = await acceptedParts(logDir);
  if (!only || only === 'kill') {
    const db = await createThrowawayDatabase();
    if ('error' in db) throw new Error(`PostgreSQL: ${db.error}`);
    try {
      results.killedInstance = await killedInstance(db.url, logDir);
      console.log('killedInstance', JSON.stringify(results.killedInstance));
    } finally {
      await db.drop();
    }
  }
  if (!only || only === 'inbound') {
    const db = await createThrowawayDatabase();
    if ('error' in db) throw new Error(`PostgreSQL: ${db.error}`);
    try {
      results.inbound = await inboundRun(db.url);
    } finally {
      await db.drop();
    }
  }
  if (!only || only === 'burst') {
    const runs: BurstRunResult[] = [];
    for (const admission of ['off', 'default'] as const) {
      const db = await createThrowawayDatabase();
      if ('error' in db) throw new Error(`PostgreSQL: ${db.error}`);
      try {
        runs.push(
          await burstRun(
            db.url,
            admission,
            process.env.BENCH_PROFILE === '1'
              ? join(logDir, `server-burst-${admission}.cpuprofile`)
              : undefined,
          ),
        );
      } finally {
        await db.drop();
      }
    }
    results.burst = runs;
  }
  results.loadAfter = loadavg();
  const file = join(RESULTS, `messaging-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
  for (const run of (results.accepted ?? []) as Record<string, unknown>[]) summary(run);
  if (results.inbound) inboundSummary(results.inbound as InboundRunResult);
  console.log(`written ${file}`);
  // A partial run (BENCH_ONLY) leaves the page as it is: its figures belong together.
  if (!only) {
    await redrawSection(
      'messaging',
      messagingSection(
        context.line('npm run bench:messaging'),
        results.accepted as AcceptedRunResult[],
        results.killedInstance as KillRunResult,
        results.inbound as InboundRunResult,
      ),
    );
    console.log('docs/performance.md: the messaging section redrawn');
  }
}

/** One line per placement: accepted/s, p99, the pgbench reference and the ratio. */
function summary(run: Record<string, unknown>) {
  const sends = run.accepted as { perSecond: number; p99Ms: number; deliveredPerSecond: number };
  const inserts = run.pgbenchSingleInserts as { tps?: number; missing?: string };
  const reference =
    inserts.tps === undefined
      ? `no pgbench reference: ${inserts.missing}`
      : `pgbench single inserts ${inserts.tps.toFixed(0)}/s, ratio ${(run.ratio as number).toFixed(3)}`;
  console.log(
    `sandbox ${String(run.placement)} the server's process: ${sends.perSecond.toFixed(0)} accepted/s, p99 ${sends.p99Ms} ms, ${sends.deliveredPerSecond.toFixed(0)} handed to the provider/s meanwhile; ${reference}`,
  );
  const statement = run.pgbenchAcceptStatement as { tps?: number } | undefined;
  if (statement?.tps !== undefined)
    console.log(`pgbench, the send's statement: ${statement.tps.toFixed(0)}/s`);
}

/** One line: stored/s, the webhook's p50 / p99, the pgbench reference. */
function inboundSummary(r: InboundRunResult) {
  const inserts = r.pgbenchSingleInserts;
  const reference =
    'tps' in inserts
      ? `pgbench single inserts (${r.inFlight} clients) ${inserts.tps.toFixed(0)}/s`
      : `no pgbench reference: ${inserts.missing}`;
  console.log(
    `inbound: ${r.stored} of ${r.sent} messages stored in ${r.durationS.toFixed(1)} s, ` +
      `${r.storedPerSecond.toFixed(0)}/s; webhook of ${r.batchSize} p50 ` +
      `${r.webhookP50Ms.toFixed(0)} ms, p99 ${r.webhookP99Ms.toFixed(0)} ms, answers ` +
      `${JSON.stringify(r.answers)}; sample row sealed ${r.sealedSample.sealed}, plaintext in ` +
      `row ${r.sealedSample.plaintextInRow}; ${reference}`,
  );
}

await main();
