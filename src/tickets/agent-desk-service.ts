/**
 * The support team's side of tickets, across every portal: the queue, a ticket with its thread
 * and internal notes, replies, notes, assignment and status changes. Used by the agent console
 * and the CLI; never by the external API or a portal page.
 *
 * Agents' status changes and assignments are audited (actor `agent`) and announced to the
 * portal (`ticket.updated`); replies are announced (`ticket.comment_added`); notes never leave
 * this side.
 *
 * @see docs/support.md "The support team's side"
 */
import { eq } from 'drizzle-orm';
import type { SecretScanner } from '../accounts/secret-scanner.ts';
import type { Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { agents } from '../db/schema/index.ts';
import { AppError } from '../platform/errors.ts';
import { ticketCursor } from './ticket-cursor.ts';
import { announceUpdate, type TicketEventSteps, type TicketUpdate } from './ticket-events.ts';
import {
  agentMove,
  statusAfterComment,
  statusTimes,
  type AgentStatus,
} from './ticket-lifecycle.ts';
import { recordRedactions } from './ticket-redaction.ts';
import type { Ticket } from './ticket-schemas.ts';
import type { TicketComment } from './ticket-thread-schemas.ts';
import {
  insertComment,
  insertNote,
  listCommentPage,
  listNotes,
  listQueuePage,
  lockTicket,
  updateTicket,
  type QueueFilter,
  type QueueRow,
  type TicketChange,
} from './ticket-thread-repository.ts';
import { statusUpdate } from './ticket-thread-service.ts';
import { newCommentId, newNoteId, ticketNotFound, toComment, toTicket } from './ticket-view.ts';
import type { Tx } from './tickets-repository.ts';

/** A ticket as agents see it: the customer's view plus where it comes from and its timings. */
export interface DeskTicket extends Ticket {
  portalName: string;
  portalCode: string;
  assigneeAgentId: number | null;
  /** Milliseconds from creation to support's first reply; null before it. */
  timeToFirstResponseMs: number | null;
  /** Milliseconds from creation to the last solve; null unless solved (or closed since). */
  timeToSolveMs: number | null;
}

/** One entry of a ticket's thread on the agents' side: a public comment or an internal note. */
export type DeskEntry =
  | { kind: 'comment'; comment: TicketComment }
  | { kind: 'note'; id: string; author: string; body: string; createdAt: string };

export interface DeskDeps {
  db: Database;
  scanner: SecretScanner;
  steps: TicketEventSteps;
}

const THREAD_MAX = 1000;

function toDeskTicket(row: QueueRow): DeskTicket {
  const created = row.createdAt.getTime();
  return {
    ...toTicket(row),
    portalName: row.portalName,
    portalCode: row.portalCode,
    assigneeAgentId: row.assigneeAgentId,
    timeToFirstResponseMs: row.firstResponseAt ? row.firstResponseAt.getTime() - created : null,
    timeToSolveMs: row.solvedAt ? row.solvedAt.getTime() - created : null,
  };
}

async function agentName(tx: Tx, agentId: number): Promise<string> {
  const [row] = await tx
    .select({ name: agents.displayName, disabledAt: agents.disabledAt })
    .from(agents)
    .where(eq(agents.id, agentId));
  if (!row || row.disabledAt) throw new AppError('not_found', 'No such agent.');
  return row.name;
}

export type AgentDeskService = ReturnType<typeof createAgentDeskService>;

const actorOf = (agentId: number): Actor => ({ type: 'agent', id: String(agentId) });

/** Lock the ticket, apply `decide`'s change, announce it; all in one transaction. */
async function change(
  { db, steps }: DeskDeps,
  agentId: number,
  ticketId: string,
  decide: (
    tx: Tx,
    ticket: QueueRow,
    now: Date,
  ) => Promise<{ change: TicketChange; update: TicketUpdate }>,
  requestId?: string,
): Promise<void> {
  await db.transaction(async (tx) => {
    const ticket = await lockTicket(tx, null, ticketId);
    if (!ticket) throw ticketNotFound();
    const now = new Date();
    const { change: c, update } = await decide(tx, ticket, now);
    if (Object.keys(c).length === 0) return;
    await updateTicket(tx, ticketId, c, now);
    await announceUpdate(tx, steps, update, { actor: actorOf(agentId), requestId });
  });
}

/** A page of every portal's tickets, newest first, with the filters. */
async function queue(
  deps: DeskDeps,
  filter: QueueFilter,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ items: DeskTicket[]; nextCursor: string | null }> {
  const { db } = deps;
  const after = ticketCursor.after(page.cursor);
  const { rows, hasMore } = await listQueuePage(db, filter, { limit: page.limit, after });
  const last = rows.at(-1);
  return {
    items: rows.map(toDeskTicket),
    nextCursor: hasMore && last ? ticketCursor.encodeCursor(last) : null,
  };
}

/**
 * A ticket with its whole thread, comments and internal notes in time order.
 *
 * @throws AppError `not_found`.
 */
async function ticket(
  deps: DeskDeps,
  ticketId: string,
): Promise<{ ticket: DeskTicket; thread: DeskEntry[] }> {
  const { db } = deps;
  const row = await lockTicket(db, null, ticketId);
  if (!row) throw ticketNotFound();
  const { rows } = await listCommentPage(db, null, ticketId, { limit: THREAD_MAX });
  const notes = await listNotes(db, ticketId);
  const thread: DeskEntry[] = [
    ...rows.map((c) => ({ kind: 'comment' as const, comment: toComment(c) })),
    ...notes.map((n) => ({
      kind: 'note' as const,
      id: n.id,
      author: n.agentName,
      body: n.body,
      createdAt: n.createdAt.toISOString(),
    })),
  ].sort((a, b) => (entryTime(a) < entryTime(b) ? -1 : entryTime(a) > entryTime(b) ? 1 : 0));
  return { ticket: toDeskTicket(row), thread };
}

/**
 * A public reply, optionally with a status (default: a `new` ticket becomes `open`).
 * Sets `firstResponseAt` on the first one.
 *
 * @throws AppError `not_found`; `conflict` on a closed ticket.
 */
async function reply(
  deps: DeskDeps,
  args: {
    agentId: number;
    ticketId: string;
    body: string;
    status?: AgentStatus | undefined;
    requestId?: string | undefined;
  },
): Promise<TicketComment> {
  const { scanner, steps } = deps;
  const scanned = scanner.scan(args.body);
  let comment: TicketComment | undefined;
  await change(
    deps,
    args.agentId,
    args.ticketId,
    async (tx, ticket, now) => {
      const name = await agentName(tx, args.agentId);
      let status = statusAfterComment(ticket.status, 'agent');
      if (args.status) status = agentMove(ticket.status, args.status);
      const row = await insertComment(tx, {
        id: newCommentId(),
        ticketId: ticket.id,
        portalId: ticket.portalId,
        authorType: 'agent',
        authorAgentId: args.agentId,
        body: scanned.text,
        secretRedacted: scanned.text !== args.body,
        createdAt: now,
      });
      comment = toComment({ ...row, agentName: name });
      await steps.commentAdded?.(tx, {
        portalId: ticket.portalId,
        ticketId: ticket.id,
        commentId: row.id,
        authorName: name,
        body: row.body,
        createdAt: now,
      });
      if (row.secretRedacted) {
        await recordRedactions(tx, {
          principal: { portalId: ticket.portalId, userId: 0 },
          actor: actorOf(args.agentId),
          ticketId: ticket.id,
          tokenHashes: scanned.apiTokenHashes,
          appSecretFound: scanned.appSecretFound,
          requestId: args.requestId,
        });
      }
      return {
        change: {
          status,
          ...statusTimes(ticket.status, status, now),
          ...(ticket.firstResponseAt ? {} : { firstResponseAt: now }),
          commentAt: now,
        },
        update: statusUpdate(ticket, status, 'agent', now),
      };
    },
    args.requestId,
  );
  return comment!;
}

/**
 * An internal note: agents only; never through the API, a portal page, a webhook or an
 * export. Secrets are redacted as in comments. Does not change the ticket.
 *
 * @throws AppError `not_found`.
 */
async function note(
  deps: DeskDeps,
  args: { agentId: number; ticketId: string; body: string },
): Promise<{ id: string }> {
  const { db, scanner } = deps;
  return db.transaction(async (tx) => {
    const ticket = await lockTicket(tx, null, args.ticketId);
    if (!ticket) throw ticketNotFound();
    await agentName(tx, args.agentId);
    const row = await insertNote(tx, {
      id: newNoteId(),
      ticketId: ticket.id,
      agentId: args.agentId,
      body: scanner.scan(args.body).text,
    });
    return { id: row.id };
  });
}

/**
 * Assign the ticket to an agent (or to nobody, `toAgentId` null). A `new` ticket becomes
 * `open` ("an agent took it").
 *
 * @throws AppError `not_found` for an unknown ticket or agent; `conflict` on a closed ticket.
 */
async function assign(
  deps: DeskDeps,
  args: {
    agentId: number;
    ticketId: string;
    toAgentId: number | null;
    requestId?: string | undefined;
  },
): Promise<void> {
  await change(
    deps,
    args.agentId,
    args.ticketId,
    async (tx, ticket, now) => {
      if (ticket.status === 'closed') agentMove('closed', 'open');
      const to = args.toAgentId === null ? null : await agentName(tx, args.toAgentId);
      if (args.toAgentId === ticket.assigneeAgentId) {
        return { change: {}, update: statusUpdate(ticket, ticket.status, 'agent', now) };
      }
      const status = ticket.status === 'new' && to !== null ? 'open' : ticket.status;
      const update = statusUpdate(ticket, status, 'agent', now);
      update.changes.assignee = { from: ticket.assigneeName, to };
      return {
        change: { assigneeAgentId: args.toAgentId, status },
        update,
      };
    },
    args.requestId,
  );
}

/**
 * Set the status (`open`, `pending`, `solved`).
 *
 * @throws AppError `not_found`; `conflict` on a closed ticket.
 */
async function setStatus(
  deps: DeskDeps,
  args: {
    agentId: number;
    ticketId: string;
    status: AgentStatus;
    requestId?: string | undefined;
  },
): Promise<void> {
  await change(
    deps,
    args.agentId,
    args.ticketId,
    async (tx, ticket, now) => {
      await agentName(tx, args.agentId);
      const status = agentMove(ticket.status, args.status);
      if (status === ticket.status) {
        return { change: {}, update: statusUpdate(ticket, status, 'agent', now) };
      }
      return {
        change: { status, ...statusTimes(ticket.status, status, now) },
        update: statusUpdate(ticket, status, 'agent', now),
      };
    },
    args.requestId,
  );
}

/** The agents' desk over `deps`: every portal's tickets; each operation is documented above. */
export function createAgentDeskService(deps: DeskDeps) {
  return {
    queue: queue.bind(null, deps),
    ticket: ticket.bind(null, deps),
    reply: reply.bind(null, deps),
    note: note.bind(null, deps),
    assign: assign.bind(null, deps),
    setStatus: setStatus.bind(null, deps),
  };
}

function entryTime(e: DeskEntry): string {
  return e.kind === 'comment' ? e.comment.createdAt : e.createdAt;
}
