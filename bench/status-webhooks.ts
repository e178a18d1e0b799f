/**
 * `npm run bench:statuses`: how long Portico takes to answer a provider webhook of many message
 * statuses (the Cloud API's `statuses` array), and how many statuses a second it applies, on
 * PostgreSQL and PGlite.
 *
 * Portico runs in this process (services and app as `npm start` composes them, listening on a
 * free port), connected through the sandbox provider. Two shapes of traffic, each on fresh
 * queued messages seeded in one set-based insert:
 *
 * - one webhook of many statuses (BENCH_STATUS_SIZES, default 1,000, 4,000 and 10,000): `sent`
 *   then `delivered` for each of half as many messages, POSTed over HTTP by a client in a worker
 *   thread (as the provider, it does not wait for the server's event loop) and timed there until
 *   its answer; then the time until this instance has applied them all (`statusesApplied`),
 *   from the same start. One of the size not counted (a warm-up), then three, the medians
 *   reported;
 * - one status a webhook (as the sandbox sends them): BENCH_STATUS_SINGLES webhooks (default
 *   2,000: `sent` then `delivered` of 1,000 messages), POSTed 20 at a time, each answer timed;
 *   statuses applied a second from the first POST until all were applied.
 *
 * The reference, in the same run: `pgbench` single-row inserts (one row a transaction, 10
 * clients, 10 s) on the PostgreSQL server (bench/pgbench.ts); applied statuses a second are
 * reported beside it. The answer's time is what matters to the provider: Meta sends a webhook
 * again when its answer is late.
 *
 * Writes `bench/results/statuses-<time>.json`, prints the figures with the load average, and
 * redraws its section of docs/performance.md (`<!-- bench:statuses -->`).
 *
 * @see docs/performance.md
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#message-status-updates
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { buildApp } from '../src/app.ts';
import { CLI_ACTOR } from '../src/audit/audit-log.ts';
import { parseConfig } from '../src/config.ts';
import { openStorage, type Storage } from '../src/db/client.ts';
import type { ValidatedAuthorizationCode } from '../src/partner/oauth/authorization-response.ts';
import { createLogger } from '../src/platform/logger.ts';
import { startSandboxProvider } from '../src/sandbox-provider/sandbox-provider.tsx';
import { createServices } from '../src/services.ts';
import { figure, redrawSection, runContext, table } from './performance-doc.ts';
import { pgbenchSingleInserts, type PgbenchResult } from './pgbench.ts';
import { BENCH_DATABASE_URL, createThrowawayDatabase } from './postgres.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const SIZES = (process.env.BENCH_STATUS_SIZES ?? '1000,4000,10000').split(',').map(Number);
const SINGLES = Number(process.env.BENCH_STATUS_SINGLES ?? 2000);
/** Webhooks of one status in flight at once. */
const CONCURRENCY = 20;
const BACKENDS = (process.env.BENCH_STATUS_BACKENDS ?? 'postgres,pglite').split(',');
const REPEATS = 3;
const T0 = 1_764_000_000;

interface SizeResult {
  statuses: number;
  webhookMs: number[];
  medianMs: number;
  answers: number[];
  /** From the POST's start until every status was applied, ms. */
  appliedMs: number[];
  appliedMedianMs: number;
  /** Statuses applied a second, from the median. */
  perSecond: number;
}

interface SinglesResult {
  webhooks: number;
  /** Answer times, ms: median and 99th percentile. */
  answerP50Ms: number;
  answerP99Ms: number;
  answers: Record<string, number>;
  appliedMs: number;
  perSecond: number;
}

/** Portico on `storage`, a portal connected through the sandbox, listening. */
async function start(storage: Storage) {
  const appId = '424242424';
  const appSecret = randomBytes(24).toString('hex');
  const redirectUri = 'http://localhost:3000/api/auth/partner/callback';
  const sandbox = await startSandboxProvider({
    port: 0,
    apps: [{ appId, appSecret, redirectUris: [redirectUri] }],
  });
  const config = parseConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-bench-statuses-')),
    PROVIDER_AUTHORIZATION_BASE_URL: sandbox.url,
    PROVIDER_GRAPH_BASE_URL: sandbox.url,
    PROVIDER_APP_ID: appId,
    PROVIDER_APP_SECRET: appSecret,
    PROVIDER_REDIRECT_URI: redirectUri,
    PROVIDER_WEBHOOK_VERIFY_TOKEN: 'bench-verify-token-0001',
    TOKEN_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const logger = createLogger('warn');
  const services = createServices({ config, storage, logger });
  await services.messaging.start();
  const app = await buildApp({ services, logger });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const portal = await services.accounts.createPortal({
    name: 'Bench',
    adminEmail: 'bench@statuses.test',
    actor: CLI_ACTOR,
  });
  const portalId = await services.accounts.portalIdFor(portal.portalCode);
  await services.partner.completeAuthorization({
    portalId,
    userId: portal.userId,
    authorizationCode: sandbox.authorize({ appId, redirectUri }) as ValidatedAuthorizationCode,
  });
  await services.messaging.addCredit({ portalId, amount: 1e12, note: 'bench', actor: CLI_ACTOR });
  const wabaId = (await services.partner.wabaIdsOf(portalId))[0]!;
  const [number] = await services.messagingProvider.numbers(portalId);
  return {
    services,
    portalId,
    wabaId,
    phoneNumberId: number!.id,
    url,
    appSecret,
    async stop() {
      await app.close();
      await services.stop();
      await sandbox.close();
    },
  };
}

type Started = Awaited<ReturnType<typeof start>>;

/**
 * `n` fresh queued messages of the portal, each with its reservation (the account's `reserved`
 * raised by their prices, a posted `reserve` row each), in one statement; their ids.
 */
async function seed(s: Started, tag: string, n: number): Promise<string[]> {
  const result: unknown = await s.services.storage.db.execute(sql`
    with inserted as (
      insert into messages (id, portal_id, direction, wa_id, phone_number_id, type, template_name,
        template_language, template_category, status, queued_at, price_minor, currency)
      select 'msg_' || ${tag} || g, ${s.portalId}, 'outbound', '+16505550101', ${s.phoneNumberId},
        'template', 'hello_world', 'en_US', 'UTILITY', 'queued', now(), 10, 'EUR'
      from generate_series(1, ${n}) g
      returning id, price_minor),
    reserved as (
      insert into credit_transactions (id, portal_id, kind, amount, currency, message_id, actor)
      select 'ctx_' || id, ${s.portalId}, 'reserve', price_minor, 'EUR', id, 'api' from inserted),
    account as (
      update credit_accounts set reserved = reserved + (select sum(price_minor) from inserted)
      where portal_id = ${s.portalId})
    select id from inserted`);
  return (result as { rows: { id: string }[] }).rows.map((r) => r.id);
}

/** A status item as the Cloud API sends it (without pricing). */
const item = (id: string, status: string, second: number) => ({
  id: `wamid.${id}`,
  status,
  timestamp: String(T0 + second),
  recipient_id: '16505550101',
  biz_opaque_callback_data: id,
});

/** A webhook body: `sent` for every message, then `delivered` for every one. */
function webhookBody(s: Started, ids: readonly string[]): string {
  return bodyOf(s, [
    ...ids.map((id) => item(id, 'sent', 1)),
    ...ids.map((id) => item(id, 'delivered', 2)),
  ]);
}

/** A webhook body carrying `statuses`. */
function bodyOf(s: Started, statuses: object[]): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: s.wabaId,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550111234', phone_number_id: s.phoneNumberId },
              statuses,
            },
          },
        ],
      },
    ],
  });
}

/**
 * The client: POSTs the bodies it is sent, `concurrency` at a time, and answers with each
 * one's time to its answer (ms) and status.
 */
const CLIENT = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', async ({ url, posts, concurrency }) => {
  const out = new Array(posts.length);
  let next = 0;
  async function lane() {
    while (next < posts.length) {
      const i = next++;
      const t0 = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': 'sha256=' + posts[i].signature,
        },
        body: posts[i].body,
      });
      await res.arrayBuffer();
      out[i] = { ms: performance.now() - t0, status: res.status };
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane));
  parentPort.postMessage(out);
});`;
const client = new Worker(CLIENT, { eval: true });

/**
 * POST the signed webhooks from the client, `concurrency` at a time; each answer's time and
 * status, then the time from the first POST until every status was applied (ms).
 */
async function postWebhooks(
  s: Started,
  bodies: readonly string[],
  concurrency: number,
): Promise<{ answers: { ms: number; status: number }[]; appliedMs: number }> {
  const posts = bodies.map((body) => ({
    body,
    signature: createHmac('sha256', s.appSecret).update(body).digest('hex'),
  }));
  const t0 = performance.now();
  const answered = new Promise<{ ms: number; status: number }[]>((resolve) =>
    client.once('message', resolve),
  );
  client.postMessage({ url: `${s.url}/api/provider/webhooks`, posts, concurrency });
  const answers = await answered;
  await s.services.messaging.statusesApplied();
  return { answers, appliedMs: performance.now() - t0 };
}

/** POST one signed webhook; its answer's time, then the time to apply it. */
async function postWebhook(
  s: Started,
  body: string,
): Promise<{ ms: number; status: number; appliedMs: number }> {
  const { answers, appliedMs } = await postWebhooks(s, [body], 1);
  return { ...answers[0]!, appliedMs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function runSize(s: Started, size: number, run: string): Promise<SizeResult> {
  const messages = Math.ceil(size / 2);
  const webhookMs: number[] = [];
  const appliedMs: number[] = [];
  const answers: number[] = [];
  // One webhook of the size first, not counted: the server's first run of each statement and
  // of its code (compiling, planning) is not what a running service pays.
  await postWebhook(s, webhookBody(s, await seed(s, `${run}s${size}wn`, messages)));
  for (let r = 0; r < REPEATS; r++) {
    const ids = await seed(s, `${run}s${size}r${r}n`, messages);
    const { ms, status, appliedMs: applied } = await postWebhook(s, webhookBody(s, ids));
    webhookMs.push(ms);
    appliedMs.push(applied);
    answers.push(status);
  }
  return {
    statuses: messages * 2,
    webhookMs,
    medianMs: median(webhookMs),
    answers,
    appliedMs,
    appliedMedianMs: median(appliedMs),
    perSecond: (messages * 2) / (median(appliedMs) / 1000),
  };
}

/** `SINGLES` webhooks of one status each (`sent` of every message, then `delivered`). */
async function runSingles(s: Started, run: string): Promise<SinglesResult> {
  const ids = await seed(s, `${run}one`, Math.ceil(SINGLES / 2));
  const bodies = [
    ...ids.map((id) => bodyOf(s, [item(id, 'sent', 1)])),
    ...ids.map((id) => bodyOf(s, [item(id, 'delivered', 2)])),
  ];
  const { answers, appliedMs } = await postWebhooks(s, bodies, CONCURRENCY);
  const times = answers.map((a) => a.ms).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  return {
    webhooks: bodies.length,
    answerP50Ms: times[Math.floor(times.length / 2)]!,
    answerP99Ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]!,
    answers: statuses,
    appliedMs,
    perSecond: bodies.length / (appliedMs / 1000),
  };
}

async function onBackend(
  backend: string,
): Promise<{ sizes: SizeResult[]; singles: SinglesResult }> {
  let storage: Storage;
  let drop = async () => {};
  if (backend === 'postgres') {
    const db = await createThrowawayDatabase();
    if ('error' in db) throw new Error(`PostgreSQL: ${db.error}`);
    storage = await openStorage({ kind: 'postgres', url: db.url, poolSize: 10 });
    drop = () => db.drop();
  } else {
    const dataDir = mkdtempSync(join(tmpdir(), 'portico-bench-statuses-pglite-'));
    storage = await openStorage({ kind: 'pglite', dataDir });
  }
  try {
    await storage.migrate();
    const s = await start(storage);
    try {
      const results: SizeResult[] = [];
      for (const size of SIZES) {
        const r = await runSize(s, size, backend.slice(0, 2));
        console.log(
          `${backend}: ${r.statuses} statuses, webhook ${r.webhookMs.map((m) => m.toFixed(0)).join(' / ')} ms ` +
            `(median ${r.medianMs.toFixed(0)}), answers ${r.answers.join(',')}; ` +
            `applied ${r.appliedMs.map((m) => m.toFixed(0)).join(' / ')} ms; ` +
            `${r.perSecond.toFixed(0)} statuses/s`,
        );
        results.push(r);
      }
      // A warm-up of the one-status path, not counted, then the run.
      await runSingles(s, `${backend.slice(0, 2)}w`);
      const one = await runSingles(s, backend.slice(0, 2));
      console.log(
        `${backend}: ${one.webhooks} webhooks of one status, answered p50 ${one.answerP50Ms.toFixed(0)} ms, ` +
          `p99 ${one.answerP99Ms.toFixed(0)} ms (${JSON.stringify(one.answers)}); all applied in ` +
          `${one.appliedMs.toFixed(0)} ms: ${one.perSecond.toFixed(0)} statuses/s`,
      );
      return { sizes: results, singles: one };
    } finally {
      await s.stop();
    }
  } finally {
    await storage.close();
    await drop();
  }
}

async function main() {
  const context = runContext();
  const results: Record<string, { sizes: SizeResult[]; singles: SinglesResult }> = {};
  for (const backend of BACKENDS) results[backend] = await onBackend(backend);
  await client.terminate();
  // The reference, after the runs (the same server, the same minutes).
  const reference: PgbenchResult = await pgbenchSingleInserts(BENCH_DATABASE_URL, {
    clients: 10,
    durationS: 10,
  });
  const refLine =
    'missing' in reference
      ? `pgbench: ${reference.missing}`
      : `pgbench single-row inserts (10 clients, 10 s): ${figure(reference.tps)} transactions/s`;
  console.log(refLine);
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `statuses-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ ...context.finish(), loadBefore: context.loadBefore, results, reference }, null, 2)}\n`,
  );
  const name = (backend: string) => (backend === 'postgres' ? 'PostgreSQL' : 'PGlite');
  const ratio = (perSecond: number) =>
    'missing' in reference ? '–' : `${(perSecond / reference.tps).toFixed(2)}×`;
  const sizeRows = Object.entries(results).flatMap(([backend, { sizes }]) =>
    sizes.map((r) => [
      name(backend),
      figure(r.statuses),
      `${figure(r.medianMs)} ms (${r.webhookMs.map((m) => figure(m)).join(', ')})`,
      r.answers.every((a) => a === 200) ? `${r.answers.length} × 200` : r.answers.join(', '),
      `${figure(r.appliedMedianMs)} ms (${r.appliedMs.map((m) => figure(m)).join(', ')})`,
      figure(r.perSecond),
      ratio(r.perSecond),
    ]),
  );
  const singleRows = Object.entries(results).map(([backend, { singles: r }]) => [
    name(backend),
    figure(r.webhooks),
    `${figure(r.answerP50Ms)} ms / ${figure(r.answerP99Ms)} ms`,
    Object.entries(r.answers)
      .map(([status, n]) => `${figure(n)} × ${status}`)
      .join(', '),
    `${figure(r.appliedMs)} ms`,
    figure(r.perSecond),
    ratio(r.perSecond),
  ]);
  const section = [
    context.line('npm run bench:statuses'),
    '',
    `Reference in the same run: ${refLine}, on the PostgreSQL server the PostgreSQL rows used.`,
    '',
    `One signed webhook of \`sent\` then \`delivered\` for each of half as many fresh queued messages, POSTed over HTTP to Portico in the bench's process by a client in a worker thread and timed to its answer, then until all its statuses were applied (from the same start), ${REPEATS} times after one not counted (median, then each).`,
    '',
    table(
      [
        'database',
        'statuses',
        'answered (median; each)',
        'answers',
        'all applied (median; each)',
        'statuses/s',
        '÷ pgbench',
      ],
      sizeRows,
      [false, true, true, false, true, true, true],
    ),
    '',
    `One status a webhook (as the sandbox sends them): \`sent\` then \`delivered\` of half as many fresh messages, ${CONCURRENCY} webhooks in flight at once, after one such run not counted; statuses applied a second from the first POST until all were applied.`,
    '',
    table(
      [
        'database',
        'webhooks',
        'answered (p50 / p99)',
        'answers',
        'all applied',
        'statuses/s',
        '÷ pgbench',
      ],
      singleRows,
      [false, true, true, false, true, true, true],
    ),
  ].join('\n');
  await redrawSection('statuses', section);
  console.log(`written ${file}; docs/performance.md: the statuses section redrawn`);
}

await main();
