/**
 * `npm test` never hangs on a process a test spawned: a missed start-up deadline kills the
 * process and says why, a process still running when its test ends is killed by `t.after`,
 * and a test file stopped by the runner's per-file `--test-timeout` takes its children with it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT } from '../helpers/root.ts';
import { builtEntry, childEnv, spawnNode, STARTUP_MS, tempDataDir } from '../helpers/spawn.ts';
import { deadline } from '../helpers/deadlines.ts';

const FIXTURE = join(ROOT, 'test', 'blackbox', 'fixtures', 'hangs-with-a-child.ts');

/** Whether `pid` is a live process (a zombie, killed but not yet reaped, counts as gone). */
function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** True once `pid` is gone, false if it is still running after `timeoutMs`. */
async function goneWithin(pid: number, timeoutMs = 10_000): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(50))
    if (!isRunning(pid)) return true;
  return !isRunning(pid);
}

test('a server that misses its start-up deadline is killed, with a message saying so', async (t) => {
  const server = spawnNode(t, builtEntry('main'), {
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: tempDataDir() }),
  });
  const pid = server.child.pid!;
  assert.ok(isRunning(pid));
  await assert.rejects(
    server.waitForLine(/Server listening at/, 'the server did not start', 1),
    /^Error: the server did not start: not within 1 ms \(\d+ CPUs, slowdown ×[0-9.]+; PORTICO_TEST_STARTUP_MS or PORTICO_TEST_SLOWDOWN raises the deadline\); the process was killed\. Output:/,
  );
  assert.ok(await goneWithin(pid), 'the server was killed');
});

test('a process still running when its test ends is killed by t.after', async (t) => {
  let pid = 0;
  await t.test('spawns a process and returns without stopping it', (sub) => {
    pid = spawnNode(sub, ['-e', 'setInterval(() => {}, 1000)'], { env: childEnv({}) }).child.pid!;
    assert.ok(isRunning(pid));
  });
  assert.ok(await goneWithin(pid), 'the process was killed when its test ended');
});

test('npm test has a per-file timeout; a file stopped by it takes its children along', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  assert.match((pkg as { scripts: { test: string } }).scripts.test, /--test-timeout=\d+ /);

  const pidFile = join(mkdtempSync(join(tmpdir(), 'portico-hang-')), 'pid');
  // Long enough for the fixture to load and spawn its child on a busy machine.
  const fileTimeoutMs = deadline(3_000);
  const runner = spawnNode(
    t,
    [
      '--import',
      'tsx',
      '--test',
      `--test-timeout=${fileTimeoutMs}`,
      '--test-reporter=spec',
      FIXTURE,
    ],
    { env: childEnv({ PID_FILE: pidFile }) },
  );
  const code = await runner.waitForExit(
    'the test runner did not stop the hanging file',
    STARTUP_MS,
  );
  assert.equal(code, 1, runner.output.join('\n'));
  assert.match(runner.stdout(), new RegExp(`timed out after ${fileTimeoutMs}ms`));
  const pid = Number(readFileSync(pidFile, 'utf8'));
  assert.ok(pid > 0);
  assert.ok(await goneWithin(pid), 'the hanging file’s child was killed with it');
});
