/**
 * Black-box helpers: the real server (`src/main.ts`) and the real CLI as child processes.
 *
 * Every process spawned here is killed whatever happens: a `t.after` hook is registered the
 * moment it is spawned (before anything is awaited), every wait has a deadline that kills it,
 * and should the test runner stop this file's process (`--test-timeout` sends SIGTERM, which
 * runs no `t.after`), the children still running are killed first. A test therefore never
 * hangs on, or leaves behind, a process it started.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { deadline, TEST_SLOWDOWN } from './deadlines.ts';
import { ROOT } from './root.ts';

let built: string | undefined;

/**
 * The `dist/` folder of a fresh build of src/ for this test process (`scripts/build.sh` into
 * its own folder under test-output/, so concurrent test files never share or replace one), made once
 * per process: spawned servers and CLIs run the built JavaScript, as `npm start`, the CLI and
 * the production image do, and never a stale `dist/`.
 */
export function freshBuild(): string {
  built ??= (() => {
    const out = join(ROOT, 'test-output', `build-${process.pid}`, 'dist');
    execFileSync('sh', [join(ROOT, 'scripts', 'build.sh'), out], { stdio: 'inherit' });
    return out;
  })();
  return built;
}

/** Node's arguments that run the built server (`entry` main) or CLI (`entry` cli). */
export function builtEntry(entry: 'main' | 'cli'): string[] {
  return ['--enable-source-maps', join(freshBuild(), `${entry}.js`)];
}

/**
 * How long a spawned server or CLI run may take to start or finish, in milliseconds: 30 s on a
 * quiet 4-core machine scaled by the tests' slowdown (deadlines.ts: fewer cores or a high load
 * give more), or `PORTICO_TEST_STARTUP_MS`.
 */
export const STARTUP_MS = Number(process.env.PORTICO_TEST_STARTUP_MS) || deadline(30_000);

/** How long a stopped process may take to exit after its signal before it is SIGKILLed. */
const GRACE_MS = 10_000;

/** What registers clean-up: a test's `t` or, for a whole suite, `{ after }` from node:test. */
export interface Hookable {
  after(fn: () => unknown): void;
}

/**
 * Clean-ups of processes that outlive the test that starts them: pass it where a `t` goes and
 * call `run` from the suite's `after` (registered in the `describe` body). node:test's global
 * `after` cannot be used for this: called inside a test, it hooks that test.
 */
export function suiteCleanup(): Hookable & { run(): Promise<void> } {
  const fns: (() => unknown)[] = [];
  return {
    after: (fn) => void fns.push(fn),
    async run() {
      for (const fn of fns.splice(0).reverse()) await fn();
    },
  };
}

/** A fresh temporary data directory. */
export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'portico-bb-'));
}

/** The test runner's own NODE_OPTIONS/NODE_TEST_CONTEXT must not leak into a child. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _a, NODE_OPTIONS: _b, ...rest } = process.env;
  return { ...rest, NODE_ENV: 'test', LOG_LEVEL: 'info', ...env };
}

/** A sandbox provider's app, as a Portico pointed at it is configured. */
export interface SandboxApp {
  /** The sandbox's origin (`http://127.0.0.1:<port>`). */
  url: string;
  appId: string;
  appSecret: string;
  redirectUri: string;
}

/**
 * The provider settings of a Portico that uses `app` of a sandbox provider, with a fresh
 * encryption key and no health check (no call to a provider a test did not ask for).
 */
export function sandboxProviderEnv(app: SandboxApp) {
  return {
    PROVIDER_APP_ID: app.appId,
    PROVIDER_APP_SECRET: app.appSecret,
    PROVIDER_AUTHORIZATION_BASE_URL: app.url,
    PROVIDER_GRAPH_BASE_URL: app.url,
    PROVIDER_REDIRECT_URI: app.redirectUri,
    PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
    TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  };
}

/**
 * The whole environment of a spawned server (or CLI) process: only PATH of this process's
 * own, the server on 127.0.0.1 logging at info without provider health checks, the provider
 * settings of `app` when given, then `settings` (which win).
 */
export function spawnedServerEnv(
  settings: Record<string, string>,
  app?: SandboxApp,
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
    ...(app && sandboxProviderEnv(app)),
    ...settings,
  };
}

const running = new Set<ChildProcess>();
let processHooksInstalled = false;

/** Kill what is still running when this file's process ends, however it ends. */
function installProcessHooks(): void {
  if (processHooksInstalled) return;
  processHooksInstalled = true;
  const killAll = () => {
    for (const child of running) child.kill('SIGKILL');
  };
  process.on('exit', killAll);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      killAll();
      // Nobody else handles it: die of the signal as we would have without this hook.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

/** A child process whose output is kept. */
export interface Spawned {
  child: ChildProcess;
  /** Every stdout and stderr line so far. */
  output: string[];
  /** Standard output and error as received, so far. */
  stdout(): string;
  stderr(): string;
  /**
   * Resolves to the exit code (`null` when ended by a signal or never started) once the
   * process has exited and its output is read.
   */
  exited: Promise<number | null>;
  /**
   * Resolves with the match once an output line (past or future) matches `pattern`.
   *
   * @throws Error naming `what`, the deadline and the output, after killing the process, when
   *   it exits first or nothing matches within `timeoutMs`.
   */
  waitForLine(pattern: RegExp, what: string, timeoutMs?: number): Promise<RegExpExecArray>;
  /**
   * Resolves to the exit code once the process exits by itself.
   *
   * @throws Error naming `what` and the output, after killing the process, when it has not
   *   exited within `timeoutMs`.
   */
  waitForExit(what: string, timeoutMs?: number): Promise<number | null>;
  /**
   * Send `signal` (default SIGTERM), wait up to `graceMs` for the exit, then SIGKILL.
   * Resolves to the exit code; immediately when it has already exited.
   */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

/**
 * Spawn `node <args>` (from the repository root unless `cwd` is given) and register its kill in
 * `t.after` at once, before the caller awaits anything.
 *
 * @param options.env the whole environment of the child (see {@link childEnv}).
 * @param options.input written to standard input, which is then closed; standard input is
 *   ignored when absent.
 */
export function spawnNode(
  t: Hookable,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string },
): Spawned {
  installProcessHooks();
  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  running.add(child);
  let ended = false;
  const output: string[] = [];
  const raw = { stdout: '', stderr: '' };
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code));
    child.once('error', (err) => {
      raw.stderr += `spawn failed: ${err.message}\n`;
      output.push(`spawn failed: ${err.message}`);
      resolve(null);
    });
  });
  void exited.then(() => {
    ended = true;
    running.delete(child);
  });
  const watchers = new Set<(line: string) => void>();
  for (const [name, stream] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    stream?.on('data', (chunk: Buffer) => (raw[name] += chunk.toString('utf8')));
    if (stream)
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        for (const watch of watchers) watch(line);
      });
  }
  if (options.input !== undefined) child.stdin?.end(options.input);

  const stop = async (signal: NodeJS.Signals = 'SIGTERM', graceMs = GRACE_MS) => {
    if (ended) return exited;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  t.after(() => stop());

  /** Kill the process and describe why, with everything it wrote. */
  const failure = (what: string, why: string) => {
    void stop('SIGKILL');
    return new Error(`${what}: ${why}; the process was killed. Output:\n${output.join('\n')}`);
  };
  const tooLong = (timeoutMs: number) =>
    `not within ${timeoutMs} ms (${availableParallelism()} CPUs, slowdown ×${TEST_SLOWDOWN}; ` +
    'PORTICO_TEST_STARTUP_MS or PORTICO_TEST_SLOWDOWN raises the deadline)';

  const waitForLine = (pattern: RegExp, what: string, timeoutMs = STARTUP_MS) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const seen = output.map((line) => pattern.exec(line)).find((m) => m !== null);
      if (seen) return resolve(seen);
      const settle = (error: Error | undefined, match?: RegExpExecArray) => {
        clearTimeout(timer);
        watchers.delete(watch);
        if (error) reject(error);
        else resolve(match!);
      };
      const watch = (line: string) => {
        const m = pattern.exec(line);
        if (m) settle(undefined, m);
      };
      watchers.add(watch);
      const timer = setTimeout(() => settle(failure(what, tooLong(timeoutMs))), timeoutMs);
      // `exited` waits for the output streams to close, so every line has been seen by then.
      void exited.then((code) => {
        if (watchers.has(watch)) settle(failure(what, `the process exited with ${code} first`));
      });
    });

  const waitForExit = async (what: string, timeoutMs = STARTUP_MS) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(failure(what, tooLong(timeoutMs))), timeoutMs);
    });
    try {
      return await Promise.race([exited, deadline]);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    child,
    output,
    stdout: () => raw.stdout,
    stderr: () => raw.stderr,
    exited,
    waitForLine,
    waitForExit,
    stop,
  };
}

export interface RunningServer extends Spawned {
  /** `http://127.0.0.1:<port>` */
  url: string;
}

/**
 * Spawn the built `src/main.ts` (directly, as production runs it) on a free port and wait for Fastify's
 * "Server listening at" line. The process is killed in `t.after` whatever happens.
 *
 * @throws Error with the server's output when it exits before listening or misses the
 *   deadline ({@link STARTUP_MS} unless `timeoutMs` is given); it is killed first.
 */
export async function startServer(
  t: Hookable,
  env: Record<string, string>,
  timeoutMs = STARTUP_MS,
): Promise<RunningServer> {
  const spawned = spawnNode(t, builtEntry('main'), {
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', ...env }),
  });
  const [, url] = await spawned.waitForLine(
    /Server listening at (http:\/\/127\.0\.0\.1:\d+)/,
    'the server did not start',
    timeoutMs,
  );
  return { ...spawned, url: url! };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run the built CLI (`src/cli/index.ts`, dist/cli.js) with `args`, `input` on standard input; resolves when it exits.
 *
 * @throws Error with its output when it has not exited within `timeoutMs` (it is killed).
 */
export async function runCli(
  t: Hookable,
  args: string[],
  env: Record<string, string>,
  input?: string,
  timeoutMs = STARTUP_MS,
): Promise<CliResult> {
  const run = spawnNode(t, [...builtEntry('cli'), ...args], {
    env: childEnv(env),
    input: input ?? '',
  });
  const code = await run.waitForExit(`cli ${args.join(' ')} did not finish`, timeoutMs);
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** A CLI process still running: its output so far, and waits with deadlines. */
export interface CliProcess {
  stdout(): string;
  stderr(): string;
  /** Resolves when stderr matches `pattern`; rejects after `ms` with what it saw. */
  stderrMatches(pattern: RegExp, ms: number): Promise<void>;
  /** Resolves with the result when the CLI exits; rejects after `ms`. */
  exited(ms: number): Promise<CliResult>;
}

/**
 * Start the CLI (`src/cli/index.ts`, through tsx) with `args` without waiting for it; killed in `t.after` whatever happened.
 */
export function spawnCli(
  t: { after(fn: () => void): void },
  args: string[],
  env: Record<string, string>,
): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
    cwd: ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exit = new Promise<CliResult>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  const deadline = <T>(what: string, ms: number, p: Promise<T>) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`${what} within ${ms} ms; stderr: ${stderr}`)),
          ms,
        ).unref(),
      ),
    ]);
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    stderrMatches: (pattern, ms) =>
      deadline(
        `CLI stderr did not match ${pattern}`,
        ms,
        new Promise<void>((resolve, reject) => {
          const check = () => {
            if (pattern.test(stderr)) resolve();
            else if (child.exitCode !== null) reject(new Error(`CLI exited; stderr: ${stderr}`));
            else setTimeout(check, 50);
          };
          check();
        }),
      ),
    exited: (ms) => deadline('CLI did not exit', ms, exit),
  };
}
