/**
 * The lifecycle rules of a support ticket, as pure functions: which moves the customer and the
 * agents may make, and what a comment does to the status. No I/O; the services apply the result.
 *
 *   new → open (an agent took it) → pending (waiting on the customer) → solved → closed
 *
 * A customer's comment on a `pending` or `solved` ticket reopens it (`open`). `solved` becomes
 * `closed` after {@link AUTO_CLOSE_DAYS} days, or at once when the customer closes it; `closed`
 * is final (a new question is a new ticket), as in Zendesk.
 *
 * @see docs/support.md "Lifecycle"
 */
import type { TICKET_STATUSES } from '../db/schema/support-tickets.ts';
import { AppError } from '../platform/errors.ts';

export type TicketStatus = (typeof TICKET_STATUSES)[number];

/** Days after which a solved ticket is closed. */
export const AUTO_CLOSE_DAYS = 7;

/** The statuses an agent may set (`closed` is the customer's or the clock's). */
export const AGENT_STATUSES = ['open', 'pending', 'solved'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/** The statuses a customer may set with `PATCH /support/tickets/{id}`. */
export const CUSTOMER_STATUSES = ['open', 'closed'] as const;
export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

function refused(current: TicketStatus, wanted: string): AppError {
  return new AppError(
    'conflict',
    `The ticket is ${current}; it cannot be set ${wanted}.` +
      (current === 'closed' ? ' A closed ticket is final: open a new ticket.' : ''),
    { details: [{ field: 'status', message: `current status is ${current}` }] },
  );
}

/**
 * The customer's move: `closed` from any status but `closed`; `open` (reopen) from `pending` or
 * `solved`. Setting the current status again is a no-op.
 *
 * @throws AppError `conflict` (409) naming the current status for any other move.
 */
export function customerMove(current: TicketStatus, wanted: CustomerStatus): TicketStatus {
  if (current === wanted) return current;
  if (wanted === 'closed' && current !== 'closed') return 'closed';
  if (wanted === 'open' && (current === 'pending' || current === 'solved')) return 'open';
  throw refused(current, wanted);
}

/**
 * The agent's move: any of `open`, `pending`, `solved` from any status but `closed`.
 *
 * @throws AppError `conflict` (409) for a closed ticket.
 */
export function agentMove(current: TicketStatus, wanted: AgentStatus): TicketStatus {
  if (current === 'closed') throw refused(current, wanted);
  return wanted;
}

/**
 * The customer may change the priority while the ticket is neither solved nor closed.
 *
 * @throws AppError `conflict` (409) naming the current status otherwise.
 */
export function assertPriorityChangeable(current: TicketStatus): void {
  if (current === 'solved' || current === 'closed') {
    throw new AppError('conflict', `The ticket is ${current}; its priority can no longer change.`, {
      details: [{ field: 'priority', message: `current status is ${current}` }],
    });
  }
}

/**
 * The status after a public comment. A customer's comment reopens a `pending` or `solved`
 * ticket; an agent's reply takes a `new` ticket (`open`). Nobody comments on a closed ticket.
 *
 * @throws AppError `conflict` (409) on a closed ticket.
 */
export function statusAfterComment(current: TicketStatus, by: 'customer' | 'agent'): TicketStatus {
  if (current === 'closed') {
    throw new AppError(
      'conflict',
      'The ticket is closed; it takes no more comments. Open a new ticket.',
      { details: [{ field: 'status', message: 'current status is closed' }] },
    );
  }
  if (by === 'customer') return current === 'pending' || current === 'solved' ? 'open' : current;
  return current === 'new' ? 'open' : current;
}

/**
 * The timestamps a status change implies: `solvedAt` set on entering `solved` and cleared when
 * leaving it for an open status; `closedAt` set on entering `closed`.
 */
export function statusTimes(
  from: TicketStatus,
  to: TicketStatus,
  now: Date,
): { solvedAt?: Date | null; closedAt?: Date } {
  if (from === to) return {};
  if (to === 'solved') return { solvedAt: now };
  if (to === 'closed') return { closedAt: now };
  return from === 'solved' ? { solvedAt: null } : {};
}
