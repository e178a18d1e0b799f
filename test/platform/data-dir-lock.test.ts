import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  acquireDataDirLock,
  DataDirLockedError,
  LOCK_FILE,
} from '../../src/platform/data-dir-lock.ts';
import { STARTUP_MS, tempDataDir } from '../helpers/spawn.ts';

test('the owner holds the lock; a second opener is refused; release frees it', () => {
  const dir = tempDataDir();
  const release = acquireDataDirLock(dir);
  // The lock holds the owner's pid on its first line (then who holds it: server or cli).
  assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8').split('\n')[0], String(process.pid));
  // A live process (our parent, the test runner) holding the lock refuses us.
  writeFileSync(join(dir, LOCK_FILE), `${process.ppid}\n`);
  assert.throws(() => acquireDataDirLock(dir), DataDirLockedError);
  writeFileSync(join(dir, LOCK_FILE), `${process.pid}\n`);
  release();
  assert.equal(existsSync(join(dir, LOCK_FILE)), false);
  acquireDataDirLock(dir)();
});

test('a stale lock of a dead process is recovered', () => {
  const dir = tempDataDir();
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    timeout: STARTUP_MS, // killed (SIGKILL) past the deadline, so the test cannot hang on it
    killSignal: 'SIGKILL',
  });
  assert.equal(dead.status, 0, 'the short-lived process ran to its end');
  const deadPid = Number(dead.stdout.toString());
  writeFileSync(join(dir, LOCK_FILE), `${deadPid}\n`);
  const release = acquireDataDirLock(dir);
  assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8').split('\n')[0], String(process.pid));
  release();
});
