/**
 * The tests' databases are reused after a test (test/helpers/storage.ts), on PGlite and on
 * PostgreSQL: the next test must find the template's state, never the last test's rows,
 * schemas, locks, LISTENs or changes, and the last test's handle must be dead.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Storage } from '../../src/db/client.ts';
import pg from 'pg';
import { backends, createPostgresDatabase, testDatabaseName } from './storage.ts';

/** The rows of `statement` (node-postgres and PGlite both answer `{ rows }`). */
async function rowsOf<T>(storage: Storage, statement: string): Promise<T[]> {
  const result: unknown = await storage.db.execute(sql.raw(statement));
  return (result as { rows: T[] }).rows;
}

/** Rows in every table but the migrations' record. */
async function rowsEverywhere(storage: Storage): Promise<number> {
  const tables = await rowsOf<{ name: string }>(
    storage,
    `select format('%I.%I', schemaname, tablename) as name from pg_tables
     where schemaname not in ('pg_catalog', 'information_schema', 'drizzle')`,
  );
  assert.ok(tables.length > 10, 'the migrated tables are there');
  let rows = 0;
  for (const { name } of tables)
    rows += (await rowsOf<{ n: number }>(storage, `select count(*)::int as n from ${name}`))[0]!.n;
  return rows;
}

for (const backend of backends()) {
  /** A database of `backend`, closed in `t.after` too: an open PGlite keeps the file's process alive. */
  const open = async (t: TestContext): Promise<Storage> => {
    const storage = await backend.open();
    t.after(() => storage.close());
    return storage;
  };

  describe(`reused test databases (${backend.name})`, () => {
    test('a closed database comes back empty, with no trace of the last test', async (t) => {
      const first = await open(t);
      const [portal] = await rowsOf<{ id: number }>(
        first,
        `insert into portals (portal_code, name) values ('1111', 'One'), ('2222', 'Two')
         returning id`,
      );
      await rowsOf(
        first,
        `insert into users (portal_id, email) values (${portal!.id}, 'a@x.test')`,
      );
      await rowsOf(first, 'create schema pgboss');
      await rowsOf(first, 'create table pgboss.job (id int)');
      await rowsOf(first, 'select pg_advisory_lock(42)');
      let notified = 0;
      await first.pglite?.listen('portico_test', () => notified++);
      await first.close();
      await assert.rejects(rowsOf(first, 'select 1'));
      if (first.pglite) assert.equal(first.pglite.closed, true);

      const second = await open(t);
      assert.equal(await rowsEverywhere(second), 0);
      const pgboss = await rowsOf(second, `select 1 from pg_namespace where nspname = 'pgboss'`);
      assert.equal(pgboss.length, 0, "pg-boss's schema is gone");
      const [inserted] = await rowsOf<{ id: number }>(
        second,
        `insert into portals (portal_code, name) values ('3333', 'Three') returning id`,
      );
      assert.equal(inserted!.id, 1, 'identities restart');
      await rowsOf(second, 'notify portico_test');
      assert.equal(notified, 0, "the last test's listener is gone");
      const locks = await rowsOf(
        second,
        `select 1 from pg_locks where locktype = 'advisory'
           and database = (select oid from pg_database where datname = current_database())`,
      );
      assert.equal(locks.length, 0, 'advisory locks are released');
      await second.close();
    });

    test('a database whose shape a test changed is not reused', async (t) => {
      const first = await open(t);
      await rowsOf(
        first,
        `create function portico_refuse() returns trigger language plpgsql as
           $$ begin raise exception 'refused'; end $$`,
      );
      await rowsOf(
        first,
        `create trigger refuse before insert on portals
           for each row execute function portico_refuse()`,
      );
      await first.close();

      const second = await open(t);
      await rowsOf(second, `insert into portals (portal_code, name) values ('4444', 'Four')`);
      await second.close();
    });

    test('a session setting does not outlive its test', async (t) => {
      const timeout = async (storage: Storage) =>
        (await rowsOf<{ statement_timeout: string }>(storage, 'show statement_timeout'))[0]!
          .statement_timeout;
      const first = await open(t);
      const usual = await timeout(first);
      // On PGlite the session is the database's one connection; on PostgreSQL a pooled one.
      await rowsOf(first, `set statement_timeout = '1ms'`);
      await first.close();

      const second = await open(t);
      assert.equal(await timeout(second), usual);
      await second.close();
    });
  });
}

describe('TEST_DATABASE_PREFIX', () => {
  const withPrefix = async <T>(prefix: string | undefined, run: () => Promise<T>): Promise<T> => {
    const before = process.env.TEST_DATABASE_PREFIX;
    if (prefix === undefined) delete process.env.TEST_DATABASE_PREFIX;
    else process.env.TEST_DATABASE_PREFIX = prefix;
    try {
      return await run();
    } finally {
      if (before === undefined) delete process.env.TEST_DATABASE_PREFIX;
      else process.env.TEST_DATABASE_PREFIX = before;
    }
  };

  test('names every test database; a prefix that is no identifier is refused', async () => {
    assert.equal(
      await withPrefix('x_', async () => testDatabaseName('portico_test_1')),
      'x_portico_test_1',
    );
    assert.equal(await withPrefix(undefined, async () => testDatabaseName('a')), 'a');
    for (const bad of ['X_', '1x', 'x-y', 'x;drop', 'x y'])
      await assert.rejects(
        withPrefix(bad, async () => testDatabaseName('a')),
        /TEST_DATABASE_PREFIX must be/,
        bad,
      );
  });

  test(
    'a PostgreSQL test database is created under the prefix',
    { skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set' },
    async (t) => {
      const created = await withPrefix('x_', () => createPostgresDatabase());
      t.after(() => created.drop());
      assert.match(new URL(created.url).pathname, /^\/x_portico_test_[0-9a-f]{12}$/);
      const client = new pg.Client({ connectionString: created.url });
      await client.connect();
      const { rows } = await client
        .query<{ name: string }>('select current_database() as name')
        .finally(() => client.end());
      assert.match(rows[0]!.name, /^x_portico_test_/);
    },
  );
});
