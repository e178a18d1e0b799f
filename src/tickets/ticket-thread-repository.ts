/**
 * Queries over a ticket's thread (`ticket_comments`), the agents' notes (`ticket_notes`) and the
 * lifecycle columns of `support_tickets`. Invariant (docs/security.md, tenant isolation): every
 * customer-side statement filters by portal id in the statement itself; only the agent side
 * (`portalId` null) reads across portals, and only `ticket_notes` queries read notes.
 */
import { and, asc, desc, eq, isNull, lte, sql, type SQL } from 'drizzle-orm';
import {
  agents,
  portals,
  supportTickets,
  ticketComments,
  ticketNotes,
} from '../db/schema/index.ts';
import type { TicketStatus } from './ticket-lifecycle.ts';
import type { PagePosition } from '../db/keyset-page.ts';
import { ticketColumns, type TicketRow, type Tx } from './tickets-repository.ts';

type Db = Pick<Tx, 'select' | 'insert' | 'update' | 'execute'>;

export type CommentRow = typeof ticketComments.$inferSelect & { agentName: string | null };
export type NoteRow = typeof ticketNotes.$inferSelect & { agentName: string };

/** A ticket on the agents' side: the row, its portal's name and code. */
export type QueueRow = TicketRow & { portalName: string; portalCode: string };

const queueColumns = { ...ticketColumns, portalName: portals.name, portalCode: portals.portalCode };

/**
 * The ticket, locked for the rest of the transaction (`FOR UPDATE` of the ticket row only).
 *
 * @param portalId the customer's portal; null on the agents' side (any portal).
 */
export async function lockTicket(
  tx: Db,
  portalId: number | null,
  id: string,
): Promise<QueueRow | null> {
  const where = [eq(supportTickets.id, id)];
  if (portalId !== null) where.push(eq(supportTickets.portalId, portalId));
  const [row] = await tx
    .select(queueColumns)
    .from(supportTickets)
    .innerJoin(portals, eq(portals.id, supportTickets.portalId))
    .leftJoin(agents, eq(agents.id, supportTickets.assigneeAgentId))
    .where(and(...where))
    .for('update', { of: supportTickets });
  return row ?? null;
}

/** The lifecycle columns a change may set. */
export interface TicketChange {
  status?: TicketStatus;
  priority?: TicketRow['priority'];
  assigneeAgentId?: number | null;
  firstResponseAt?: Date;
  solvedAt?: Date | null;
  closedAt?: Date;
  /** A public comment was added at this time (bumps the count). */
  commentAt?: Date;
}

/** Apply a change to a ticket (already locked by the caller) and bump `updated_at`. */
export async function updateTicket(
  tx: Db,
  id: string,
  change: TicketChange,
  now: Date,
): Promise<void> {
  const { commentAt, ...columns } = change;
  await tx
    .update(supportTickets)
    .set({
      ...columns,
      ...(commentAt && {
        commentCount: sql`${supportTickets.commentCount} + 1`,
        lastCommentAt: commentAt,
      }),
      updatedAt: now,
    })
    .where(eq(supportTickets.id, id));
}

export async function insertComment(
  tx: Db,
  row: typeof ticketComments.$inferInsert,
): Promise<typeof ticketComments.$inferSelect> {
  const [inserted] = await tx.insert(ticketComments).values(row).returning();
  return inserted!;
}

/**
 * One page of a ticket's public comments, oldest first, by keyset on `(created_at, id)`.
 *
 * @param portalId the customer's portal; null on the agents' side.
 */
export async function listCommentPage(
  db: Db,
  portalId: number | null,
  ticketId: string,
  options: { limit: number; after?: PagePosition | undefined },
): Promise<{ rows: CommentRow[]; hasMore: boolean }> {
  const conditions: SQL[] = [eq(ticketComments.ticketId, ticketId)];
  if (portalId !== null) conditions.push(eq(ticketComments.portalId, portalId));
  if (options.after) {
    conditions.push(
      sql`(${ticketComments.createdAt}, ${ticketComments.id}) > (${options.after.createdAt.toISOString()}::timestamptz, ${options.after.id})`,
    );
  }
  const rows = await db
    .select({ ...ticketCommentColumns, agentName: agents.displayName })
    .from(ticketComments)
    .leftJoin(agents, eq(agents.id, ticketComments.authorAgentId))
    .where(and(...conditions))
    .orderBy(asc(ticketComments.createdAt), asc(ticketComments.id))
    .limit(options.limit + 1);
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}

const ticketCommentColumns = {
  id: ticketComments.id,
  ticketId: ticketComments.ticketId,
  portalId: ticketComments.portalId,
  authorType: ticketComments.authorType,
  authorUserId: ticketComments.authorUserId,
  authorAgentId: ticketComments.authorAgentId,
  body: ticketComments.body,
  secretRedacted: ticketComments.secretRedacted,
  createdAt: ticketComments.createdAt,
};

export async function insertNote(
  tx: Db,
  row: typeof ticketNotes.$inferInsert,
): Promise<typeof ticketNotes.$inferSelect> {
  const [inserted] = await tx.insert(ticketNotes).values(row).returning();
  return inserted!;
}

/** Every internal note of a ticket, oldest first (agents' side only). */
export async function listNotes(db: Db, ticketId: string): Promise<NoteRow[]> {
  return db
    .select({
      id: ticketNotes.id,
      ticketId: ticketNotes.ticketId,
      agentId: ticketNotes.agentId,
      body: ticketNotes.body,
      createdAt: ticketNotes.createdAt,
      agentName: agents.displayName,
    })
    .from(ticketNotes)
    .innerJoin(agents, eq(agents.id, ticketNotes.agentId))
    .where(eq(ticketNotes.ticketId, ticketId))
    .orderBy(asc(ticketNotes.createdAt), asc(ticketNotes.id));
}

/**
 * Close the solved tickets whose `solved_at` is at or before `dueBefore`, setting `closed_at`
 * to the moment they became due. Locks the rows it changes.
 *
 * @param portalId one portal, or null for every portal.
 * @returns the tickets closed (id, portal, when).
 */
export async function closeDueSolved(
  tx: Db,
  portalId: number | null,
  dueBefore: Date,
  autoCloseMs: number,
): Promise<{ id: string; portalId: number; closedAt: Date }[]> {
  const where = [eq(supportTickets.status, 'solved'), lte(supportTickets.solvedAt, dueBefore)];
  if (portalId !== null) where.push(eq(supportTickets.portalId, portalId));
  return tx
    .update(supportTickets)
    .set({
      status: 'closed',
      closedAt: sql`${supportTickets.solvedAt} + make_interval(secs => ${autoCloseMs / 1000})`,
      updatedAt: sql`now()`,
    })
    .where(and(...where))
    .returning({
      id: supportTickets.id,
      portalId: supportTickets.portalId,
      closedAt: supportTickets.closedAt,
    }) as Promise<{ id: string; portalId: number; closedAt: Date }[]>;
}

/** The filters of the agents' queue. */
export interface QueueFilter {
  status?: TicketStatus | undefined;
  priority?: TicketRow['priority'] | undefined;
  /** A portal code. */
  portalCode?: string | undefined;
  /** Only tickets assigned to this agent. */
  assigneeAgentId?: number | undefined;
  unassigned?: boolean | undefined;
}

/** One page of every portal's tickets, newest first, by keyset on `(created_at, id)`. */
export async function listQueuePage(
  db: Db,
  filter: QueueFilter,
  options: { limit: number; after?: PagePosition | undefined },
): Promise<{ rows: QueueRow[]; hasMore: boolean }> {
  const conditions: SQL[] = [];
  if (filter.status) conditions.push(eq(supportTickets.status, filter.status));
  if (filter.priority) conditions.push(eq(supportTickets.priority, filter.priority));
  if (filter.portalCode) conditions.push(eq(portals.portalCode, filter.portalCode));
  if (filter.assigneeAgentId !== undefined) {
    conditions.push(eq(supportTickets.assigneeAgentId, filter.assigneeAgentId));
  }
  if (filter.unassigned) conditions.push(isNull(supportTickets.assigneeAgentId));
  if (options.after) {
    conditions.push(
      sql`(${supportTickets.createdAt}, ${supportTickets.id}) < (${options.after.createdAt.toISOString()}::timestamptz, ${options.after.id})`,
    );
  }
  const rows = await db
    .select(queueColumns)
    .from(supportTickets)
    .innerJoin(portals, eq(portals.id, supportTickets.portalId))
    .leftJoin(agents, eq(agents.id, supportTickets.assigneeAgentId))
    .where(and(...conditions))
    .orderBy(desc(supportTickets.createdAt), desc(supportTickets.id))
    .limit(options.limit + 1);
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}
