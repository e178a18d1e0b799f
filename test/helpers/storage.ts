/**
 * Real storage for tests: an in-memory PGlite always, and a real PostgreSQL as well when
 * TEST_DATABASE_URL is set. Each `open()` gives an isolated, migrated database: a PGlite in the
 * migrated template's state (loaded from it, or one an earlier test of this process closed and
 * that was put back in that state), or a PostgreSQL database in the same state (copied from a
 * migrated template database, or one an earlier test of this process closed and that was put back
 * in that state; dropped when the process's tests end).
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import {
  MIGRATIONS_FOLDER,
  openStorage,
  pgliteStorage,
  readPgliteTemplate,
  type Storage,
} from '../../src/db/client.ts';
import {
  readTemplateState,
  resetToTemplate,
  type StateClient,
  type TemplateState,
} from './database-state.ts';
import { ROOT } from './root.ts';

let template: Blob | undefined;

/**
 * The PGlite template of the current migrations, read once per test process: the one beside
 * the code when the suite runs bundled (`npm test`: scripts/build.sh put it there), otherwise
 * made by scripts/pglite-template.mjs as the build makes it (initdb and migrations run once,
 * then cached in .cache/pglite/). Every new in-memory database loads it instead of running
 * initdb (about 4 s of CPU each), then migrates as before (nothing left to apply, unless the
 * template were stale).
 */
export function pgliteTemplate(): Blob {
  template ??=
    readPgliteTemplate() ??
    (() => {
      const file = join(ROOT, 'test-output', `pglite-template-${process.pid}.tar`);
      execFileSync(process.execPath, [
        join(ROOT, 'scripts', 'pglite-template.mjs'),
        MIGRATIONS_FOLDER,
        file,
      ]);
      const made = readPgliteTemplate(file)!;
      rmSync(file, { force: true });
      return made;
    })();
  return template;
}

export interface Backend {
  name: 'pglite' | 'postgres';
  /** A fresh, migrated, isolated storage. Close it when done (the test helper does). */
  open(): Promise<Storage>;
}

/**
 * The name of a test database: `TEST_DATABASE_PREFIX` (default none) + `name`, for a shared
 * server where a user may only create databases of some prefix (e.g. `x_`). The prefix must be
 * an unquoted SQL identifier's start (lower-case letters, digits, `_`; not a digit first).
 */
export function testDatabaseName(name: string): string {
  const prefix = process.env.TEST_DATABASE_PREFIX ?? '';
  if (!/^([a-z_][a-z0-9_]*)?$/.test(prefix))
    throw new Error(
      `TEST_DATABASE_PREFIX must be lower-case letters, digits and "_" (not a digit first); got ${JSON.stringify(prefix)}.`,
    );
  return `${prefix}${name}`;
}

/** A URL for database `name` on the server of TEST_DATABASE_URL. */
function urlFor(name: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Create a PostgreSQL database, empty or a copy of database `template`; returns its URL and a
 * function that drops it.
 */
export async function createPostgresDatabase(template?: string): Promise<{
  url: string;
  drop: () => Promise<void>;
}> {
  const name = testDatabaseName(`portico_test_${randomBytes(6).toString('hex')}`);
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  return {
    url: urlFor(name),
    drop: async () => {
      const c = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** This process's in-memory databases in the template's state, waiting for the next `open()`. */
const idle: PGlite[] = [];
/** At most this many are kept (a test that opens two databases at once reuses both). */
const MAX_IDLE = 2;
/** The PGlite template's state, read from the first database this process loads. */
let pgliteTemplateState: TemplateState | undefined;
// A PGlite left open keeps its process alive (its timers): the kept ones close with the file.
after(async () => {
  for (const client of idle.splice(0)) await client.close();
});

/** `client` as the shared reset sees it. */
function pgliteStateClient(client: PGlite): StateClient {
  return {
    rows: async <T>(statement: string) => (await client.query<T>(statement)).rows,
    exec: (script) => client.exec(script),
  };
}

/**
 * Storage over `client` for one test. After its `close()` the test's handle is dead (every call
 * rejects and `closed` is true, as on a closed PGlite, so a late query of one test never lands
 * in the next test's database), its LISTENs are ended, and the client goes back to `idle`
 * when it could be reset.
 */
function lease(client: PGlite): Promise<Storage> {
  let open = true;
  const unlistens = new Set<() => Promise<void>>();
  const handle = new Proxy(client, {
    get(target, property) {
      if (property === 'closed') return !open || target.closed;
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!open) return Promise.reject(new Error('PGlite is closed'));
        const result: unknown = Reflect.apply(value, target, args);
        if (property !== 'listen') return result;
        return (result as Promise<() => Promise<void>>).then((unlisten) => {
          const once = async () => {
            if (unlistens.delete(once)) await unlisten();
          };
          unlistens.add(once);
          return once;
        });
      };
    },
  });
  return pgliteStorage(handle, async () => {
    open = false;
    for (const unlisten of [...unlistens]) await unlisten();
    const kept =
      idle.length < MAX_IDLE &&
      (await resetToTemplate(pgliteStateClient(client), pgliteTemplateState!));
    if (kept) idle.push(client);
    else await client.close();
  });
}

const pglite: Backend = {
  name: 'pglite',
  async open() {
    const reused = idle.pop();
    const client =
      reused ?? (await openStorage({ kind: 'pglite-memory', template: pgliteTemplate() })).pglite!;
    const storage = await lease(client);
    await storage.migrate();
    pgliteTemplateState ??= await readTemplateState(pgliteStateClient(client));
    return storage;
  },
};

let postgresTemplate: Promise<string> | undefined;

/**
 * The name of a migrated PostgreSQL database on the server of TEST_DATABASE_URL that each
 * test's database is copied from (`create database … template …`: about a fifth of the time
 * the migrations take). Named by a hash of the migrations, so a template of other migrations
 * is never used; made once by whichever test process comes first (under an advisory lock,
 * under a temporary name renamed when complete), then reused by every later process and run.
 *
 * @see https://www.postgresql.org/docs/current/manage-ag-templatedbs.html
 */
function migratedPostgresTemplate(): Promise<string> {
  postgresTemplate ??= (async () => {
    const hash = createHash('sha256');
    for (const file of readdirSync(MIGRATIONS_FOLDER, { recursive: true }).sort())
      if (statSync(join(MIGRATIONS_FOLDER, String(file))).isFile())
        hash.update(String(file)).update(readFileSync(join(MIGRATIONS_FOLDER, String(file))));
    const name = testDatabaseName(`portico_template_${hash.digest('hex').slice(0, 16)}`);
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      await admin.query('select pg_advisory_lock(hashtext($1))', ['portico_template']);
      const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
      if (found.rowCount === 0) {
        const building = `${name}_building`;
        await admin.query(`drop database if exists ${building} with (force)`);
        await admin.query(`create database ${building}`);
        const storage = await openStorage({ kind: 'postgres', url: urlFor(building), poolSize: 1 });
        try {
          await storage.migrate();
        } finally {
          await storage.close();
        }
        await admin.query(`alter database ${building} rename to ${name}`);
      }
    } finally {
      await admin.end();
    }
    return name;
  })();
  return postgresTemplate;
}

/** A PostgreSQL database of this process: its URL, and the function that drops it. */
type PostgresDatabase = Awaited<ReturnType<typeof createPostgresDatabase>>;
/** This process's PostgreSQL databases in the template's state, waiting for the next `open()`. */
const idlePostgres: PostgresDatabase[] = [];
/** The PostgreSQL template's state, read from the first copy this process makes. */
let postgresTemplateState: TemplateState | undefined;
after(async () => {
  for (const database of idlePostgres.splice(0)) await database.drop();
});

/** `work` with a client of its own on `url`, closed after (node-postgres runs scripts as is). */
async function onConnection<T>(url: string, work: (client: StateClient) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work({
      rows: async <R>(statement: string) => (await client.query(statement)).rows as R[],
      exec: (script) => client.query(script),
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * {@link resetToTemplate} for a closed test's PostgreSQL database, after ending the connections
 * the test left open. A reset database is reused by the next `open()` of this process instead of
 * copying the template again: a copy writes the whole template to the WAL and a drop removes
 * every file (docs/decisions/0020-tests.md).
 */
async function resetPostgres(url: string): Promise<boolean> {
  return onConnection(url, async (client) => {
    await client.exec(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    return resetToTemplate(client, postgresTemplateState!);
  }).catch(() => false);
}

const postgres: Backend = {
  name: 'postgres',
  async open() {
    const reused = idlePostgres.pop();
    const database = reused ?? (await createPostgresDatabase(await migratedPostgresTemplate()));
    postgresTemplateState ??= await onConnection(database.url, readTemplateState);
    const storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 5 });
    await storage.migrate();
    const close = storage.close.bind(storage);
    let closing: Promise<void> | undefined;
    return Object.assign(storage, {
      close: () =>
        (closing ??= (async () => {
          await close();
          if (idlePostgres.length < MAX_IDLE && (await resetPostgres(database.url)))
            idlePostgres.push(database);
          else await database.drop();
        })()),
    });
  },
};

/** The backends every storage-dependent test runs on. */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? [pglite, postgres] : [pglite];
}
