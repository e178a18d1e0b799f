/**
 * `npm run bench`: the token check under load, against a bare `node:http` floor measured in the
 * same run with the same load.
 *
 * Each server runs in its own child process; autocannon (this process) drives it with
 * BENCH_CONNECTIONS connections (default 50), first for BENCH_WARMUP_S seconds (default 3, not
 * recorded), then for BENCH_DURATION_S seconds (default 10). Recorded per server: requests/s,
 * latency p50/p99 (ms), non-2xx answers, and the server's peak RSS.
 *
 * Servers: the floor; Fastify with a constant route, without and with the app's access line (what
 * the line alone costs; not a target); `GET /auth/verify` of the real app with
 * the verification cache on and off, on PGlite and on PostgreSQL (a throwaway database on
 * BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres, dropped after); and
 * the cached PostgreSQL verify once more without its access log line (LOG_LEVEL=warn), to show
 * what the log costs. The app logs at BENCH_LOG_LEVEL (default `info`, as in production).
 *
 * Then the CLI and start-up timings (`cli-and-startup.ts`: `node dist/main.js` to `/readyz` on
 * an empty and on a used data directory, and 5 × `node dist/cli.js token regenerate` against
 * that server; BENCH_STARTUP=0 skips them), and BENCH_REVOCATION_TRIALS (default 20) trials of
 * the revocation window between two instances on PostgreSQL (`revocation-window.ts`; 0 skips
 * them). The guards (`verify-report.ts`) are printed as figure vs goal, PASS or MISS: reported,
 * not asserted.
 *
 * Writes `bench/results/verify-<time>.json` (gitignored), redraws the chart `docs/bench.svg`
 * (`--chart <path>` to write it elsewhere) and the `verify` section of docs/performance.md
 * (`performance-doc.ts`; BENCH_WRITE_DOC=0 leaves the page alone, as does BENCH_ONLY).
 * BENCH_CPU_PROF=1 writes a V8 CPU profile of each server's measured run (not its start-up) to
 * `bench/results/profiles/<id>.cpuprofile` (open it in Chrome DevTools or speedscope);
 * BENCH_ONLY=<id,id> runs only those servers (ids: fastify, fastify-logged, cache-pglite,
 * cache-postgres, nocache-pglite, nocache-postgres, cache-postgres-warn) and the floor.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { renderChart } from './chart.ts';
import { measureStartupAndCli, type StartupTimings } from './cli-and-startup.ts';
import { BENCH_RATE_LIMITS, startServer, type BenchServer } from './child.ts';
import { redrawSection, runContext } from './performance-doc.ts';
import { createThrowawayDatabase, type ThrowawayDatabase } from './postgres.ts';
import { measureRevocationWindows, type RevocationWindows } from './revocation-window.ts';
import { evaluateGuards, GUARDS, printGuards, verifySection } from './verify-report.ts';
import type { ServerKind } from './server.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);
const CPU_PROF = process.env.BENCH_CPU_PROF === '1';
/** The app's log level under load; `info` (the default) writes one access line per request. */
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
/** BENCH_ONLY=cache-postgres,fastify: run only these (and the floor, for the ratios). */
const ONLY = process.env.BENCH_ONLY?.split(',');
const chartArg = process.argv.indexOf('--chart');
const CHART_PATH =
  chartArg > 0 && process.argv[chartArg + 1]
    ? process.argv[chartArg + 1]!
    : fileURLToPath(new URL('../docs/bench.svg', import.meta.url));

/** BENCH_STARTUP=0 skips the CLI and start-up timings. */
const STARTUP = process.env.BENCH_STARTUP !== '0';
const REVOCATION_TRIALS = Number(process.env.BENCH_REVOCATION_TRIALS ?? 20);
const WRITE_DOC = process.env.BENCH_WRITE_DOC !== '0' && !ONLY;

export interface Scenario {
  id: string;
  label: string;
  kind: ServerKind;
  storage?: 'pglite' | 'postgres';
  cache?: boolean;
  /** Log level of the app for this server (default BENCH_LOG_LEVEL, itself `info`). */
  logLevel?: string;
}

export interface Measurement extends Scenario {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxRssMb: number;
  non2xx: number;
  errors: number;
  /** Of the floor's req/s (higher is better) and p99 (lower is better); floor = mean of both floor runs. */
  reqRatio: number;
  p99Ratio: number;
  /** Server CPU time (user + system) per request during the measured run, in microseconds. */
  cpuUsPerReq: number;
  /** The app's verification cache after the run (hits prove it served). */
  cacheStats?: { trusted: boolean; size: number; hits: number; misses: number } | undefined;
}

const SCENARIOS: Scenario[] = [
  { id: 'floor', label: 'node:http floor', kind: 'floor' },
  { id: 'fastify', label: 'Fastify constant route', kind: 'fastify' },
  // The reference of the CPU guard: a route that does nothing but write the access line (the
  // verify rows write the same line).
  { id: 'fastify-logged', label: 'Fastify constant route, access log', kind: 'fastify-logged' },
  {
    id: 'cache-pglite',
    label: 'verify, cache on, PGlite',
    kind: 'app',
    storage: 'pglite',
    cache: true,
  },
  {
    id: 'cache-postgres',
    label: 'verify, cache on, PostgreSQL',
    kind: 'app',
    storage: 'postgres',
    cache: true,
  },
  {
    id: 'nocache-pglite',
    label: 'verify, cache off, PGlite',
    kind: 'app',
    storage: 'pglite',
    cache: false,
  },
  {
    id: 'nocache-postgres',
    label: 'verify, cache off, PostgreSQL',
    kind: 'app',
    storage: 'postgres',
    cache: false,
  },
  {
    id: 'cache-postgres-warn',
    label: 'verify, cache on, PostgreSQL, no access log',
    kind: 'app',
    storage: 'postgres',
    cache: true,
    logLevel: 'warn',
  },
  // The floor again, last: the machine's drift during the run shows, and the ratios use the
  // mean of both floors.
  { id: 'floor-end', label: 'node:http floor (again, last)', kind: 'floor' },
];

async function load(server: BenchServer, path: string, seconds: number) {
  return autocannon({
    url: `http://127.0.0.1:${server.port}${path}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: server.token ? { authorization: server.token } : {},
  });
}

async function measure(scenario: Scenario, database: ThrowawayDatabase | null) {
  const env: Record<string, string> = {
    BENCH_CREATE_PORTAL: '1',
    LOG_LEVEL: scenario.logLevel ?? LOG_LEVEL,
    ...BENCH_RATE_LIMITS,
  };
  let dataDir: string | undefined;
  if (scenario.kind === 'app') {
    env.TOKEN_CACHE_SIZE = scenario.cache ? '10000' : '0';
    if (scenario.storage === 'postgres') env.DATABASE_URL = database!.url;
    else env.DATA_DIR = dataDir = mkdtempSync(join(tmpdir(), 'portico-bench-'));
  }
  const profDir = join(RESULTS, 'profiles');
  const server = await startServer(scenario.kind, {
    env,
  });
  try {
    const path = scenario.kind === 'app' ? '/api/v1/external/auth/verify' : '/';
    if (WARMUP_S > 0) await load(server, path, WARMUP_S);
    if (CPU_PROF) await server.ask({ type: 'profile-start' }, 'profiled');
    const before = await server.ask({ type: 'stats' }, 'stats');
    const result = await load(server, path, DURATION_S);
    const stats = await server.ask({ type: 'stats' }, 'stats');
    if (CPU_PROF) {
      const file = join(profDir, `${scenario.id}.cpuprofile`);
      await server.ask({ type: 'profile-stop', path: file }, 'profiled');
    }
    return {
      reqPerSec: result.requests.average,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      maxRssMb: stats.maxRssBytes / (1024 * 1024),
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      cpuUsPerReq: (stats.cpuMicros - before.cpuMicros) / Math.max(result.requests.total, 1),
      cacheStats: stats.cache,
    };
  } finally {
    await server.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

function pad(value: string, width: number, right = false): string {
  return right ? value.padStart(width) : value.padEnd(width);
}

function printTable(rows: Measurement[]): void {
  const head = `${pad('server', 46)}${pad('req/s', 9, true)}${pad('×floor', 8, true)}${pad('p50 ms', 8, true)}${pad('p99 ms', 8, true)}${pad('×floor', 8, true)}${pad('CPU µs/req', 12, true)}${pad('peak RSS MB', 13, true)}${pad('non-2xx', 9, true)}`;
  console.log(head);
  console.log('-'.repeat(head.length));
  for (const r of rows) {
    console.log(
      `${pad(r.label, 46)}${pad(r.reqPerSec.toFixed(0), 9, true)}${pad(r.reqRatio.toFixed(2), 8, true)}${pad(r.p50Ms.toFixed(0), 8, true)}${pad(r.p99Ms.toFixed(0), 8, true)}${pad(r.p99Ratio.toFixed(2), 8, true)}${pad(r.cpuUsPerReq.toFixed(0), 12, true)}${pad(r.maxRssMb.toFixed(0), 13, true)}${pad(String(r.non2xx + r.errors), 9, true)}`,
    );
  }
}

async function main(): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const context = runContext();
  const created = await createThrowawayDatabase();
  const database = 'url' in created ? created : null;
  if (!database) {
    console.warn(
      `PostgreSQL not reachable (${'error' in created ? created.error : ''}): its rows are skipped. Set BENCH_DATABASE_URL.`,
    );
  }
  console.log(
    `Portico bench: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per server, node ${process.version}, ${cpus().length} CPUs; ${context.uptimeBefore}\n`,
  );
  const raw: (Scenario & Omit<Measurement, keyof Scenario | 'reqRatio' | 'p99Ratio'>)[] = [];
  const cleanup = async () => {
    await database?.drop().catch(() => {});
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));
  let revocation: RevocationWindows | undefined;
  try {
    for (const scenario of SCENARIOS) {
      if (scenario.storage === 'postgres' && !database) continue;
      if (ONLY && scenario.kind !== 'floor' && !ONLY.includes(scenario.id)) continue;
      process.stdout.write(`  ${scenario.label} …`);
      const m = await measure(scenario, database);
      raw.push({ ...scenario, ...m });
      process.stdout.write(` ${m.reqPerSec.toFixed(0)} req/s\n`);
    }
    if (database && REVOCATION_TRIALS > 0) {
      process.stdout.write(`  revocation window, ${REVOCATION_TRIALS} trials …`);
      revocation = await measureRevocationWindows({
        databaseUrl: database.url,
        trials: REVOCATION_TRIALS,
        pollIntervalMs: 1,
      });
      process.stdout.write(` worst ${Math.max(...revocation.windowsMs).toFixed(1)} ms\n`);
    }
  } finally {
    await cleanup();
  }
  let startup: StartupTimings | undefined;
  if (STARTUP) {
    process.stdout.write(
      '  node dist/main.js → /readyz (empty, restarts) and 5 × node dist/cli.js …',
    );
    startup = await measureStartupAndCli();
    process.stdout.write(' done\n');
  }
  const floors = raw.filter((r) => r.kind === 'floor');
  const floor = {
    reqPerSec: floors.reduce((sum, r) => sum + r.reqPerSec, 0) / floors.length,
    p99Ms: floors.reduce((sum, r) => sum + r.p99Ms, 0) / floors.length,
  };
  const rows: Measurement[] = raw.map((m) => ({
    ...m,
    reqRatio: m.reqPerSec / floor.reqPerSec,
    p99Ratio: m.p99Ms / Math.max(floor.p99Ms, 1),
  }));
  const after = context.finish();
  console.log('');
  printTable(rows);
  const guards = evaluateGuards(rows, startup, revocation);
  printGuards(guards);
  const bad = rows.filter((r) => r.non2xx + r.errors > 0);
  if (bad.length > 0)
    console.log(`\nWARNING: non-2xx answers or errors in: ${bad.map((r) => r.label).join(', ')}`);
  console.log(`\n${after.uptimeAfter} (the machine is shared: figures vary with its load)`);

  const at = context.startedAt.toISOString();
  const load = { connections: CONNECTIONS, warmupSeconds: WARMUP_S, durationSeconds: DURATION_S };
  const logged = rows.find((r) => r.id === 'fastify-logged');
  const record = {
    at,
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    load,
    loadAverage: { before: context.loadBefore, after: after.loadAfter },
    uptime: { before: context.uptimeBefore, after: after.uptimeAfter },
    guards: GUARDS,
    floor,
    reference: logged
      ? { label: 'Fastify constant route with the access line', reqPerSec: logged.reqPerSec }
      : undefined,
    checks: guards,
    rows,
    startup,
    revocation,
  };
  const jsonPath = join(RESULTS, `verify-${at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(jsonPath, `${JSON.stringify(record, null, 2)}\n`);
  writeFileSync(CHART_PATH, renderChart(record));
  console.log(`\nwrote ${jsonPath} and ${CHART_PATH}`);
  if (WRITE_DOC) {
    await redrawSection('verify', verifySection(context, load, rows, guards));
    console.log('redrew the verify section of docs/performance.md');
  }
}

await main();
