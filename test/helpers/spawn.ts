/**
 * Black-box helpers: the real server (`npm start`'s entry) and the real CLI as child processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = join(import.meta.dirname, '..', '..');

/** A fresh temporary data directory. */
export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'portico-bb-'));
}

function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  // The test runner's own NODE_OPTIONS/NODE_TEST_CONTEXT must not leak into the child.
  const { NODE_TEST_CONTEXT: _a, NODE_OPTIONS: _b, ...rest } = process.env;
  return { ...rest, NODE_ENV: 'test', LOG_LEVEL: 'info', ...env };
}

export interface RunningServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  child: ChildProcess;
  /** Every stdout/stderr line so far. */
  output: string[];
  /** SIGTERM and wait; resolves to the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawn `src/main.ts` on a free port and wait until it logs that it is serving.
 *
 * @throws Error with the server's output when it exits before serving or within `timeoutMs`.
 */
export async function startServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<RunningServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not start:\n${output.join('\n')}`)),
      timeoutMs,
    );
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output.join('\n')}`));
    });
  });
  return {
    url,
    child,
    output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `src/cli.ts` with `args`; resolves when it exits. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  input?: string,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
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
 * Start `src/cli.ts` with `args` without waiting for it; killed in `t.after` whatever happened.
 */
export function spawnCli(
  t: { after(fn: () => void): void },
  args: string[],
  env: Record<string, string>,
): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
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
