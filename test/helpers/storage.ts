/**
 * Real storage for tests: an in-memory PGlite always, and a real PostgreSQL as well when
 * TEST_DATABASE_URL is set. Each `open()` gives an isolated, migrated database: a PGlite in the
 * migrated template's state (loaded from it, or one an earlier test of this process closed and
 * that was put back in that state), or a new PostgreSQL database that is dropped again on close.
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
  const name = `portico_test_${randomBytes(6).toString('hex')}`;
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

/**
 * What a database's state is made of besides its rows: every relation, column, default,
 * constraint, index, trigger, function, type, schema, extension, role and setting outside
 * PostgreSQL's own catalogs, the session's settings, prepared statements, cursors and LISTEN
 * channels, hashed. Equal to the template's, a database differs from it only in its rows.
 */
const SHAPE = `
  with user_ns as (
    select oid, nspname from pg_namespace
    where nspname not in ('pg_catalog', 'information_schema') and nspname not like 'pg_toast%'
  )
  select md5(string_agg(item, E'\n' order by item)) as shape from (
    select format('ns %s %s', nspname, pg_get_userbyid(n.nspowner)) as item
      from pg_namespace n where oid in (select oid from user_ns)
    union all select format('rel %s %s', c.oid::regclass, c.relkind)
      from pg_class c where c.relnamespace in (select oid from user_ns)
    union all select format('col %s.%s %s %s %s %s', a.attrelid::regclass, a.attname,
        format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity,
        pg_get_expr(d.adbin, d.adrelid))
      from pg_attribute a join pg_class c on c.oid = a.attrelid
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where c.relnamespace in (select oid from user_ns) and a.attnum > 0 and not a.attisdropped
    union all select format('con %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
      from pg_constraint where connamespace in (select oid from user_ns)
    union all select format('idx %s', pg_get_indexdef(indexrelid)) from pg_index
      where indrelid in (select oid from pg_class where relnamespace in (select oid from user_ns))
    union all select format('trg %s', pg_get_triggerdef(oid)) from pg_trigger where not tgisinternal
    union all select format('fn %s %s', p.oid::regprocedure, md5(p.prosrc))
      from pg_proc p where pronamespace in (select oid from user_ns)
    union all select format('type %s', t.oid::regtype) from pg_type t
      where typnamespace in (select oid from user_ns)
    union all select format('enum %s %s', enumtypid::regtype, enumlabel) from pg_enum
    union all select format('ext %s %s', extname, extversion) from pg_extension
    union all select format('role %s %s', rolname, rolsuper) from pg_roles
    union all select format('dbset %s', setconfig) from pg_db_role_setting
    union all select format('set %s %s', name, setting) from pg_settings where source = 'session'
    union all select format('prep %s', name) from pg_prepared_statements
    union all select format('cur %s', name) from pg_cursors
    union all select format('listen %s', c) from pg_listening_channels() c
  ) items`;

/** The statement that empties every table but the migrations' record, and restarts sequences. */
const EMPTY_TABLES = `
  select 'truncate table ' || string_agg(format('%I.%I', schemaname, tablename), ', ')
    || ' restart identity cascade' as sql
  from pg_tables where schemaname not in ('pg_catalog', 'information_schema', 'drizzle')`;

/** This process's in-memory databases in the template's state, waiting for the next `open()`. */
const idle: PGlite[] = [];
/** At most this many are kept (a test that opens two databases at once reuses both). */
const MAX_IDLE = 2;
let templateShape: string | undefined;
let emptyTables: string | undefined;
// A PGlite left open keeps its process alive (its timers): the kept ones close with the file.
after(async () => {
  for (const client of idle.splice(0)) await client.close();
});

async function shapeOf(client: PGlite): Promise<string> {
  return (await client.query<{ shape: string }>(SHAPE)).rows[0]!.shape;
}

/**
 * Put `client` back in the template's state after a test: pg-boss's schema (the template has
 * none) dropped, advisory locks released, every table emptied. True only when what is left
 * has the template's shape; a database a test changed otherwise (a trigger, a session setting,
 * a temporary table, a LISTEN) is closed instead of kept.
 */
async function resetToTemplate(client: PGlite): Promise<boolean> {
  try {
    await client.exec('drop schema if exists pgboss cascade; select pg_advisory_unlock_all()');
    if ((await shapeOf(client)) !== templateShape) return false;
    await client.exec(emptyTables!);
    return true;
  } catch {
    return false;
  }
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
    if (idle.length < MAX_IDLE && (await resetToTemplate(client))) idle.push(client);
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
    if (!reused) {
      templateShape ??= await shapeOf(client);
      emptyTables ??= (await client.query<{ sql: string }>(EMPTY_TABLES)).rows[0]!.sql;
    }
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
    const name = `portico_template_${hash.digest('hex').slice(0, 16)}`;
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

const postgres: Backend = {
  name: 'postgres',
  async open() {
    const { url, drop } = await createPostgresDatabase(await migratedPostgresTemplate());
    const storage = await openStorage({ kind: 'postgres', url, poolSize: 5 });
    await storage.migrate();
    const close = storage.close.bind(storage);
    return Object.assign(storage, {
      close: async () => {
        await close();
        await drop();
      },
    });
  },
};

/** The backends every storage-dependent test runs on. */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? [pglite, postgres] : [pglite];
}
