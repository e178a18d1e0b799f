/**
 * A PostgreSQL server of the test's own, in a temporary directory on a free port, that the test
 * may stop, restart and cut (never the shared server on 5432), and a TCP proxy in front of any
 * server whose connections the test can cut. Both are torn down in `t.after`.
 *
 * Needs PostgreSQL's server binaries (`/usr/lib/postgresql/<version>/bin`, Debian's
 * `postgresql` package) and TEST_DATABASE_URL (the suite's PostgreSQL runs are opted into with
 * it); `privatePostgresSkip()` says why a test cannot run.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/** The newest installed PostgreSQL's bin directory, or undefined. */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** Why a private server cannot run here, or undefined when it can. */
export function privatePostgresSkip(): string | undefined {
  if (!process.env.TEST_DATABASE_URL) return 'TEST_DATABASE_URL is not set (PostgreSQL runs)';
  if (!postgresBin()) return 'no PostgreSQL server binaries in /usr/lib/postgresql/*/bin';
  return undefined;
}

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  port: number;
  /** `pg_ctl restart -m fast`: every session ended (57P01), then the server back. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`: every session ended (57P01); connections refused until `start()`. */
  stop(): Promise<void>;
  /** `pg_ctl start`, after `stop()`: resolves once the server accepts connections. */
  start(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Start a private server (see the module's comment). */
export async function startPrivatePostgres(
  t: Pick<TestContext, 'after'>,
): Promise<PrivatePostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL server binaries');
  const dir = mkdtempSync(join(tmpdir(), 'portico-pg-'));
  const data = join(dir, 'data');
  // PostgreSQL refuses to run as root: as root, run it as the `postgres` user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  const run = (tool: string, args: string[]) =>
    execFileSync(
      asRoot ? 'runuser' : join(bin, tool),
      asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args,
      { stdio: 'pipe', timeout: 60_000 },
    );
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const pgCtl = (...args: string[]) =>
    run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '60', ...args]);
  pgCtl('start');
  t.after(() => {
    try {
      pgCtl('stop', '-m', 'immediate');
    } catch {
      /* already stopped */
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart() {
      pgCtl('restart', '-m', 'fast');
    },
    async stop() {
      pgCtl('stop', '-m', 'fast');
    },
    async start() {
      pgCtl('start');
    },
  };
}

export interface CuttableProxy {
  /** `postgres://postgres@127.0.0.1:<proxy port>/postgres`. */
  url: string;
  /** Connections currently open through the proxy. */
  open(): number;
  /** End every connection open now (both sides), as a network fault does; new ones pass. */
  cut(): void;
}

/** A TCP proxy to `127.0.0.1:targetPort` whose connections the test can cut. */
export async function cuttableProxy(
  t: Pick<TestContext, 'after'>,
  targetPort: number,
): Promise<CuttableProxy> {
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  t.after(async () => {
    for (const [a, b] of pairs) {
      a.destroy();
      b.destroy();
    }
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    open: () => pairs.size,
    cut() {
      for (const [a, b] of [...pairs]) {
        a.destroy();
        b.destroy();
      }
    },
  };
}
