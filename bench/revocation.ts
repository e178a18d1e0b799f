/**
 * `npm run bench:revocation`: how long a regenerated token keeps working on ANOTHER instance,
 * over BENCH_TRIALS trials (default 200), polling every BENCH_POLL_INTERVAL_MS (default 1 ms).
 * The procedure is `revocation-window.ts`'s; `npm run bench` runs 20 trials of it as a guard
 * (worst of 20 ≤ 50 ms). Here: the distribution (p50, p99, max), and 0 on A.
 *
 * Needs PostgreSQL at BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres;
 * a throwaway database, dropped after). Writes `bench/results/revocation-<time>.json` and
 * redraws its section of docs/performance.md (BENCH_WRITE_DOC=0 leaves the page alone).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, redrawSection, runContext, table, verdict } from './performance-doc.ts';
import { createThrowawayDatabase } from './postgres.ts';
import { measureRevocationWindows } from './revocation-window.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const TRIALS = Number(process.env.BENCH_TRIALS ?? 200);
const POLL_INTERVAL_MS = Number(process.env.BENCH_POLL_INTERVAL_MS ?? 1);
const WRITE_DOC = process.env.BENCH_WRITE_DOC !== '0';
const TARGET_MS = 50;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const created = await createThrowawayDatabase();
  if (!('url' in created)) {
    console.error(`bench:revocation needs PostgreSQL (${created.error}). Set BENCH_DATABASE_URL.`);
    process.exit(1);
  }
  const context = runContext();
  console.log(
    `Revocation window: ${TRIALS} trials, polling every ${POLL_INTERVAL_MS} ms, instances A and B on one PostgreSQL; ${context.uptimeBefore}`,
  );
  let result;
  try {
    result = await measureRevocationWindows({
      databaseUrl: created.url,
      trials: TRIALS,
      pollIntervalMs: POLL_INTERVAL_MS,
    });
  } finally {
    await created.drop();
  }
  const after = context.finish();
  const sorted = [...result.windowsMs].sort((x, y) => x - y);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  const max = sorted.at(-1) ?? NaN;
  const zero = sorted.filter((w) => w === 0).length;
  const over = sorted.filter((w) => w > TARGET_MS).length;
  console.log(`\ninstance B (the other one): old token refused after`);
  console.log(`  p50 ${p50.toFixed(2)} ms   p99 ${p99.toFixed(2)} ms   max ${max.toFixed(2)} ms`);
  console.log(
    `  ${zero}/${sorted.length} trials already refused when A's call returned; ${over} over ${TARGET_MS} ms; ${result.staleAnswersOnB} stale 200s in all; B had the token cached before ${result.cachedOnB}/${TRIALS} trials`,
  );
  console.log(
    `instance A (the one that regenerated): refused on the very next request in ${result.refusedAtOnceOnA}/${TRIALS} trials`,
  );
  if (result.failed > 0)
    console.log(`FAILED: ${result.failed} trials never saw a refusal within the safety net`);
  console.log(after.uptimeAfter);

  mkdirSync(RESULTS, { recursive: true });
  const at = context.startedAt.toISOString();
  const path = join(RESULTS, `revocation-${at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    path,
    `${JSON.stringify({ at, uptimeBefore: context.uptimeBefore, ...after, windowMs: { p50, p99, max }, ...result }, null, 2)}\n`,
  );
  console.log(`wrote ${path}`);
  if (!WRITE_DOC) return;
  await redrawSection(
    'revocation',
    [
      context.line('npm run bench:revocation'),
      `${TRIALS} trials, B polled every ${POLL_INTERVAL_MS} ms; the window is counted from the moment the regenerate call returned on A.`,
      table(
        ['figure', 'measured', `≤ ${TARGET_MS} ms`],
        [
          ['B refuses the old token after, p50', `${figure(p50)} ms`, ''],
          ['B refuses the old token after, p99', `${figure(p99)} ms`, verdict(p99 <= TARGET_MS)],
          ['B refuses the old token after, worst', `${figure(max)} ms`, verdict(max <= TARGET_MS)],
          [
            'A refuses it on the very next request',
            `${result.refusedAtOnceOnA} of ${TRIALS}`,
            verdict(result.refusedAtOnceOnA === TRIALS),
          ],
          ['trials that never saw a refusal', String(result.failed), verdict(result.failed === 0)],
        ],
        [false, true, false],
      ),
    ].join('\n\n'),
  );
  console.log('redrew the revocation section of docs/performance.md');
}

await main();
