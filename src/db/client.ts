/**
 * Storage: Drizzle over embedded PGlite (default) or PostgreSQL through node-postgres.
 * One schema and one set of drizzle-kit migrations serve both.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import type { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { parseTar } from 'nanotar';
import pg from 'pg';
import {
  acquireDataDirLock,
  acquireDataDirLockAfterCli,
  type LockHolder,
} from '../platform/data-dir-lock.ts';
import { boundPoolQueue, DEFAULT_POOL_QUEUE } from './pool-queue.ts';
import { releasingTransactions } from './pool-transactions.ts';
import * as schema from './schema/index.ts';

export type Schema = typeof schema;
/** The Drizzle database, whichever driver is underneath. */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
/** A transaction of the database: what `Database.transaction` hands its callback. */
export type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

export interface Storage {
  readonly kind: 'pglite' | 'postgres';
  readonly db: Database;
  /** Resolves when the database answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Apply the committed migrations (idempotent; serialised across instances on PostgreSQL). */
  migrate(): Promise<void>;
  /** Close the database (and release the data directory lock). Idempotent. */
  close(): Promise<void>;
  /** The underlying PGlite instance (pglite only). */
  readonly pglite?: PGlite;
  /** The underlying node-postgres pool (postgres only). */
  readonly pool?: pg.Pool;
}

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * The PGlite template beside the build (`dist/pglite-template.tar`, made by
 * scripts/pglite-template.mjs): a database initialised and migrated at build time. Absent when
 * running from src/ (tests pass their own): then a new data directory runs initdb.
 */
export const PGLITE_TEMPLATE_FILE = fileURLToPath(
  new URL('./pglite-template.tar', import.meta.url),
);

/**
 * The template as PGlite's `loadDataDir` takes it, or undefined when there is none.
 *
 * @see https://pglite.dev/docs/api#loaddatadir
 */
export function readPgliteTemplate(file = PGLITE_TEMPLATE_FILE): Blob | undefined {
  return existsSync(file) ? new Blob([readFileSync(file)]) : undefined;
}

/**
 * Unpack the template (a tar of a PGlite data directory, as `dumpDataDir` writes it) into `dir`
 * on disk, for PGlite to open as a directory in use. Written beside `dir` first and renamed
 * into place, so a start cut off half-way leaves no directory that looks initialised (the next
 * start unpacks again); whatever `dir` held without `PG_VERSION` is replaced. Directories
 * 0700, files with the archive's mode (owner bits only).
 *
 * Why not PGlite's `loadDataDir`: it unpacks through PGlite's WebAssembly file system, which
 * grows the WebAssembly memory by the archive's bytes several times over and never gives it
 * back, so the first start of a server stayed about 100 MB larger than every later one
 * (docs/performance.md, start-up and memory).
 *
 * @throws Error on an entry outside `dir` or of a type other than file or directory.
 * @see https://pglite.dev/docs/api#dumpdatadir
 */
export function unpackPgliteTemplate(file: string, dir: string): void {
  const staging = `${dir}.unpacking`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true, mode: 0o700 });
  const root = resolve(staging);
  for (const entry of parseTar(readFileSync(file))) {
    const path = resolve(root, `.${sep}${entry.name}`);
    if (path !== root && !path.startsWith(root + sep))
      throw new Error('the PGlite template names a path outside the data directory');
    if (entry.type === 'directory') mkdirSync(path, { recursive: true, mode: 0o700 });
    else if (entry.type === 'file' || entry.type === undefined) {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      const mode = parseInt(entry.attrs?.mode ?? '600', 8) & 0o700;
      writeFileSync(path, entry.data ?? new Uint8Array(), { mode: mode || 0o600 });
    } else throw new Error(`the PGlite template holds an entry of type ${entry.type}`);
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
}

/**
 * Bounds on how long one PostgreSQL request may hold a pool connection, in milliseconds; 0
 * leaves the server's (or the role's) setting alone. A statement over `statementMs` fails with
 * SQLSTATE 57014, a lock wait over `lockMs` with 55P03, a session idle inside a transaction for
 * `idleInTransactionMs` is ended (25P03), and waiting `connectMs` for a connection (a new one,
 * or a free one of the pool) fails: all read as `unavailable` (platform/database-errors.ts).
 *
 * @see https://www.postgresql.org/docs/current/runtime-config-client.html#GUC-STATEMENT-TIMEOUT
 */
export interface DatabaseTimeouts {
  statementMs: number;
  lockMs: number;
  idleInTransactionMs: number;
  connectMs: number;
}

/** The defaults of the DATABASE_*_TIMEOUT_MS variables (docs/reference/configuration.md). */
export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  statementMs: 15_000,
  lockMs: 5_000,
  idleInTransactionMs: 60_000,
  connectMs: 5_000,
};

/** Where to store: a PostgreSQL URL, an embedded directory, or an in-memory PGlite (tests). */
export type StorageTarget =
  | {
      kind: 'postgres';
      url: string;
      poolSize?: number;
      /** Requests that may wait for a pool connection at once (`DATABASE_POOL_QUEUE`). */
      poolQueue?: number;
      timeouts?: DatabaseTimeouts;
    }
  | {
      kind: 'pglite';
      dataDir: string;
      /** Written in the directory's lock: a CLI command opens it as `cli`. Default `server`. */
      holder?: LockHolder;
      /** A starting server: wait (bounded) for a CLI command that holds the directory. */
      waitForCli?: { ms: number; onWait: (cliPid: number) => void };
    }
  | { kind: 'pglite-memory'; template?: Blob | undefined };

/**
 * Open storage. For an embedded data directory this takes the directory's exclusive lock first.
 *
 * @throws DataDirLockedError when another live process owns the data directory (for
 *   `waitForCli`: a server, or a CLI command still after the wait).
 */
export async function openStorage(target: StorageTarget): Promise<Storage> {
  if (target.kind === 'postgres')
    return openPostgres(
      target.url,
      { size: target.poolSize ?? 10, queue: target.poolQueue ?? DEFAULT_POOL_QUEUE },
      target.timeouts ?? DEFAULT_DATABASE_TIMEOUTS,
    );
  useBaselineWasmCompiler();
  // Loaded only when used: PGlite's module alone adds ~40 MB of resident memory, which a
  // PostgreSQL deployment should not carry.
  const { PGlite } = await import('@electric-sql/pglite');
  let client: PGlite;
  if (target.kind === 'pglite') {
    const release = target.waitForCli
      ? await acquireDataDirLockAfterCli(target.dataDir, {
          waitMs: target.waitForCli.ms,
          onWait: target.waitForCli.onWait,
        })
      : acquireDataDirLock(target.dataDir, target.holder);
    try {
      const dir = join(target.dataDir, 'pglite');
      // A new directory starts from the template (initdb and migrations done at build time:
      // seconds of CPU saved at the first start), unpacked on disk; one in use is opened as it
      // is. Without a template (running from src/), PGlite runs initdb in it.
      if (!existsSync(join(dir, 'PG_VERSION')) && existsSync(PGLITE_TEMPLATE_FILE))
        unpackPgliteTemplate(PGLITE_TEMPLATE_FILE, dir);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      client = await PGlite.create(dir, {
        startParams: pgliteStartParams(PGlite.defaultStartParams),
      });
    } catch (err) {
      release();
      throw err;
    }
    return pgliteStorage(client, async () => {
      try {
        await client.close();
      } finally {
        release();
      }
    });
  }
  client = await PGlite.create({
    startParams: pgliteStartParams(PGlite.defaultStartParams),
    ...(await sharedPgliteRuntime()),
    ...(target.template ? { loadDataDir: target.template } : {}),
  });
  return pgliteStorage(client, () => client.close());
}

/**
 * Storage over an open PGlite client. `close` runs once, at the first `close()`: `openStorage`
 * closes the client and releases the data directory's lock; the tests' pool puts the client
 * back in the template's state and keeps it (test/helpers/storage.ts).
 */
export async function pgliteStorage(client: PGlite, close: () => Promise<void>): Promise<Storage> {
  const [{ drizzle: drizzlePglite }, { migrate: migratePglite }] = await Promise.all([
    import('drizzle-orm/pglite'),
    import('drizzle-orm/pglite/migrator'),
  ]);
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  let closed = false;
  return {
    kind: 'pglite',
    db,
    pglite: client,
    async ping() {
      await client.query('select 1');
    },
    async migrate() {
      await migratePglite(db as never, { migrationsFolder: MIGRATIONS_FOLDER });
    },
    async close() {
      if (closed) return;
      closed = true;
      await close();
    },
  };
}

/**
 * PostgreSQL's buffer pool in PGlite (`shared_buffers`), in PostgreSQL's units: 16 MB, not
 * initdb's 128 MB. PGlite's shared memory lives in the WebAssembly memory, which is zero-filled
 * and touched when PostgreSQL starts, so the pool costs its whole size in resident memory and
 * start-up time whether the data fill it or not. Measured on a data directory: 310 → 180 MB
 * resident and about 90 ms less to open. A page not in the pool is read through PGlite's file
 * system (the OS's page cache for a data directory, memory for an in-memory database).
 *
 * @see https://www.postgresql.org/docs/17/runtime-config-resource.html#GUC-SHARED-BUFFERS
 * @see docs/decisions/0019-speed.md
 */
export const PGLITE_SHARED_BUFFERS = '16MB';

/** PGlite's own start parameters (`PGlite.defaultStartParams`) with our buffer pool's size. */
function pgliteStartParams(defaults: readonly string[]): string[] {
  return [...defaults, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`];
}

/**
 * Run WebAssembly on V8's baseline compiler (Liftoff) only: PGlite's module, compiled after
 * this, is never recompiled by the optimising compiler (TurboFan). By default V8 tiers up
 * every hot function of PGlite's PostgreSQL in background threads, which cost more CPU than
 * a CLI command or a test process ever wins back, and memory. Measured (docs/decisions/0019-speed.md):
 * a CLI command on the embedded database 1.05 → 0.69 s of CPU and 228 →
 * 155 MB resident; opening an in-memory database from the template 1.30 → 0.92 s of CPU;
 * queries after warm-up within 10 % of the optimised code, since PGlite's time is mostly in
 * its JavaScript. Process-wide (V8 has no per-module setting); the only other WebAssembly in
 * this process is Node's own HTTP parser for `fetch`.
 *
 * @see https://v8.dev/docs/wasm-compilation-pipeline
 */
function useBaselineWasmCompiler(): void {
  // Idempotent: setting the flag again changes nothing.
  setFlagsFromString('--liftoff-only');
}

let pgliteRuntime: Promise<{ pgliteWasmModule: WebAssembly.Module; fsBundle: Blob }> | undefined;

/**
 * PGlite's WebAssembly, compiled once per process, and its file bundle, read once, for every
 * in-memory database: the tests open hundreds, and each compile cost about 170 ms of CPU
 * (measured: 650 → 480 ms of CPU per open). PGlite's own `pgliteWasmModule` and `fsBundle`
 * options; a data directory's single database loads them itself.
 */
function sharedPgliteRuntime() {
  pgliteRuntime ??= (async () => {
    const dist = new URL('.', import.meta.resolve('@electric-sql/pglite'));
    const [wasm, data] = await Promise.all([
      readFile(new URL('pglite.wasm', dist)),
      readFile(new URL('pglite.data', dist)),
    ]);
    return { pgliteWasmModule: await WebAssembly.compile(wasm), fsBundle: new Blob([data]) };
  })();
  return pgliteRuntime;
}

/** Arbitrary constant for the advisory lock that serialises migrations across instances. */
const MIGRATION_LOCK_KEY = 7_468_112_001;

function openPostgres(
  url: string,
  poolSettings: { size: number; queue: number },
  timeouts: DatabaseTimeouts,
): Storage {
  // The server-side timeouts travel as startup parameters of every pooled connection, so they
  // hold for each statement without a round trip. (A PGlite database has one in-process
  // connection: no other session can hold a lock it waits for.)
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSettings.size,
    ...(timeouts.statementMs > 0 ? { statement_timeout: timeouts.statementMs } : {}),
    ...(timeouts.lockMs > 0 ? { lock_timeout: timeouts.lockMs } : {}),
    ...(timeouts.idleInTransactionMs > 0
      ? { idle_in_transaction_session_timeout: timeouts.idleInTransactionMs }
      : {}),
    connectionTimeoutMillis: timeouts.connectMs,
  });
  // A connection the server ends (a restart, a failover, pg_terminate_backend, an idle
  // transaction's timeout) emits 'error' on its client, and an 'error' event without a listener
  // ends the process. An idle client's goes to the pool's 'error' (the pool discards it; the
  // next query opens a new connection). A client checked out for a transaction has no listener
  // of the pool's: this one stays on it for its whole life. The statement in flight fails with
  // the same error (`unavailable`: 503), and the pool drops the client at its release.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  boundPoolQueue(pool, poolSettings.queue);
  const db = drizzlePg(pool, { schema }) as unknown as Database;
  releasingTransactions(db, pool);
  let closed = false;
  return {
    kind: 'postgres',
    db,
    pool,
    async ping() {
      await pool.query('select 1');
    },
    async migrate() {
      const client = await pool.connect();
      try {
        // Waiting for another instance's migrations, and a migration itself, may take longer
        // than a request may: lift the bounds for this session only.
        await client.query('set statement_timeout = 0; set lock_timeout = 0');
        await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
        try {
          await migratePg(drizzlePg(client), { migrationsFolder: MIGRATIONS_FOLDER });
        } finally {
          await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
        }
        await client.query('reset statement_timeout; reset lock_timeout');
      } finally {
        client.release();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

/** Storage target for a parsed configuration: PostgreSQL when DATABASE_URL is set. */
export function storageTargetFor(config: {
  DATABASE_URL?: string | undefined;
  DATABASE_POOL_SIZE: number;
  DATABASE_POOL_QUEUE: number;
  DATABASE_STATEMENT_TIMEOUT_MS: number;
  DATABASE_LOCK_TIMEOUT_MS: number;
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: number;
  DATABASE_CONNECT_TIMEOUT_MS: number;
  dataDir: string;
}): StorageTarget {
  return config.DATABASE_URL
    ? {
        kind: 'postgres',
        url: config.DATABASE_URL,
        poolSize: config.DATABASE_POOL_SIZE,
        poolQueue: config.DATABASE_POOL_QUEUE,
        timeouts: {
          statementMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
          lockMs: config.DATABASE_LOCK_TIMEOUT_MS,
          idleInTransactionMs: config.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
          connectMs: config.DATABASE_CONNECT_TIMEOUT_MS,
        },
      }
    : { kind: 'pglite', dataDir: config.dataDir };
}
