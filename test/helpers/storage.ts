/**
 * Real storage for tests: an in-memory PGlite always, and a real PostgreSQL as well when
 * TEST_DATABASE_URL is set. Each `open()` gives an isolated database (a fresh PGlite loaded from
 * the migrated template, or a new PostgreSQL database that is dropped again on close),
 * migrated.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { openStorage, readPgliteTemplate, type Storage } from '../../src/db/client.ts';

const ROOT = join(import.meta.dirname, '..', '..');
let template: Blob | undefined;

/**
 * The PGlite template of the current migrations (scripts/pglite-template.mjs, as the build
 * makes it: initdb and migrations run once, then cached in .cache/pglite/), read once per test
 * process. Every in-memory database loads it instead of running initdb (about 4 s of CPU
 * each), then migrates as before (nothing left to apply, unless the template were stale).
 */
export function pgliteTemplate(): Blob {
  if (!template) {
    const file = join(ROOT, 'test-output', `pglite-template-${process.pid}.tar`);
    execFileSync(process.execPath, [
      join(ROOT, 'scripts', 'pglite-template.mjs'),
      join(ROOT, 'src', 'db', 'migrations'),
      file,
    ]);
    template = readPgliteTemplate(file)!;
    rmSync(file, { force: true });
  }
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

/** Create an empty PostgreSQL database; returns its URL and a function that drops it. */
export async function createPostgresDatabase(): Promise<{
  url: string;
  drop: () => Promise<void>;
}> {
  const name = `portico_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
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

const pglite: Backend = {
  name: 'pglite',
  async open() {
    const storage = await openStorage({ kind: 'pglite-memory', template: pgliteTemplate() });
    await storage.migrate();
    return storage;
  },
};

const postgres: Backend = {
  name: 'postgres',
  async open() {
    const { url, drop } = await createPostgresDatabase();
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
