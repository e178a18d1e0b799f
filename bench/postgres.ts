/**
 * A throwaway PostgreSQL database for a benchmark run: created on the server of
 * BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) and dropped after.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const BENCH_DATABASE_URL =
  process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ThrowawayDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Create the database, or return null (with the reason) when the server does not answer. */
export async function createThrowawayDatabase(): Promise<ThrowawayDatabase | { error: string }> {
  const name = `portico_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({
    connectionString: BENCH_DATABASE_URL,
    connectionTimeoutMillis: 3000,
  });
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(BENCH_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: BENCH_DATABASE_URL });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
