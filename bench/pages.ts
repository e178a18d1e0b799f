/**
 * `npm run bench:pages`: time to first byte of the portal's pages with 100,000 rows in each of
 * their tables, on PGlite and on PostgreSQL.
 *
 * For each backend, the app runs in its own process (`server.ts`, the esbuild bundle, as
 * `npm start` runs), with a new portal; the server seeds BENCH_PAGES_ROWS (default 100,000)
 * contacts, messages (over the last 30 days, every status) and audit events into it, each
 * table with one set-based statement (`pages-seed.ts`), and as many inbound texts (sealed with
 * the server's keyring) in ROWS / 20 conversations. This process signs in through
 * `/login` like a browser, then loads each page shape: BENCH_PAGES_WARMUP requests (default
 * 40, not recorded), then BENCH_PAGES_REQUESTS (default 400) over BENCH_PAGES_CONNECTIONS
 * keep-alive connections at once (default 4), each connection sending its next request when
 * the previous answer has ended (`GET /messaging/conversations` with the portal's API token, as
 * an API client). Time to first byte: from the request written to the response's
 * head received. The deep shapes follow the page's own "next"/"older" link 99 times (page 100).
 *
 * Then, for each shape, the statements one load of it sends to the database, each read with its
 * plan and execution time (`EXPLAIN ANALYZE`). Goal: p99 ≤ 100 ms for every shape.
 *
 * Writes `bench/results/pages-<time>.json` and redraws its section of docs/performance.md
 * (`performance-doc.ts`; BENCH_WRITE_DOC=0 leaves the page alone). BENCH_CPU_PROF=1 writes a
 * V8 CPU profile of the server during each shape's measured loads to
 * `bench/results/profiles/<backend>-<shape>.cpuprofile`. PostgreSQL at
 * BENCH_DATABASE_URL (a throwaway database, dropped after); BENCH_PAGES_BACKENDS=postgres (or
 * pglite) runs one backend only.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSetCookie } from 'set-cookie-parser';
import { BENCH_RATE_LIMITS, startServer, type BenchServer } from './child.ts';
import { figure, redrawSection, runContext, table, verdict } from './performance-doc.ts';
import { createThrowawayDatabase } from './postgres.ts';
import { BENCH_CONVERSATION_ID, type TracedStatement } from './pages-seed.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const ROWS = Number(process.env.BENCH_PAGES_ROWS ?? 100_000);
const WARMUP = Number(process.env.BENCH_PAGES_WARMUP ?? 40);
const REQUESTS = Number(process.env.BENCH_PAGES_REQUESTS ?? 400);
const CONNECTIONS = Number(process.env.BENCH_PAGES_CONNECTIONS ?? 4);
const BACKENDS = (process.env.BENCH_PAGES_BACKENDS ?? 'pglite,postgres').split(',');
const WRITE_DOC = process.env.BENCH_WRITE_DOC !== '0';
const GOAL_P99_MS = 100;
/** BENCH_CPU_PROF=1: a V8 CPU profile of the server during each measured load (profiles/). */
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
const DEEP_PAGE = 100;
/** The pages answer on APP_BASE_URL's host only (development's canonical host). */
const HOST = 'portico.bench';

interface Shape {
  name: string;
  /** The first URL; `deep` follows the page's next link to page DEEP_PAGE. */
  path: string;
  deep?: boolean;
  /** An API route: sent with the portal's API token (JSON), not the session. */
  api?: boolean;
}

const SHAPES: Shape[] = [
  { name: '/messages', path: '/messages' },
  { name: `/messages page ${DEEP_PAGE}`, path: '/messages', deep: true },
  { name: '/messages?status=failed', path: '/messages?status=failed' },
  { name: '/contacts', path: '/contacts' },
  { name: `/contacts page ${DEEP_PAGE}`, path: '/contacts', deep: true },
  { name: '/audit', path: '/audit' },
  { name: `/audit page ${DEEP_PAGE}`, path: '/audit', deep: true },
  { name: '/inbox', path: '/inbox' },
  { name: '/inbox/{conversation}', path: `/inbox/${BENCH_CONVERSATION_ID}` },
  {
    name: 'GET /messaging/conversations',
    path: '/api/v1/external/messaging/conversations',
    api: true,
  },
];

/** The next page's link of a page: "Next page", "Older events". */
const NEXT_LINK =
  /href="(\/(?:messages|contacts|audit)\?[^"]*(?:cursor|before)=[^"]*)"[^>]*>\s*(?:Next page|Older events)/;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

class Client {
  readonly agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  readonly jar = new Map<string, string>();
  /** The portal's API token, sent (instead of the session) to API routes. */
  token: string | undefined;
  constructor(readonly port: number) {}

  /** One request; resolves with its time to first byte (ms), status, headers and body. */
  send(method: 'GET' | 'POST', path: string, form?: Record<string, string>) {
    const body = form ? new URLSearchParams(form).toString() : undefined;
    const api = path.startsWith('/api/');
    const cookie = api ? '' : [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    return new Promise<{ ttfbMs: number; status: number; body: string }>((resolve, reject) => {
      let started = 0;
      const req = request(
        {
          host: '127.0.0.1',
          port: this.port,
          method,
          path,
          agent: this.agent,
          headers: {
            host: HOST,
            accept: api ? 'application/json' : 'text/html',
            ...(api && this.token && { authorization: `Bearer ${this.token}` }),
            ...(cookie && { cookie }),
            ...(body && {
              'content-type': 'application/x-www-form-urlencoded',
              'content-length': Buffer.byteLength(body),
            }),
          },
        },
        (res) => {
          const ttfbMs = performance.now() - started;
          for (const c of parseSetCookie(res.headers['set-cookie'] ?? [], { decodeValues: false }))
            this.jar.set(c.name, c.value);
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              ttfbMs,
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
        },
      );
      req.on('error', reject);
      started = performance.now();
      req.end(body);
    });
  }

  async signIn(email: string, password: string): Promise<void> {
    const page = await this.send('GET', '/login');
    const csrf = /name="csrf" value="([^"]*)"/.exec(page.body)?.[1];
    if (page.status !== 200 || !csrf) throw new Error(`/login answered ${page.status}`);
    const res = await this.send('POST', '/login', { email, password, csrf });
    if (res.status !== 303) throw new Error(`sign-in answered ${res.status}`);
  }

  async page(path: string): Promise<string> {
    const res = await this.send('GET', path);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
    return res.body;
  }
}

/**
 * The URL of page `DEEP_PAGE` of a list, reached through its links as a person would (the last
 * page when there are fewer, with a warning: a smaller BENCH_PAGES_ROWS).
 */
async function deepUrl(client: Client, first: string): Promise<string> {
  let path = first;
  for (let page = 1; page < DEEP_PAGE; page++) {
    const link = NEXT_LINK.exec(await client.page(path))?.[1];
    if (!link) {
      console.warn(`    ${first} has ${page} pages only: measuring the last`);
      break;
    }
    path = link.replace(/&amp;/g, '&');
  }
  return path;
}

/** `REQUESTS` loads of `path` over `CONNECTIONS` connections; sorted TTFBs (ms). */
async function load(client: Client, path: string, requests: number): Promise<number[]> {
  const ttfbs: number[] = [];
  let left = requests;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (left > 0) {
        left--;
        const res = await client.send('GET', path);
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
        ttfbs.push(res.ttfbMs);
      }
    }),
  );
  return ttfbs.sort((a, b) => a - b);
}

interface ShapeResult {
  name: string;
  url: string;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The server's CPU time (user + system) per load, in milliseconds: steadier than the TTFB. */
  cpuMsPerLoad: number;
  bytes: number;
  statements: TracedStatement[];
}

async function runBackend(kind: 'pglite' | 'postgres', databaseUrl?: string) {
  const dataDir = kind === 'pglite' ? mkdtempSync(join(tmpdir(), 'portico-bench-pages-')) : null;
  const server: BenchServer = await startServer('app', {
    env: {
      BENCH_CREATE_PORTAL: '1',
      BENCH_PORTAL_SCOPES: 'messaging:send,messaging:reports:read,crm:contacts:read',
      ...BENCH_RATE_LIMITS,
      APP_BASE_URL: `http://${HOST}`,
      PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
      // The seed's statements run longer than a request may on a loaded machine.
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
      ...(dataDir ? { DATA_DIR: dataDir } : { DATABASE_URL: databaseUrl! }),
    },
  });
  try {
    const seeded = await server.ask(
      { type: 'pages-seed', portalCode: server.portalCode!, rows: ROWS },
      'pages-seeded',
    );
    console.log(`  ${kind}: seeded ${ROWS} rows per table in ${figure(seeded.seedMs)} ms`);
    const client = new Client(server.port);
    client.token = server.token;
    await client.signIn(seeded.email, seeded.password);
    const results: ShapeResult[] = [];
    for (const shape of SHAPES) {
      const url = shape.deep ? await deepUrl(client, shape.path) : shape.path;
      await load(client, url, WARMUP);
      if (CPU_PROF) await server.ask({ type: 'profile-start' }, 'profiled');
      const before = await server.ask({ type: 'stats' }, 'stats');
      const ttfbs = await load(client, url, REQUESTS);
      const after = await server.ask({ type: 'stats' }, 'stats');
      if (CPU_PROF) {
        const file = `${kind}-${shape.name.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`;
        await server.ask(
          { type: 'profile-stop', path: join(RESULTS, 'profiles', file) },
          'profiled',
        );
      }
      await server.ask({ type: 'trace-start' }, 'trace-started');
      const bytes = (await client.page(url)).length;
      const { statements } = await server.ask({ type: 'trace-stop' }, 'traced');
      const result = {
        name: shape.name,
        url,
        p50Ms: percentile(ttfbs, 50),
        p99Ms: percentile(ttfbs, 99),
        maxMs: ttfbs.at(-1)!,
        cpuMsPerLoad: (after.cpuMicros - before.cpuMicros) / 1000 / REQUESTS,
        bytes,
        statements,
      };
      results.push(result);
      console.log(
        `    ${shape.name.padEnd(26)} TTFB p50 ${figure(result.p50Ms).padStart(6)} ms  p99 ${figure(result.p99Ms).padStart(6)} ms  ${verdict(result.p99Ms <= GOAL_P99_MS)}  server CPU ${figure(result.cpuMsPerLoad)} ms/load, ${figure(result.bytes / 1024)} KiB`,
      );
      for (const s of statements)
        console.log(
          `      ${s.wallMs.toFixed(2)} ms in the app; ${s.executionMs === undefined ? '(write)' : `planning ${s.planningMs!.toFixed(2)} ms, execution ${s.executionMs.toFixed(2)} ms`}  ${s.plan ?? ''}\n        ${s.sql.slice(0, 300)}`,
        );
    }
    client.agent.destroy();
    return { seedMs: seeded.seedMs, shapes: results };
  } finally {
    await server.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The tables whose rows a page lists or counts: the reads that grow with the portal. */
const PAGE_TABLES = /from "(messages|message_daily_counts|contacts|audit_events|conversations)"/;

/** The page's reads of its own tables, each as `plan (time)`. */
function pageReads(statements: TracedStatement[]): string {
  return statements
    .filter((s) => s.executionMs !== undefined && PAGE_TABLES.test(s.sql))
    .map((s) => `${s.plan ?? ''} (${s.executionMs!.toFixed(2)} ms)`)
    .join('; ');
}

function docSection(
  context: ReturnType<typeof runContext>,
  runs: Record<string, Awaited<ReturnType<typeof runBackend>>>,
): string {
  const kinds = Object.keys(runs);
  const label = (k: string) => (k === 'pglite' ? 'PGlite' : 'PostgreSQL');
  const rows = SHAPES.map((shape) => [
    `\`${shape.name}\``,
    ...kinds.flatMap((k) => {
      const r = runs[k]!.shapes.find((s) => s.name === shape.name)!;
      return [`${figure(r.p50Ms)} / ${figure(r.p99Ms)} ms`, `${figure(r.cpuMsPerLoad)} ms`];
    }),
  ]);
  const plans = SHAPES.map((shape) => {
    const k = kinds.includes('postgres') ? 'postgres' : kinds[0]!;
    const r = runs[k]!.shapes.find((s) => s.name === shape.name)!;
    const reads = r.statements.filter((s) => s.executionMs !== undefined);
    return [
      `\`${shape.name}\``,
      String(r.statements.length),
      `${reads.reduce((sum, s) => sum + s.executionMs!, 0).toFixed(2)} ms`,
      pageReads(r.statements),
    ];
  });
  return [
    context.line('npm run bench:pages'),
    `${ROWS.toLocaleString('en-US')} rows in each table of the portal (contacts, messages, audit events, ` +
      `inbound messages sealed, in ${Math.max(1, Math.floor(ROWS / 20)).toLocaleString('en-US')} conversations of 20); ` +
      `${REQUESTS} loads per page over ${CONNECTIONS} connections at once, after ${WARMUP} of warm-up; ` +
      `seeding took ${kinds.map((k) => `${figure(runs[k]!.seedMs / 1000)} s on ${label(k)}`).join(', ')}.`,
    table(
      ['page', ...kinds.flatMap((k) => [`${label(k)} TTFB p50 / p99`, 'server CPU per load'])],
      rows,
      [false, ...kinds.flatMap(() => [true, true])],
    ),
    `What one load asks the database (${label(kinds.includes('postgres') ? 'postgres' : kinds[0]!)}, \`EXPLAIN ANALYZE\` of each read):`,
    table(
      ['page', 'statements', 'database time (reads)', 'the reads of its rows: plan (time)'],
      plans,
      [false, true, true, false],
    ),
  ].join('\n\n');
}

async function main(): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const context = runContext();
  console.log(`bench:pages; ${context.uptimeBefore}`);
  const runs: Record<string, Awaited<ReturnType<typeof runBackend>>> = {};
  if (BACKENDS.includes('pglite')) runs.pglite = await runBackend('pglite');
  if (BACKENDS.includes('postgres')) {
    const database = await createThrowawayDatabase();
    if ('url' in database) {
      try {
        runs.postgres = await runBackend('postgres', database.url);
      } finally {
        await database.drop().catch(() => {});
      }
    } else {
      console.warn(`PostgreSQL not reachable (${database.error}): its rows are skipped.`);
    }
  }
  const after = context.finish();
  console.log(after.uptimeAfter);
  const at = context.startedAt.toISOString();
  const path = join(RESULTS, `pages-${at.replace(/[:.]/g, '-')}.json`);
  const record = {
    at,
    rows: ROWS,
    warmup: WARMUP,
    requests: REQUESTS,
    connections: CONNECTIONS,
    goalP99Ms: GOAL_P99_MS,
    uptimeBefore: context.uptimeBefore,
    ...after,
    runs,
  };
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`wrote ${path}`);
  if (WRITE_DOC && Object.keys(runs).length > 0) {
    await redrawSection('pages', docSection(context, runs));
    console.log('redrew the pages section of docs/performance.md');
  }
}

await main();
