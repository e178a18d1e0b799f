/** Raw SQL reads for tests that inspect what the database actually holds. */
import type { SQL } from 'drizzle-orm';
import type { Storage } from '../../src/db/client.ts';

/** Rows of `query` (the same shape on PGlite and node-postgres). */
export async function queryRows<T = Record<string, unknown>>(
  storage: Storage,
  query: SQL,
): Promise<T[]> {
  const result: unknown = await storage.db.execute(query);
  return (result as { rows: T[] }).rows;
}
