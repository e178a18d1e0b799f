/**
 * `retainTickObjectShape` (src/platform/tick-shape.ts): with it, `process.nextTick` keeps V8's
 * fast path through quiet full garbage collections; without it, this Node loses it. Each case
 * runs in its own Node process (`--expose-gc` to collect at will, `--allow-natives-syntax` to
 * read nextTick's feedback with `%DebugPrint`), since the state under test is process-wide.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/root.ts';
import { childEnv, STARTUP_MS, tempDataDir } from '../helpers/spawn.ts';

const MODULE = pathToFileURL(join(ROOT, 'src', 'platform', 'tick-shape.ts')).href;

/**
 * With RETAIN=1: retain a TickObject and check that no async hook is left installed (a promise
 * hook left on would tax every promise of the process). Then nextTick 5,000 times, six full
 * collections while no TickObject is alive (past V8's grace of two for the maps its feedback
 * names), nextTick 5,000 times more, and print nextTick's feedback vector.
 */
const CHILD = `
if (process.env.RETAIN === '1') {
  const { retainTickObjectShape } = await import(${JSON.stringify(MODULE)});
  // Node's own counters of installed async hooks (internal, but the one place to read them).
  const counters = () => Array.from(process.binding('async_wrap').async_hook_fields).join();
  const before = counters();
  if (!retainTickObjectShape()) throw new Error('no TickObject retained');
  await new Promise((resolve) => setImmediate(resolve));
  if (counters() !== before) {
    throw new Error('async hooks left installed: counters ' + before + ' became ' + counters());
  }
}
const ticks = (n) => new Promise((resolve) => {
  let i = 0;
  const step = () => (++i < n ? process.nextTick(step) : setTimeout(resolve, 10));
  process.nextTick(step);
});
await ticks(5000);
for (let i = 0; i < 6; i++) globalThis.gc();
await ticks(5000);
new Function('f', '%DebugPrint(f)')(process.nextTick);
`;

/**
 * The states of nextTick's object-literal keys (`DefineKeyedOwnPropertyInLiteral` slots) after
 * {@link CHILD} ran in a fresh process. Its standard output is a file: `%DebugPrint` writes
 * through C's stdio, which loses what a full non-blocking pipe refuses.
 */
function literalKeyStates(mode: 'retain' | 'plain'): string[] {
  const dir = tempDataDir();
  const out = join(dir, 'debug-print.txt');
  const fd = openSync(out, 'w');
  try {
    const run = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '--allow-natives-syntax',
        // Optimise on the main thread: a compile job still running in the background holds the
        // maps it reads, and on a loaded machine kept them alive through the collections (1 run
        // in 10 beside two busy loops; none in 25 beside three with this flag).
        '--no-concurrent-recompilation',
        '--import',
        'tsx',
        '--input-type=module',
      ],
      {
        cwd: ROOT,
        env: childEnv({ RETAIN: mode === 'retain' ? '1' : '0' }),
        input: CHILD,
        stdio: ['pipe', fd, 'pipe'],
        timeout: STARTUP_MS, // killed (SIGKILL) past the deadline, so the test cannot hang on it
        killSignal: 'SIGKILL',
      },
    );
    assert.equal(run.status, 0, `nextTick in a ${mode} process: ${String(run.stderr)}`);
    const printed = readFileSync(out, 'utf8');
    return [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1]!);
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

test('without a retained TickObject, quiet full collections turn nextTick megamorphic (why the module exists)', () => {
  const states = literalKeyStates('plain');
  assert.ok(states.length >= 2, `nextTick's feedback was printed: ${states.join(', ')}`);
  assert.ok(
    states.includes('MEGAMORPHIC'),
    `this Node keeps nextTick's feedback by itself (${states.join(', ')}): ` +
      'retainTickObjectShape may no longer be needed; measure with npm run bench',
  );
});

test('with retainTickObjectShape, nextTick keeps its monomorphic feedback and no async hook stays installed', () => {
  const states = literalKeyStates('retain');
  assert.ok(states.length >= 2, `nextTick's feedback was printed: ${states.join(', ')}`);
  assert.deepEqual(
    states.filter((state) => state !== 'MONOMORPHIC'),
    [],
    `every key of the TickObject literal stays monomorphic: ${states.join(', ')}`,
  );
});
