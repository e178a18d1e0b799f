/**
 * The guards `npm run bench` reports (not asserted by any test): each a figure of this run
 * against its goal, PASS or MISS, printed and redrawn into docs/performance.md's `verify`
 * section with the run's table and chart.
 *
 * - verify's CPU per request ≤ 1.25 × the Fastify constant route with Portico's access line,
 *   measured in the same run (what any logged route costs);
 * - peak RSS of verify on PostgreSQL ≤ 160 MB;
 * - a restart to `/readyz` with the server's own entry (`node dist/main.js`) ≤ 1.5 s;
 * - the CLI's own entry (`node dist/cli.js token regenerate`) against a running server ≤ 0.6 s
 *   wall;
 * - a regenerated token refused by another instance ≤ 50 ms after the regenerate call
 *   returned, worst of 20 trials (revocation-window.ts).
 */
import type { StartupTimings } from './cli-and-startup.ts';
import { figure, table, verdict, type RunContext } from './performance-doc.ts';
import type { RevocationWindows } from './revocation-window.ts';

export const GUARDS = {
  /** verify's CPU per request ÷ the logged Fastify constant route's. */
  cpuRatioToLogged: 1.25,
  maxRssMb: 160,
  startRestartMs: 1500,
  /** Reported against its goal, not a guard. */
  startEmptyMs: 3000,
  cliWallMs: 600,
  revocationWorstMs: 50,
};

export interface Guard {
  what: string;
  measured: string;
  goal: string;
  ok: boolean;
}

/** The fields of a measured row the report reads. */
export interface RowFigures {
  id: string;
  label: string;
  reqPerSec: number;
  reqRatio: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerReq: number;
  maxRssMb: number;
}

export function evaluateGuards(
  rows: RowFigures[],
  startup: StartupTimings | undefined,
  revocation: RevocationWindows | undefined,
): Guard[] {
  const verify = rows.find((r) => r.id === 'cache-postgres');
  const logged = rows.find((r) => r.id === 'fastify-logged');
  const guards: Guard[] = [];
  if (verify && logged) {
    const ratio = verify.cpuUsPerReq / logged.cpuUsPerReq;
    guards.push({
      what: "verify's CPU per request ÷ the logged Fastify constant route's",
      measured: `${ratio.toFixed(2)}× (${figure(verify.cpuUsPerReq)} vs ${figure(logged.cpuUsPerReq)} µs)`,
      goal: `≤ ${GUARDS.cpuRatioToLogged}×`,
      ok: ratio <= GUARDS.cpuRatioToLogged,
    });
  }
  if (verify)
    guards.push({
      what: 'peak RSS of verify on PostgreSQL',
      measured: `${figure(verify.maxRssMb)} MB`,
      goal: `≤ ${GUARDS.maxRssMb} MB`,
      ok: verify.maxRssMb <= GUARDS.maxRssMb,
    });
  if (startup) {
    guards.push(
      {
        what: '`node dist/main.js` → `/readyz`, restart (median of the restarts)',
        measured: `${figure(startup.restartMs)} ms (${startup.restartsMs.map((ms) => figure(ms)).join(', ')})`,
        goal: `≤ ${figure(GUARDS.startRestartMs)} ms`,
        ok: startup.restartMs <= GUARDS.startRestartMs,
      },
      {
        what: '`node dist/main.js` → `/readyz`, empty data directory',
        measured: `${figure(startup.emptyMs)} ms`,
        goal: `≤ ${figure(GUARDS.startEmptyMs)} ms`,
        ok: startup.emptyMs <= GUARDS.startEmptyMs,
      },
      {
        what: `\`node dist/cli.js token regenerate\` against a running server, wall (median of ${startup.cli.runs})`,
        measured: `${figure(startup.cli.wallMs)} ms (CPU ${figure(startup.cli.cpuMs)} ms)`,
        goal: `≤ ${figure(GUARDS.cliWallMs)} ms`,
        ok: startup.cli.wallMs <= GUARDS.cliWallMs,
      },
    );
  }
  if (revocation) {
    const worst = Math.max(...revocation.windowsMs);
    const ok =
      revocation.failed === 0 &&
      revocation.refusedAtOnceOnA === revocation.trials &&
      worst <= GUARDS.revocationWorstMs;
    guards.push({
      what: `a regenerated token refused by another instance after the call returned, worst of ${revocation.trials}`,
      measured:
        `${figure(worst)} ms` +
        (revocation.failed > 0 ? `; ${revocation.failed} trials never refused` : '') +
        (revocation.refusedAtOnceOnA < revocation.trials
          ? `; the regenerating instance accepted it in ${revocation.trials - revocation.refusedAtOnceOnA}`
          : ''),
      goal: `≤ ${GUARDS.revocationWorstMs} ms`,
      ok,
    });
  }
  return guards;
}

export function printGuards(guards: Guard[]): void {
  console.log('\nGuards (reported, not asserted):');
  for (const g of guards)
    console.log(`  ${verdict(g.ok)}  ${g.what}: ${g.measured} (goal ${g.goal})`);
}

/** The `verify` section of docs/performance.md: the run, its rows, the guards, the chart. */
export function verifySection(
  context: RunContext,
  load: { connections: number; warmupSeconds: number; durationSeconds: number },
  rows: RowFigures[],
  guards: Guard[],
): string {
  const logged = rows.find((r) => r.id === 'fastify-logged');
  return [
    context.line('npm run bench'),
    `${load.connections} connections, ${load.warmupSeconds} s of warm-up then ${load.durationSeconds} s per server, each server in its own process; ` +
      'the ratios are to the same run: req/s to the mean of the two `node:http` floors, CPU per request to the Fastify constant route with the access line.',
    '![GET /auth/verify against a bare node:http floor](bench.svg)',
    table(
      ['row', 'CPU per request', '÷ logged Fastify', 'req/s ÷ floor', 'p50 / p99', 'peak RSS'],
      rows.map((r) => [
        r.label,
        `${figure(r.cpuUsPerReq)} µs`,
        logged ? `${(r.cpuUsPerReq / logged.cpuUsPerReq).toFixed(2)}×` : '',
        r.reqRatio.toFixed(2),
        `${figure(r.p50Ms)} / ${figure(r.p99Ms)} ms`,
        `${figure(r.maxRssMb)} MB`,
      ]),
      [false, true, true, true, true, true],
    ),
    table(
      ['figure', 'measured'],
      guards.map((g) => [g.what, g.measured]),
      [false, true],
    ),
  ].join('\n\n');
}
