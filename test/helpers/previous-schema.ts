/**
 * Databases at an earlier schema, for the tests that migrate populated rows: the migrations
 * folder cut after one migration, applied with drizzle's migrator, on PGlite and (with
 * TEST_DATABASE_URL) on a fresh PostgreSQL database.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_FOLDER, openStorage, type Storage } from '../../src/db/client.ts';
import { createPostgresDatabase } from './storage.ts';

/** A copy of the migrations folder up to the migration tagged `last`, removed in `t.after`. */
export function previousMigrations(t: { after: (fn: () => void) => void }, last: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'portico-previous-migrations-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(MIGRATIONS_FOLDER, dir, { recursive: true });
  const journalFile = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as {
    entries: { idx: number; tag: string }[];
  };
  const end = journal.entries.findIndex((e) => e.tag === last);
  assert.ok(end >= 0, `${last} is a migration`);
  journal.entries = journal.entries.slice(0, end + 1);
  writeFileSync(journalFile, JSON.stringify(journal));
  return dir;
}

/** Apply the migrations of `folder` (drizzle's migrator of the storage's backend). */
export async function migrateTo(storage: Storage, folder: string): Promise<void> {
  if (storage.kind === 'pglite') {
    const { migrate } = await import('drizzle-orm/pglite/migrator');
    await migrate(storage.db as never, { migrationsFolder: folder });
  } else {
    const { migrate } = await import('drizzle-orm/node-postgres/migrator');
    await migrate(storage.db as never, { migrationsFolder: folder });
  }
}

/** The backends a migration test runs on: empty storages, nothing migrated yet. */
export const migrationTargets = [
  { name: 'pglite', open: async () => openStorage({ kind: 'pglite-memory' }) },
  ...(process.env.TEST_DATABASE_URL
    ? [
        {
          name: 'postgres',
          open: async (t: { after: (fn: () => Promise<void>) => void }) => {
            const db = await createPostgresDatabase();
            t.after(db.drop);
            return openStorage({ kind: 'postgres', url: db.url, poolSize: 2 });
          },
        },
      ]
    : []),
];
