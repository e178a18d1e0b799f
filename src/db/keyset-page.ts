/**
 * Keyset pagination over `(created_at, id)`, newest first: the one page query of every list of
 * the API (tickets, contacts, messages, credit transactions, drafts). A page is stable while rows
 * are added: new rows sort before the first page, so later pages neither repeat nor skip. Times
 * have millisecond precision in these tables, so the position a cursor carries compares exactly.
 *
 * @see https://www.postgresql.org/docs/current/functions-comparisons.html#ROW-WISE-COMPARISON
 */
import { and, desc, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/** A position in the newest-first order: the last item of the previous page. */
export interface PagePosition {
  createdAt: Date;
  id: string;
}

/** The two columns of the order (a table with `createdAt` and `id` columns will do). */
export interface KeysetColumns {
  createdAt: AnyPgColumn;
  id: AnyPgColumn;
}

/** Up to `limit` rows and whether more follow. */
export interface KeysetPage<Row> {
  rows: Row[];
  hasMore: boolean;
}

/**
 * The WHERE (the conditions plus the keyset bound after `after`) and the newest-first ORDER BY
 * of a page: what `readKeysetPage` runs, also for a caller that must show the statement
 * (the contacts bench's EXPLAIN).
 */
export function keysetClauses(
  columns: KeysetColumns,
  conditions: readonly SQL[],
  after: PagePosition | undefined,
): { where: SQL | undefined; orderBy: SQL[] } {
  const where = after
    ? [
        ...conditions,
        sql`(${columns.createdAt}, ${columns.id}) < (${after.createdAt.toISOString()}::timestamptz, ${after.id})`,
      ]
    : conditions;
  return { where: and(...where), orderBy: [desc(columns.createdAt), desc(columns.id)] };
}

/**
 * One page: `read` runs the select with the conditions (plus the keyset bound after
 * `options.after`), the newest-first order and `limit + 1` rows, the extra row telling
 * `hasMore`.
 *
 * @param conditions the list's filters; each must include the portal (tenant isolation).
 * @param options.limit rows wanted (the route bounds it, 1–100).
 */
export async function readKeysetPage<Row>(
  columns: KeysetColumns,
  conditions: readonly SQL[],
  options: { limit: number; after?: PagePosition | undefined },
  read: (where: SQL | undefined, orderBy: SQL[], limit: number) => Promise<Row[]>,
): Promise<KeysetPage<Row>> {
  const { where, orderBy } = keysetClauses(columns, conditions, options.after);
  const rows = await read(where, orderBy, options.limit + 1);
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}
