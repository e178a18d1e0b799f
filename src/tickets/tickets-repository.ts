/**
 * Queries over `support_tickets`. Invariant (docs/security.md, tenant isolation): every
 * statement filters by portal id in the statement itself.
 */
import { and, eq, getTableColumns, inArray, type SQL } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../db/keyset-page.ts';
import { agents, apiTokens, supportTickets } from '../db/schema/index.ts';

/** Drizzle's transaction handle (same query API as the database). */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Db = Database | Tx;

/** A stored ticket and the display name of its assignee (null while unassigned). */
export type TicketRow = typeof supportTickets.$inferSelect & { assigneeName: string | null };
export type NewTicketRow = typeof supportTickets.$inferInsert;

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
): Promise<KeysetPage<TicketRow>> {
  const conditions: SQL[] = [eq(supportTickets.portalId, portalId)];
  if (options.status) conditions.push(eq(supportTickets.status, options.status));
  return readKeysetPage(supportTickets, conditions, options, (where, orderBy, limit) =>
    db
      .select(ticketColumns)
      .from(supportTickets)
      .leftJoin(agents, eq(agents.id, supportTickets.assigneeAgentId))
      .where(where)
      .orderBy(...orderBy)
      .limit(limit),
  );
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
