/**
 * Queries over `support_tickets` and `idempotency_keys`. Invariant (docs/security.md,
 * tenant isolation): every statement filters by portal id in the statement itself.
 */
import { and, desc, eq, getTableColumns, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { agents, apiTokens, idempotencyKeys, supportTickets } from '../db/schema/index.ts';

/** Drizzle's transaction handle (same query API as the database). */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Db = Database | Tx;

/** A stored ticket and the display name of its assignee (null while unassigned). */
export type TicketRow = typeof supportTickets.$inferSelect & { assigneeName: string | null };
export type NewTicketRow = typeof supportTickets.$inferInsert;
export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

import type { PagePosition } from '../external-api/keyset-cursor.ts';

export type { PagePosition };

/** How long a key keeps its first response, in hours. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

/** The columns of a ticket as the API and the pages show it: the row and its assignee's name. */
export const ticketColumns = {
  ...getTableColumns(supportTickets),
  assigneeName: agents.displayName,
};

export async function insertTicket(db: Db, row: NewTicketRow): Promise<TicketRow> {
  const [inserted] = await db.insert(supportTickets).values(row).returning();
  return { ...inserted!, assigneeName: null };
}

export async function findTicket(db: Db, portalId: number, id: string): Promise<TicketRow | null> {
  const [row] = await db
    .select(ticketColumns)
    .from(supportTickets)
    .leftJoin(agents, eq(agents.id, supportTickets.assigneeAgentId))
    .where(and(eq(supportTickets.portalId, portalId), eq(supportTickets.id, id)));
  return row ?? null;
}

/**
 * One page, newest first, by keyset on `(created_at, id)`: stable while tickets are added
 * (new tickets sort before the first page, so later pages neither repeat nor skip).
 *
 * @param limit rows wanted; one more is read to know whether a next page exists.
 */
export async function listTicketPage(
  db: Db,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; status?: TicketRow['status'] },
): Promise<{ rows: TicketRow[]; hasMore: boolean }> {
  const conditions: SQL[] = [eq(supportTickets.portalId, portalId)];
  if (options.status) conditions.push(eq(supportTickets.status, options.status));
  if (options.after) {
    conditions.push(
      sql`(${supportTickets.createdAt}, ${supportTickets.id}) < (${options.after.createdAt.toISOString()}::timestamptz, ${options.after.id})`,
    );
  }
  const rows = await db
    .select(ticketColumns)
    .from(supportTickets)
    .leftJoin(agents, eq(agents.id, supportTickets.assigneeAgentId))
    .where(and(...conditions))
    .orderBy(desc(supportTickets.createdAt), desc(supportTickets.id))
    .limit(options.limit + 1);
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}

/**
 * Claim `(portalId, key)` for a new request, in the caller's transaction. A live row held by
 * another transaction makes this statement wait until that transaction ends; an expired row
 * is taken over.
 *
 * @returns true when this transaction now owns the key; false when a live row exists.
 */
export async function claimIdempotencyKey(
  tx: Tx,
  portalId: number,
  key: string,
  requestHash: string,
): Promise<boolean> {
  const expiresAt = sql`now() + make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`;
  const claimed = await tx
    .insert(idempotencyKeys)
    .values({ portalId, key, requestHash, expiresAt })
    .onConflictDoUpdate({
      target: [idempotencyKeys.portalId, idempotencyKeys.key],
      set: {
        requestHash,
        responseStatus: null,
        responseBody: null,
        createdAt: sql`now()`,
        expiresAt,
      },
      setWhere: sql`${idempotencyKeys.expiresAt} <= now()`,
    })
    .returning({ key: idempotencyKeys.key });
  return claimed.length === 1;
}

export async function findIdempotencyKey(
  db: Db,
  portalId: number,
  key: string,
): Promise<IdempotencyRow | null> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.portalId, portalId), eq(idempotencyKeys.key, key)));
  return row ?? null;
}

export async function saveIdempotentResponse(
  tx: Tx,
  portalId: number,
  key: string,
  response: { status: number; body: unknown },
): Promise<void> {
  await tx
    .update(idempotencyKeys)
    .set({ responseStatus: response.status, responseBody: response.body })
    .where(and(eq(idempotencyKeys.portalId, portalId), eq(idempotencyKeys.key, key)));
}

/**
 * Delete the portal's expired keys. One statement outside any ticket transaction: it only waits
 * on rows being claimed, and a claim never waits on two rows, so the two cannot deadlock.
 *
 * @returns how many rows were deleted.
 */
export async function purgeExpiredIdempotencyKeys(db: Database, portalId: number): Promise<number> {
  const deleted = await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.portalId, portalId), lt(idempotencyKeys.expiresAt, sql`now()`)))
    .returning({ key: idempotencyKeys.key });
  return deleted.length;
}

/** Portal ids owning live API tokens with these hashes (to tell each to regenerate). */
export async function portalsOwningTokens(
  db: Db,
  tokenHashes: readonly string[],
): Promise<Map<string, number>> {
  if (tokenHashes.length === 0) return new Map();
  const rows = await db
    .select({ tokenHash: apiTokens.tokenHash, portalId: apiTokens.portalId })
    .from(apiTokens)
    .where(inArray(apiTokens.tokenHash, [...tokenHashes]));
  return new Map(rows.map((r) => [r.tokenHash, r.portalId]));
}
