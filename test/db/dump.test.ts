/**
 * The embedded database's dump loads into an empty database and gives back the same rows and
 * the same migrations: into a fresh PGlite always, and into a real PostgreSQL when
 * TEST_DATABASE_URL is set (the move docs/how-to/move-to-postgresql.md describes).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { openStorage } from '../../src/db/client.ts';
import { dumpDatabase } from '../../src/db/dump.ts';
import { createPostgresDatabase, pgliteTemplate } from '../helpers/storage.ts';

const ROWS = `select
  (select json_agg(p order by p.id) from (select id, portal_code, name from public.portals) p) as portals,
  (select count(*)::int from drizzle.__drizzle_migrations) as migrations`;

test('a dump of the embedded database loads into an empty database with the same rows', async (t) => {
  const source = await openStorage({ kind: 'pglite-memory', template: pgliteTemplate() });
  t.after(() => source.close());
  await source.migrate();
  // A name with quotes, a newline and non-ASCII text: what the INSERTs must carry as written.
  await source.pglite!.exec(
    `insert into portals (portal_code, name) values ('4242', 'Acme ''Ltd''\nZoë'), ('77', 'B')`,
  );
  const before = (await source.pglite!.query(ROWS)).rows[0];

  const script = await dumpDatabase(source.pglite!);
  assert.doesNotMatch(script, /COPY .* FROM stdin/, 'plain INSERTs, loadable by any client');
  assert.doesNotMatch(script, /transaction_timeout/, 'no setting an older server refuses');

  const target = await PGlite.create();
  t.after(() => target.close());
  await target.exec(script);
  assert.deepEqual((await target.query(ROWS)).rows[0], before);

  if (process.env.TEST_DATABASE_URL) {
    const database = await createPostgresDatabase();
    t.after(() => database.drop());
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(script);
      assert.deepEqual((await client.query(ROWS)).rows[0], before);
    } finally {
      await client.end();
    }
    // Portico opens it as its own: nothing left to migrate, the rows are there.
    const moved = await openStorage({ kind: 'postgres', url: database.url, poolSize: 2 });
    try {
      await moved.migrate();
      const { rows } = await moved.pool!.query(ROWS);
      assert.deepEqual(rows[0], before);
    } finally {
      await moved.close();
    }
  }
});
