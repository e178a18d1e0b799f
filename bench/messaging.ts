/**
 * `npm run bench:messaging`: the messaging area on PostgreSQL, against the sandbox provider.
 *
 * 1. Accepted sends per second: autocannon, 50 connections, 10 s, `POST /messaging/messages`
 *    (a template) to the app in this process (workers off, so the figure is the API's).
 * 2. End to end: BENCH_E2E messages sent 20 per second with the workers on; the time from the
 *    202 to the message being `delivered` in the database (polled every 10 ms): p50 and p99, ms.
 *    The sandbox's default status delays (sent 200 ms, delivered 400 ms after the send) are in it.
 * 3. Two spawned instances (dist/main.js) on one database: BENCH_KILL_RUN messages queued, one
 *    instance SIGKILLed when the sandbox has received half; then: delivered, lost (never sent by
 *    the deadline), duplicated at the provider (sends per biz_opaque_callback_data > 1).
 *
 * Writes `bench/results/messaging-<time>.json`; prints the figures with the load average.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { sql } from 'drizzle-orm';
import { buildApp } from '../src/app.ts';
import { CLI_ACTOR } from '../src/audit/audit-log.ts';
import { parseConfig } from '../src/config.ts';
import { openStorage } from '../src/db/client.ts';
import { createLogger } from '../src/platform/logger.ts';
import { startSandboxProvider } from '../src/sandbox-provider/sandbox-provider.tsx';
import { createServices } from '../src/services.ts';
import { createThrowawayDatabase } from './postgres.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const E2E = Number(process.env.BENCH_E2E ?? 200);
const KILL_RUN = Number(process.env.BENCH_KILL_RUN ?? 5000);
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
  const numbers = (await services.messaging.listNumbers({ portalId })).map((n) => n.id);
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

const body = (from: string, i: number) =>
  JSON.stringify({
    to: `+1650${2_000_000 + (i % 7_000_000)}`,
    from,
    type: 'template',
    template: { name: 'hello_world', language: 'en_US', parameters: ['Ada'] },
  });

async function acceptedAndEndToEnd(dbUrl: string) {
  const s = await setUp(dbUrl, {});
  const app = await buildApp({ services: s.services, logger: createLogger('warn') });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  s.sandbox.configureApp(s.appId, {
    webhookUrl: `${url}/api/provider/webhooks`,
    webhookVerifyToken: 'bench-verify-token-0001',
  });
  const result = await autocannon({
    url: `${url}/api/v1/external/messaging/messages`,
    connections: 50,
    duration: 10,
    method: 'POST',
    headers: { authorization: s.portal.token, 'content-type': 'application/json' },
    body: body(s.from, 1),
  });
  const accepted = {
    perSecond: result.requests.average,
    non2xx: result.non2xx,
    p99Ms: result.latency.p99,
  };
  // Drain what autocannon queued before measuring end to end (no backlog in the figures).
  await s.storage.db.execute(sql`update messages set status = 'failed' where status = 'queued'`);
  await s.storage.db.execute(sql`update credit_accounts set reserved = 0`);
  console.log('accepted', JSON.stringify(accepted));
  await s.services.messaging.startWorkers();
  await waitFor(async () => (await s.services.messaging.waitingJobs()) === 0, 120_000);
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  for (let i = 0; i < E2E; i++) {
    const res = await fetch(`${url}/api/v1/external/messaging/messages`, {
      method: 'POST',
      headers: { authorization: s.portal.token, 'content-type': 'application/json' },
      body: body(s.from, 100 + i),
    });
    const answer = (await res.json()) as { data?: { id: string } };
    if (!answer.data) throw new Error(`send refused: ${res.status} ${JSON.stringify(answer)}`);
    sentAt.set(answer.data.id, performance.now());
    await sleep(50);
    await collect(s, sentAt, latencies);
  }
  await waitFor(async () => (await collect(s, sentAt, latencies), sentAt.size === 0), 60_000);
  latencies.sort((a, b) => a - b);
  await app.close();
  await s.services.messaging.stop();
  await s.sandbox.close();
  await s.storage.close();
  return {
    accepted,
    endToEnd: {
      messages: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
    },
  };
}

async function collect(
  s: Awaited<ReturnType<typeof setUp>>,
  pending: Map<string, number>,
  latencies: number[],
) {
  if (pending.size === 0) return;
  const result: unknown = await s.storage.db.execute(
    sql`select id from messages where status in ('delivered','read') and id in (${sql.join(
      [...pending.keys()].map((id) => sql`${id}`),
      sql`, `,
    )})`,
  );
  const now = performance.now();
  for (const r of (result as { rows: { id: string }[] }).rows) {
    latencies.push(now - pending.get(r.id)!);
    pending.delete(r.id);
  }
}

async function waitFor(cond: () => Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

function startInstance(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
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
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('instance did not start')), 60_000);
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
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

async function killedInstance(dbUrl: string) {
  const s = await setUp(dbUrl, {});
  const env = {
    ...s.providerEnv,
    MESSAGING_JOB_EXPIRE_S: '10',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'pb-')),
  };
  const a = await startInstance(env);
  const b = await startInstance({ ...env, DATA_DIR: mkdtempSync(join(tmpdir(), 'pb-')) });
  try {
    s.sandbox.configureApp(s.appId, {
      webhookUrl: `${a.url}/api/provider/webhooks`,
      webhookVerifyToken: 'bench-verify-token-0001',
    });
    const started = Date.now();
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (next < KILL_RUN) {
          const i = next++;
          const res = await fetch(`${(i % 2 ? a : b).url}/api/v1/external/messaging/messages`, {
            method: 'POST',
            headers: { authorization: s.portal.token, 'content-type': 'application/json' },
            body: body(s.numbers[i % s.numbers.length]!, 10_000 + i),
          });
          if (res.status === 202)
            ids.push(((await res.json()) as { data: { id: string } }).data.id);
        }
      }),
    );
    const queuedS = (Date.now() - started) / 1000;
    await waitFor(async () => s.sandbox.cloud.stats().sends >= KILL_RUN / 2, 300_000);
    b.child.kill('SIGKILL');
    const killedAtSends = s.sandbox.cloud.stats().sends;
    const count = async () => {
      const r: unknown = await s.storage.db.execute(
        sql`select count(*)::int as n from messages where status in ('delivered','read')`,
      );
      return (r as { rows: { n: number }[] }).rows[0]!.n;
    };
    await waitFor(async () => (await count()) >= ids.length, 300_000);
    const delivered = await count();
    const stats = s.sandbox.cloud.stats();
    return {
      queued: ids.length,
      queuedInS: queuedS,
      killedAtSends,
      delivered,
      lost: ids.length - delivered,
      duplicatedAtProvider: stats.duplicates,
      totalS: (Date.now() - started) / 1000,
    };
  } finally {
    a.child.kill('SIGTERM');
    b.child.kill('SIGKILL');
    await sleep(1000);
    await s.services.messaging.stop();
    await s.sandbox.close();
    await s.storage.close();
  }
}

async function main() {
  const results: Record<string, unknown> = { cpus: cpus().length, loadBefore: loadavg() };
  for (const [name, run] of [
    ['acceptedAndEndToEnd', acceptedAndEndToEnd],
    ['killedInstance', killedInstance],
  ] as const) {
    const db = await createThrowawayDatabase();
    if ('error' in db) throw new Error(`PostgreSQL: ${db.error}`);
    try {
      results[name] = await run(db.url);
      console.log(name, JSON.stringify(results[name]));
    } finally {
      await db.drop();
    }
  }
  results.loadAfter = loadavg();
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `messaging-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
  console.log(`written ${file}`);
}

await main();
