/**
 * A new embedded data directory starts from the build's PGlite template unpacked on disk
 * (src/db/client.ts `unpackPgliteTemplate`), not through PGlite's WebAssembly file system: the
 * directory opens as a database in use, migrated, and serves reads and writes; a directory a
 * cut-off start left behind is replaced, never taken for a database.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'drizzle-orm';
import { openStorage, unpackPgliteTemplate } from '../../src/db/client.ts';
import { queryRows } from '../helpers/sql.ts';
import { freshBuild, tempDataDir } from '../helpers/spawn.ts';

test('the template unpacked on disk opens migrated and serves; leftovers are replaced', async () => {
  const template = join(freshBuild(), 'pglite-template.tar');
  const dataDir = tempDataDir();
  const dir = join(dataDir, 'pglite');
  // What a start cut off earlier may leave: a half-written staging folder and a directory
  // without PG_VERSION.
  mkdirSync(`${dir}.unpacking/base`, { recursive: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'stray'), 'x');
  unpackPgliteTemplate(template, dir);
  assert.ok(existsSync(join(dir, 'PG_VERSION')));
  assert.ok(!existsSync(join(dir, 'stray')));
  assert.ok(!existsSync(`${dir}.unpacking`));
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.deepEqual(
    readdirSync(dir).filter((f) => statSync(join(dir, f)).mode & 0o077),
    [],
    'nothing readable by group or others',
  );

  const storage = await openStorage({ kind: 'pglite', dataDir });
  try {
    const journal = (await import('../../src/db/migrations/meta/_journal.json', {
      with: { type: 'json' },
    })) as { default: { entries: unknown[] } };
    const [applied] = await queryRows<{ n: number }>(
      storage,
      sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
    );
    assert.equal(applied!.n, journal.default.entries.length, 'every migration already applied');
    await storage.migrate();
    const [portal] = await queryRows<{ id: number }>(
      storage,
      sql`insert into portals (portal_code, name) values ('tpl-test', 'Template test') returning id`,
    );
    assert.ok(portal!.id > 0);
  } finally {
    await storage.close();
  }
});
