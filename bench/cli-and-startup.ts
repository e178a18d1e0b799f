/**
 * The two timings a person feels that are not requests: a CLI command while the server runs,
 * and the server's start until `/readyz` answers (on an empty data directory, then restarts on
 * it). Both run the entries themselves, as a process manager or an operator's shell does:
 * `node --enable-source-maps dist/main.js` and `node --enable-source-maps dist/cli.js …` (what
 * `npm start` and `npm run cli` run after npm's own start and the build check). The build runs
 * once before, untimed.
 *
 * Wall time is the figure a person waits; CPU time (user + system of the process tree, from
 * `getrusage` of the finished children) is the one that does not move with the machine's load.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PORT = Number(process.env.BENCH_STARTUP_PORT ?? 3917);
/** Longest a start may take before the run gives up on it (milliseconds). */
const START_DEADLINE_MS = 120_000;

export interface CommandTiming {
  /** Median wall time of the runs, in milliseconds. */
  wallMs: number;
  /** Median CPU time (user + system, children included), in milliseconds. */
  cpuMs: number;
  runs: number;
}

export interface StartupTimings {
  /** `node dist/main.js` to the first 200 of `/readyz`, empty data directory (milliseconds). */
  emptyMs: number;
  /** The same, restarting on the data directory of the first start: median of the restarts. */
  restartMs: number;
  /** Each restart's time, in milliseconds. */
  restartsMs: number[];
  /** `node dist/cli.js token regenerate` while that server runs, median of 5. */
  cli: CommandTiming;
}

/** Restarts timed (the median is the figure). */
const RESTARTS = 3;
const SERVER_ENTRY = ['--enable-source-maps', 'dist/main.js'];
const CLI_ENTRY = ['--enable-source-maps', 'dist/cli.js'];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

function env(dataDir: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'development',
    DATA_DIR: dataDir,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The development sandbox beside it, on a port of its own (not the default 3001).
    SANDBOX_PROVIDER_PORT: String(PORT + 1),
    // No background calls to the sandbox while measuring.
    PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
  };
}

/** Start the server's entry (in its own process group) and wait for `/readyz`; ms and a stop. */
async function start(dataDir: string): Promise<{ ms: number; stop: () => Promise<void> }> {
  const began = performance.now();
  const child = spawn(process.execPath, SERVER_ENTRY, {
    cwd: ROOT,
    env: env(dataDir),
    stdio: process.env.BENCH_DEBUG ? 'inherit' : 'ignore',
    detached: true,
  });
  // Signal the whole group and wait until no process of it is left (the next start needs the
  // data directory's lock).
  const groupAlive = () => {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stop = async () => {
    if (!groupAlive()) return;
    process.kill(-child.pid!, 'SIGTERM');
    const deadline = performance.now() + 15_000;
    while (groupAlive() && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    if (groupAlive()) process.kill(-child.pid!, 'SIGKILL');
  };
  while (performance.now() - began < START_DEADLINE_MS) {
    const ready = await fetch(`http://127.0.0.1:${PORT}/readyz`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ready) return { ms: performance.now() - began, stop };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await stop();
  throw new Error(
    child.exitCode !== null
      ? `dist/main.js exited (${child.exitCode}) before /readyz answered (BENCH_DEBUG=1 shows its output)`
      : `dist/main.js did not answer /readyz within ${START_DEADLINE_MS} ms`,
  );
}

/** Run the CLI's entry with `args` and time it (wall and CPU of its finished process tree). */
function timeCli(dataDir: string, args: string[]): { wallMs: number; cpuMs: number } {
  const cpuBefore = childrenCpuMs();
  const began = performance.now();
  const run = spawnSync(process.execPath, [...CLI_ENTRY, ...args], {
    cwd: ROOT,
    env: env(dataDir),
    encoding: 'utf8',
    timeout: 60_000,
  });
  const wallMs = performance.now() - began;
  if (run.status !== 0) throw new Error(`cli ${args.join(' ')} failed: ${run.stderr}`);
  return { wallMs, cpuMs: childrenCpuMs() - cpuBefore };
}

/**
 * CPU time of every finished (waited-for) child of this process so far, in milliseconds:
 * `cutime` + `cstime` of /proc/self/stat (fields 16 and 17, in clock ticks of 10 ms on Linux).
 *
 * @see https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html
 */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/**
 * Measure the empty start, RESTARTS restarts, and five CLI commands against the last restarted
 * server (after the build, untimed).
 */
export async function measureStartupAndCli(portalCode = '4242'): Promise<StartupTimings> {
  execFileSync('sh', ['scripts/build.sh'], { cwd: ROOT, stdio: 'inherit' });
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-bench-start-'));
  try {
    const first = await start(dataDir);
    await first.stop();
    const restartsMs: number[] = [];
    let second = await start(dataDir);
    restartsMs.push(second.ms);
    while (restartsMs.length < RESTARTS) {
      await second.stop();
      second = await start(dataDir);
      restartsMs.push(second.ms);
    }
    try {
      timeCli(dataDir, [
        'portal',
        'create',
        '--name',
        'Bench',
        '--admin-email',
        'bench@example.test',
        '--code',
        portalCode,
      ]);
      const runs = [];
      for (let i = 0; i < 5; i++) {
        runs.push(timeCli(dataDir, ['token', 'regenerate', '--portal', portalCode]));
      }
      return {
        emptyMs: first.ms,
        restartMs: median(restartsMs),
        restartsMs,
        cli: {
          wallMs: median(runs.map((r) => r.wallMs)),
          cpuMs: median(runs.map((r) => r.cpuMs)),
          runs: runs.length,
        },
      };
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
