/**
 * Parts 1 and 2 of `npm run bench:messaging` (see bench/messaging.ts): accepted sends per second
 * against Portico in a process of its own with the sandbox inside or outside it, the same run's
 * `pgbench` references, and the time from a 202 to `delivered`.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { queuedMessageStatement } from '../src/messaging/outbound/message-insert.ts';
import { startSandboxProvider } from '../src/sandbox-provider/sandbox-provider.tsx';
import type { FromMessagingServer, ToMessagingServer } from './messaging-server.ts';
import { pgbenchSingleInserts, runPgbench, type PgbenchResult } from './pgbench.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const E2E = Number(process.env.BENCH_E2E ?? 200);
const CONNECTIONS = 50;
const SERVER = fileURLToPath(new URL('./messaging-server.ts', import.meta.url));
const BUILD_DIR = fileURLToPath(new URL('./results/build-messaging/', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../scripts/bundle.mjs', import.meta.url));
const MIGRATIONS = fileURLToPath(new URL('../src/db/migrations', import.meta.url));
const REDIRECT_URI = 'http://localhost:3000/api/auth/partner/callback';
const VERIFY_TOKEN = 'bench-verify-token-0001';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** A send of `hello_world` to a distinct number that never ends in 0000 (the sandbox fails those). */
export const body = (from: string, i: number) =>
  JSON.stringify({
    to: `+1650${2_000_000 + ((i * 10 + 1) % 7_000_000)}`,
    from,
    type: 'template',
    template: { name: 'hello_world', language: 'en_US' },
  });

export async function waitFor(cond: () => Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

let built: string | undefined;

/** messaging-server.ts bundled as `npm start` runs dist/main.js (no TypeScript loader). */
function builtServer(): string {
  if (built) return built;
  rmSync(BUILD_DIR, { recursive: true, force: true });
  execFileSync(process.execPath, [BUNDLE, BUILD_DIR, SERVER], { stdio: 'inherit' });
  cpSync(MIGRATIONS, join(BUILD_DIR, 'migrations'), { recursive: true });
  built = join(BUILD_DIR, 'messaging-server.js');
  return built;
}

function answer<T extends FromMessagingServer['type']>(child: ChildProcess, type: T) {
  return new Promise<Extract<FromMessagingServer, { type: T }>>((resolve, reject) => {
    const onMessage = (m: FromMessagingServer) => {
      if (m.type === type || m.type === 'error') {
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (m.type === 'error') reject(new Error(`messaging server: ${m.message}`));
        else resolve(m as Extract<FromMessagingServer, { type: T }>);
      }
    };
    const onExit = (code: number | null) => reject(new Error(`messaging server exited (${code})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

type Placement = 'inside' | 'outside';

/**
 * Portico in its own process, its portal connected to a sandbox inside it or in this process;
 * `extraEnv` adds to (or overrides) the server's environment.
 */
export async function startServer(
  dbUrl: string,
  placement: Placement,
  extraEnv: Record<string, string> = {},
) {
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: dbUrl,
    RATE_LIMIT_PER_MINUTE: '1000000',
    // Meta's highest throughput of a business number.
    MESSAGING_RATE_PER_NUMBER: '1000',
    TOKEN_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    BENCH_SANDBOX: placement,
    ...extraEnv,
  };
  let sandbox: Awaited<ReturnType<typeof startSandboxProvider>> | undefined;
  const appId = '424242424';
  if (placement === 'outside') {
    const appSecret = randomBytes(24).toString('hex');
    sandbox = await startSandboxProvider({
      port: 0,
      apps: [{ appId, appSecret, redirectUris: [REDIRECT_URI] }],
    });
    Object.assign(env, {
      PROVIDER_AUTHORIZATION_BASE_URL: sandbox.url,
      PROVIDER_GRAPH_BASE_URL: sandbox.url,
      PROVIDER_APP_ID: appId,
      PROVIDER_APP_SECRET: appSecret,
      PROVIDER_REDIRECT_URI: REDIRECT_URI,
      PROVIDER_WEBHOOK_VERIFY_TOKEN: VERIFY_TOKEN,
      BENCH_AUTHORIZATION_CODE: sandbox.authorize({ appId, redirectUri: REDIRECT_URI }),
    });
  }
  const child = fork(builtServer(), [], {
    execArgv: ['--enable-source-maps'],
    env: { ...process.env, ...env },
    // The access log goes to /dev/null: it is written, not read.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await answer(child, 'ready');
  sandbox?.configureApp(appId, {
    webhookUrl: `http://127.0.0.1:${ready.port}/api/provider/webhooks`,
    webhookVerifyToken: VERIFY_TOKEN,
  });
  return {
    ...ready,
    dbUrl,
    url: `http://127.0.0.1:${ready.port}`,
    /** The sandbox in this process (`outside` only). */
    sandbox,
    async ask(message: ToMessagingServer) {
      const done = answer(child, 'profiled');
      child.send(message);
      return done;
    },
    async cpuMicros() {
      const done = answer(child, 'cpu');
      child.send({ type: 'cpu' } satisfies ToMessagingServer);
      return (await done).micros;
    },
    async stop() {
      if (child.exitCode === null) child.send({ type: 'stop' } satisfies ToMessagingServer);
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
      await sandbox?.close();
    },
  };
}

type Server = Awaited<ReturnType<typeof startServer>>;

async function accepted(server: Server, profile: string | undefined) {
  if (profile) await server.ask({ type: 'profile-start' });
  const cpuBefore = await server.cpuMicros();
  const startedAt = new Date();
  const result = await autocannon({
    url: `${server.url}/api/v1/external/messaging/messages`,
    connections: CONNECTIONS,
    duration: DURATION_S,
    method: 'POST',
    headers: { authorization: server.token, 'content-type': 'application/json' },
    body: body(server.from, 1),
  });
  const endedAt = new Date();
  const cpu = (await server.cpuMicros()) - cpuBefore;
  if (profile) await server.ask({ type: 'profile-stop', path: profile });
  return {
    perSecond: result.requests.average,
    /** Messages handed to the provider per second while the sends were arriving. */
    deliveredPerSecond: (await handedOver(server.dbUrl, startedAt, endedAt)) / DURATION_S,
    /** The server's CPU time per accepted send (its delivery work included), µs. */
    serverCpuPerSendUs: cpu / Math.max(1, result['2xx']),
    serverCpuShare: cpu / 1e6 / DURATION_S,
    accepted: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}

/**
 * Messages whose send attempt (the worker's commit right before the provider call) falls in
 * `[from, to)` and that the provider accepted (they have a wamid).
 */
async function handedOver(dbUrl: string, from: Date, to: Date): Promise<number> {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from messages where direction = 'outbound'
       and provider_message_id is not null and send_attempted_at >= $1 and send_attempted_at < $2`,
      [from, to],
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

/**
 * The send's statement exactly as message-insert.ts builds it, as a pgbench script: a block
 * big enough for the run, fresh message and transaction ids per execution.
 */
async function pgbenchAcceptStatement(dbUrl: string, portalId: number): Promise<PgbenchResult> {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  let leaseId: number;
  try {
    const { rows } = await client.query<{ id: string }>(
      `insert into credit_leases (portal_id, holder, amount) values ($1, 'pgbench', 1e15)
       returning id`,
      [portalId],
    );
    leaseId = Number(rows[0]!.id);
  } finally {
    await client.end();
  }
  const messageId = 'msg_PGBENCH_MESSAGE_ID';
  const transactionId = 'ctx_PGBENCH_TRANSACTION_ID';
  const statement = queuedMessageStatement(
    {
      id: messageId,
      portalId,
      waId: '+16502000011',
      contactId: null,
      phoneNumberId: '1234567890',
      type: 'template',
      templateName: 'hello_world',
      templateLanguage: 'en_US',
      templateCategory: 'UTILITY',
      content: null,
      priceMinor: 4,
      currency: 'EUR',
    },
    { leaseId, actor: 'api', transactionId },
  );
  const { sql: text, params } = new PgDialect().sqlToQuery(statement);
  const literal = (v: unknown) =>
    v === null
      ? 'null'
      : v === messageId
        ? `'msg_' || md5(random()::text)`
        : v === transactionId
          ? `'ctx_' || md5(random()::text)`
          : typeof v === 'number' || typeof v === 'boolean'
            ? String(v)
            : `'${(typeof v === 'string' ? v : JSON.stringify(v)).replaceAll("'", "''")}'`;
  const script = text.replace(/\$(\d+)/g, (_, n: string) => literal(params[Number(n) - 1]));
  return runPgbench(dbUrl, `${script.replace(/\s+/g, ' ')};\n`, {
    clients: CONNECTIONS,
    durationS: DURATION_S,
  });
}

const tpsOf = (r: PgbenchResult) => ('tps' in r ? r.tps : null);

/** One placement: accepted sends, then the same run's pgbench single inserts; e2e when asked. */
export async function acceptedRun(
  dbUrl: string,
  placement: Placement,
  options: { endToEnd: boolean; acceptStatement: boolean; profile?: string | undefined },
) {
  const server = await startServer(dbUrl, placement);
  let stopped = false;
  try {
    const sends = await accepted(server, options.profile);
    const inserts = await pgbenchSingleInserts(dbUrl, {
      clients: CONNECTIONS,
      durationS: DURATION_S,
    });
    const reference = tpsOf(inserts);
    const result: Record<string, unknown> = {
      placement,
      accepted: sends,
      pgbenchSingleInserts: inserts,
      ratio: reference === null ? null : sends.perSecond / reference,
    };
    console.log(placement, JSON.stringify(result));
    if (options.endToEnd) result.endToEnd = await endToEnd(dbUrl, server);
    await server.stop();
    stopped = true;
    // With no server running: its workers would take the statement's messages.
    if (options.acceptStatement)
      result.pgbenchAcceptStatement = await pgbenchAcceptStatement(dbUrl, server.portalId);
    return result;
  } finally {
    if (!stopped) await server.stop();
  }
}

/** Drain what autocannon queued, then time BENCH_E2E sends (20 a second) from 202 to delivered. */
async function endToEnd(dbUrl: string, server: Server) {
  const db = new pg.Client({ connectionString: dbUrl });
  await db.connect();
  try {
    // Fail the queued messages and release exactly their reservations, in one statement (the
    // workers find them failed and do nothing), then wait for the batches in hand to end.
    await db.query(`with drained as (
        update messages set status = 'failed', failed_at = now(), error_code = 'bench_drained'
        where status = 'queued' returning portal_id, price_minor),
      released as (
        update credit_accounts c set reserved = c.reserved - d.total
        from (select portal_id, sum(price_minor) as total from drained group by portal_id) d
        where c.portal_id = d.portal_id)
      select count(*) from drained`);
    const busy = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            `select count(*) as n from messages where delivery_due_at is not null`,
          )
        ).rows[0]!.n,
      );
    await waitFor(async () => (await busy()) === 0, 120_000);
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const collect = async () => {
      if (sentAt.size === 0) return;
      const { rows } = await db.query<{ id: string }>(
        `select id from messages where status in ('delivered', 'read') and id = any($1)`,
        [[...sentAt.keys()]],
      );
      const now = performance.now();
      for (const r of rows) {
        latencies.push(now - sentAt.get(r.id)!);
        sentAt.delete(r.id);
      }
    };
    for (let i = 0; i < E2E; i++) {
      const res = await fetch(`${server.url}/api/v1/external/messaging/messages`, {
        method: 'POST',
        headers: { authorization: server.token, 'content-type': 'application/json' },
        body: body(server.from, 100 + i),
      });
      const sent = (await res.json()) as { data?: { id: string } };
      if (!sent.data) throw new Error(`send refused: ${res.status} ${JSON.stringify(sent)}`);
      sentAt.set(sent.data.id, performance.now());
      await sleep(50);
      await collect();
    }
    await waitFor(async () => (await collect(), sentAt.size === 0), 60_000);
    latencies.sort((a, b) => a - b);
    return {
      messages: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
    };
  } finally {
    await db.end();
  }
}
