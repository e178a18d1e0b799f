/**
 * Exclusive ownership of the embedded database's data directory.
 *
 * PGlite does not lock its directory: two processes that open it both succeed and silently lose
 * each other's writes. So the owner writes its pid to `portico.lock`, created with `O_EXCL`
 * (atomic). A lock whose pid is no longer alive is stale (the owner crashed) and is taken over;
 * the take-over itself is serialised by an `mkdir` guard so that two starters recovering the
 * same stale lock cannot both win. This is how PostgreSQL's own `postmaster.pid` works.
 *
 * The lock also says who holds it (`server` or `cli`, on its second line): a server that starts
 * while a CLI command runs on the directory waits for it (bounded) instead of failing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdirSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'portico.lock';

/** What kind of process holds a data directory. */
export type LockHolder = 'server' | 'cli';

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly ownerPid: number,
    readonly holder: LockHolder = 'server',
  ) {
    super(
      `The data directory ${dataDir} is in use by another Portico process (pid ${ownerPid}). ` +
        'Stop it, or use the CLI, which hands its commands to the running server.',
    );
    this.name = 'DataDirLockedError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid written in the lock file, or null if there is no (readable) lock. */
export function lockOwner(dataDir: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, LOCK_FILE), 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Who wrote the lock: `cli` when its second line says so, else `server`. */
export function lockHolder(dataDir: string): LockHolder {
  try {
    return readFileSync(join(dataDir, LOCK_FILE), 'utf8').split('\n')[1]?.trim() === 'cli'
      ? 'cli'
      : 'server';
  } catch {
    return 'server';
  }
}

/** The pid of a live process that holds the lock, or null when the directory is free. */
export function liveLockOwner(dataDir: string): number | null {
  const pid = lockOwner(dataDir);
  return pid !== null && pid !== process.pid && isAlive(pid) ? pid : null;
}

/**
 * Take the lock of `dataDir` (created with mode 0700 if missing) for this process.
 *
 * @param holder what this process is, written in the lock for a starting server to read.
 * @returns a release function (idempotent) that removes the lock.
 * @throws DataDirLockedError when a live process holds it.
 */
export function acquireDataDirLock(dataDir: string, holder: LockHolder = 'server'): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lockPath = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(lockPath, `${process.pid}\n${holder}\n`, { flag: 'wx', mode: 0o600 });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (lockOwner(dataDir) === process.pid) unlinkSync(lockPath);
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = lockOwner(dataDir);
    if (owner !== null && isAlive(owner))
      throw new DataDirLockedError(dataDir, owner, lockHolder(dataDir));
    takeOverStaleLock(dataDir, owner);
  }
  throw new DataDirLockedError(dataDir, lockOwner(dataDir) ?? 0);
}

/**
 * Take the lock of `dataDir` as {@link acquireDataDirLock} does, but while a CLI command holds
 * it (a command run on the directory just before this server started) wait for it, polling,
 * up to `waitMs`; `onWait` is called once, with the CLI's pid, when waiting starts.
 *
 * @returns a release function (idempotent) that removes the lock.
 * @throws DataDirLockedError when a live server holds it, or a CLI still does after `waitMs`.
 */
export async function acquireDataDirLockAfterCli(
  dataDir: string,
  options: { waitMs: number; onWait: (cliPid: number) => void; pollMs?: number },
): Promise<() => void> {
  const deadline = Date.now() + options.waitMs;
  let told = false;
  for (;;) {
    try {
      return acquireDataDirLock(dataDir, 'server');
    } catch (err) {
      if (!(err instanceof DataDirLockedError) || err.holder !== 'cli' || Date.now() >= deadline)
        throw err;
      if (!told) options.onWait(err.ownerPid);
      told = true;
      await sleep(options.pollMs ?? 100);
    }
  }
}

function takeOverStaleLock(dataDir: string, stalePid: number | null): void {
  const guard = join(dataDir, `${LOCK_FILE}.recover`);
  try {
    mkdirSync(guard);
  } catch {
    // Someone else is recovering. A guard left by a crash mid-recovery is dropped after 10 s.
    try {
      if (Date.now() - statSync(guard).mtimeMs > 10_000) rmdirSync(guard);
    } catch {
      /* gone already */
    }
    return;
  }
  try {
    // Re-read under the guard: only remove the lock if it is still the stale one we saw.
    if (lockOwner(dataDir) === stalePid) unlinkSync(join(dataDir, LOCK_FILE));
  } catch {
    /* already removed */
  } finally {
    rmdirSync(guard);
  }
}
