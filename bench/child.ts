/**
 * Start a benchmark server (`bench/server.ts`) in a child process and talk to it over IPC.
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FromServer, ServerKind, ToServer } from './server.ts';

const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));
const BUILD_DIR = fileURLToPath(new URL('./results/build/', import.meta.url));
const MIGRATIONS = fileURLToPath(new URL('../src/db/migrations', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../scripts/bundle.mjs', import.meta.url));

let built: Promise<string> | undefined;

/**
 * `server.ts` and the app bundled by `scripts/bundle.mjs`, as `scripts/build.sh` bundles
 * `dist/main.js`, once per run: the servers run plain JavaScript like production, not
 * TypeScript through tsx (whose loader thread alone adds tens of MB of RSS and CPU at every
 * import).
 */
function builtServer(): Promise<string> {
  built ??= (async () => {
    rmSync(BUILD_DIR, { recursive: true, force: true });
    execFileSync(process.execPath, [BUNDLE, BUILD_DIR, SERVER], { stdio: 'inherit' });
    // The bundle looks for the migrations beside itself, as dist/main.js does (build.sh).
    cpSync(MIGRATIONS, join(BUILD_DIR, 'migrations'), { recursive: true });
    return join(BUILD_DIR, 'server.js');
  })();
  return built;
}

export interface BenchServer {
  port: number;
  token?: string;
  portalCode?: string;
  /** Send a message and wait for the first answer of `type`. */
  ask<T extends FromServer['type']>(
    message: ToServer,
    type: T,
  ): Promise<Extract<FromServer, { type: T }>>;
  /** Ask the server to close and wait for the process to exit. */
  stop(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  /** Extra node flags, e.g. `--cpu-prof`. */
  execArgv?: string[];
}

function waitFor<T extends FromServer['type']>(
  child: ChildProcess,
  type: T,
): Promise<Extract<FromServer, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: FromServer) => {
      if (message.type === type) {
        cleanup();
        resolve(message as Extract<FromServer, { type: T }>);
      } else if (message.type === 'error') {
        cleanup();
        reject(new Error(`benchmark server: ${message.message}`));
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(new Error(`benchmark server exited (${code}) before answering ${type}`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export async function startServer(
  kind: ServerKind,
  { env = {}, execArgv = [] }: StartOptions = {},
): Promise<BenchServer> {
  const child = fork(await builtServer(), [kind], {
    execArgv: ['--enable-source-maps', ...execArgv],
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', ...env },
    // The server's stdout (its request log) goes to /dev/null: it is written, not read.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = await waitFor(child, 'ready');
  return {
    port: ready.port,
    ...(ready.token ? { token: ready.token } : {}),
    ...(ready.portalCode ? { portalCode: ready.portalCode } : {}),
    ask(message, type) {
      const answer = waitFor(child, type);
      child.send(message);
      return answer;
    },
    async stop() {
      if (child.exitCode === null) child.send({ type: 'stop' } satisfies ToServer);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * One token sends the whole load, far over the production default of 600 requests a minute:
 * the limits are raised so that every answer is a real verification. The limiter still counts
 * every request, so its cost stays in the figures.
 */
export const BENCH_RATE_LIMITS = {
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000000',
};
