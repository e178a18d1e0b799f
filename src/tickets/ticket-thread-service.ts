/**
 * The customer's side of a ticket after it is created: its thread of comments (read, add) and
 * the changes the customer may make (close, reopen, priority). Every method is scoped to the
 * principal's portal; internal notes are never read here.
 *
 * @see docs/support.md "The API"
 */
import type { Principal } from '../accounts/principal.ts';
import type { SecretScanner } from '../accounts/secret-scanner.ts';
import type { Database } from '../db/client.ts';
import type { Logger } from '../platform/logger.ts';
import { closeDueTickets } from './ticket-auto-close.ts';
import { commentCursor } from './ticket-cursor.ts';
import { announceUpdate, type TicketEventSteps, type TicketUpdate } from './ticket-events.ts';
import { claimOrReplay, requestFingerprint } from '../idempotency/idempotency-keys.ts';
import { saveIdempotentResponse } from '../idempotency/idempotency-repository.ts';
import {
  assertPriorityChangeable,
  customerMove,
  statusAfterComment,
  statusTimes,
  type CustomerStatus,
} from './ticket-lifecycle.ts';
import { logRedaction, recordRedactions, redactComment } from './ticket-redaction.ts';
import type { Ticket } from './ticket-schemas.ts';
import type { TicketComment } from './ticket-thread-schemas.ts';
import {
  insertComment,
  listCommentPage,
  lockTicket,
  updateTicket,
  type TicketChange,
} from './ticket-thread-repository.ts';
import { newCommentId, ticketNotFound, toComment, toTicket } from './ticket-view.ts';
import { findTicket, type TicketRow } from './tickets-repository.ts';

export interface TicketThreadDeps {
  db: Database;
  scanner: SecretScanner;
  logger: Logger;
  steps: TicketEventSteps;
}

/** A comment request's outcome, like a ticket's create. */
export interface AddCommentResult {
  status: number;
  body: { success: true; data: TicketComment };
  replayed: boolean;
}

export type TicketThreadService = ReturnType<typeof createTicketThreadService>;

/**
 * A page of the ticket's comments, oldest first.
 *
 * @throws AppError `not_found` for an unknown id or another portal's ticket.
 * @throws AppError `invalid_request` for a cursor this service did not produce.
 */
async function listComments(
  deps: TicketThreadDeps,
  principal: Pick<Principal, 'portalId'>,
  ticketId: string,
  options: { limit: number; cursor?: string | undefined },
): Promise<{ items: TicketComment[]; nextCursor: string | null }> {
  const { db } = deps;
  const after = commentCursor.after(options.cursor);
  if (!(await findTicket(db, principal.portalId, ticketId))) throw ticketNotFound();
  const { rows, hasMore } = await listCommentPage(db, principal.portalId, ticketId, {
    limit: options.limit,
    after,
  });
  const last = rows.at(-1);
  return {
    items: rows.map(toComment),
    nextCursor: hasMore && last ? commentCursor.encodeCursor(last) : null,
  };
}

/**
 * Add the customer's comment: secrets redacted as in a ticket, `Idempotency-Key` as on
 * tickets; a `pending` or `solved` ticket reopens (`ticket.updated`).
 *
 * @returns 201 and the comment, or the first response replayed.
 * @throws AppError `not_found`; `conflict` (409) on a closed ticket; `idempotency_conflict`.
 */
async function addComment(
  deps: TicketThreadDeps,
  args: {
    principal: Principal;
    ticketId: string;
    body: string;
    idempotencyKey?: string | undefined;
    requestId?: string | undefined;
  },
): Promise<AddCommentResult> {
  const { db, scanner, logger, steps } = deps;
  const { principal, ticketId, requestId } = args;
  await closeDueTickets(db, steps, principal.portalId);
  const red = redactComment(scanner, args.body, args.idempotencyKey);
  const route = 'POST /support/tickets/{id}/comments';
  const requestHash = requestFingerprint(route, { ticketId, body: red.body });
  const result = await db.transaction(async (tx): Promise<AddCommentResult> => {
    if (red.idempotencyKey !== undefined) {
      const first = await claimOrReplay(tx, principal.portalId, red.idempotencyKey, requestHash);
      if (first) {
        return {
          status: first.status,
          body: first.body as AddCommentResult['body'],
          replayed: true,
        };
      }
    }
    const ticket = await lockTicket(tx, principal.portalId, ticketId);
    if (!ticket) throw ticketNotFound();
    const now = new Date();
    const status = statusAfterComment(ticket.status, 'customer');
    const row = await insertComment(tx, {
      id: newCommentId(),
      ticketId,
      portalId: principal.portalId,
      authorType: 'customer',
      authorUserId: principal.userId,
      body: red.body,
      secretRedacted: red.secretRedacted,
      createdAt: now,
    });
    await updateTicket(
      tx,
      ticketId,
      { status, ...statusTimes(ticket.status, status, now), commentAt: now },
      now,
    );
    await announceUpdate(tx, steps, statusUpdate(ticket, status, 'customer', now), null);
    if (red.secretRedacted) {
      await recordRedactions(tx, { principal, ticketId, ...red, requestId });
    }
    const created = {
      status: 201,
      body: { success: true as const, data: toComment({ ...row, agentName: null }) },
      replayed: false,
    };
    if (red.idempotencyKey !== undefined) {
      await saveIdempotentResponse(tx, principal.portalId, red.idempotencyKey, created);
    }
    return created;
  });
  if (!result.replayed && red.secretRedacted) {
    logRedaction(logger, {
      ticketId,
      portalId: principal.portalId,
      tokenCount: red.tokenHashes.length,
      appSecretFound: red.appSecretFound,
      requestId,
    });
  }
  return result;
}

/**
 * The customer's change: close, reopen, or a new priority (while not solved).
 *
 * @throws AppError `not_found`; `conflict` (409) naming the current status for a move the
 *   lifecycle refuses.
 */
async function updateCustomerTicket(
  deps: TicketThreadDeps,
  principal: Pick<Principal, 'portalId'>,
  ticketId: string,
  input: { status?: CustomerStatus | undefined; priority?: TicketRow['priority'] | undefined },
): Promise<Ticket> {
  const { db, steps } = deps;
  await closeDueTickets(db, steps, principal.portalId);
  await db.transaction(async (tx) => {
    const ticket = await lockTicket(tx, principal.portalId, ticketId);
    if (!ticket) throw ticketNotFound();
    const now = new Date();
    const change: TicketChange = {};
    const update = statusUpdate(ticket, ticket.status, 'customer', now);
    if (input.priority !== undefined && input.priority !== ticket.priority) {
      assertPriorityChangeable(ticket.status);
      change.priority = input.priority;
      update.changes.priority = { from: ticket.priority, to: input.priority };
    }
    if (input.status !== undefined) {
      const status = customerMove(ticket.status, input.status);
      if (status !== ticket.status) {
        Object.assign(change, { status }, statusTimes(ticket.status, status, now));
        update.changes.status = { from: ticket.status, to: status };
      }
    }
    if (Object.keys(change).length === 0) return;
    await updateTicket(tx, ticketId, change, now);
    await announceUpdate(tx, steps, update, null);
  });
  const row = await findTicket(db, principal.portalId, ticketId);
  if (!row) throw ticketNotFound();
  return toTicket(row);
}

/** The customer's thread operations over `deps`; each is documented above. */
export function createTicketThreadService(deps: TicketThreadDeps) {
  return {
    listComments: listComments.bind(null, deps),
    addComment: addComment.bind(null, deps),
    updateTicket: updateCustomerTicket.bind(null, deps),
  };
}

/** A `ticket.updated` for a status change (no change when `to` is the current status). */
export function statusUpdate(
  ticket: Pick<TicketRow, 'portalId' | 'id' | 'status'>,
  to: TicketRow['status'],
  by: TicketUpdate['by'],
  now: Date,
): TicketUpdate {
  return {
    portalId: ticket.portalId,
    ticketId: ticket.id,
    changes: to === ticket.status ? {} : { status: { from: ticket.status, to } },
    by,
    updatedAt: now,
  };
}
