/**
 * The tests' in-memory PGlite is reused after a test (test/helpers/storage.ts): the next test
 * must find the template's state, never the last test's rows, schemas, LISTENs or changes, and
 * the last test's handle must be dead.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Storage } from '../../src/db/client.ts';
import { backends } from './storage.ts';

const [pglite] = backends();

/** Rows in every table but the migrations' record. */
async function rowsEverywhere(storage: Storage): Promise<number> {
  const tables = await storage.pglite!.query<{ name: string }>(
    `select format('%I.%I', schemaname, tablename) as name from pg_tables
     where schemaname not in ('pg_catalog', 'information_schema', 'drizzle')`,
  );
  assert.ok(tables.rows.length > 10, 'the migrated tables are there');
  let rows = 0;
  for (const { name } of tables.rows)
    rows += (await storage.pglite!.query<{ n: number }>(`select count(*)::int as n from ${name}`))
      .rows[0]!.n;
  return rows;
}

test('a closed database comes back empty, with no trace of the last test', async () => {
  const first = await pglite!.open();
  await first.pglite!.exec(`
    insert into portals (portal_code, name) values ('1111', 'One'), ('2222', 'Two');
    create schema pgboss; create table pgboss.job (id int);
    select pg_advisory_lock(42);`);
  let notified = 0;
  await first.pglite!.listen('portico_test', () => notified++);
  await first.close();
  await assert.rejects(first.pglite!.query('select 1'), /closed/);
  assert.equal(first.pglite!.closed, true);

  const second = await pglite!.open();
  assert.equal(await rowsEverywhere(second), 0);
  const pgboss = await second.pglite!.query(`select 1 from pg_namespace where nspname = 'pgboss'`);
  assert.equal(pgboss.rows.length, 0, "pg-boss's schema is gone");
  const inserted = await second.pglite!.query<{ id: number }>(
    `insert into portals (portal_code, name) values ('3333', 'Three') returning id`,
  );
  assert.equal(inserted.rows[0]!.id, 1, 'identities restart');
  await second.pglite!.exec(`notify portico_test`);
  assert.equal(notified, 0, "the last test's listener is gone");
  const locks = await second.pglite!.query(`select 1 from pg_locks where locktype = 'advisory'`);
  assert.equal(locks.rows.length, 0, 'advisory locks are released');
  await second.close();
});

test('a database whose shape a test changed is not reused', async () => {
  const first = await pglite!.open();
  await first.pglite!.exec(`
    create function portico_refuse() returns trigger language plpgsql as
      $$ begin raise exception 'refused'; end $$;
    create trigger refuse before insert on portals
      for each row execute function portico_refuse();
    set statement_timeout = '1s';`);
  await first.close();

  const second = await pglite!.open();
  await second.pglite!.exec(`insert into portals (portal_code, name) values ('4444', 'Four')`);
  const timeout = await second.pglite!.query<{ statement_timeout: string }>(
    'show statement_timeout',
  );
  assert.equal(timeout.rows[0]!.statement_timeout, '0');
  await second.close();
});
