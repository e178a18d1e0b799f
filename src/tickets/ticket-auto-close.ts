/**
 * Solved tickets close {@link AUTO_CLOSE_DAYS} days after they were solved. The close is applied
 * by the background task `tickets.auto-close` (every {@link AUTO_CLOSE_CHECK_MS} ms, across all
 * portals) and before a customer changes or comments on a ticket (so the rules see its true
 * status); reads never write. One statement closes every due ticket in scope, with `closed_at`
 * set to the moment it became due, and each close is announced (`ticket.updated`, by `system`)
 * in the same transaction.
 *
 * @see docs/decisions/0023-support.md, Closing solved tickets
 */
import type { Database } from '../db/client.ts';
import { announceUpdate, type TicketEventSteps } from './ticket-events.ts';
import { AUTO_CLOSE_DAYS } from './ticket-lifecycle.ts';
import { closeDueSolved } from './ticket-thread-repository.ts';

export const AUTO_CLOSE_MS = AUTO_CLOSE_DAYS * 24 * 3600 * 1000;
/** The background task's period: a due ticket shows `closed` at most this long after it is due. */
export const AUTO_CLOSE_CHECK_MS = 5 * 60_000;

/**
 * Close the due solved tickets of one portal (or of all, `portalId` null).
 *
 * @returns how many were closed.
 */
export async function closeDueTickets(
  db: Database,
  steps: TicketEventSteps,
  portalId: number | null,
  now: Date = new Date(),
): Promise<number> {
  return db.transaction(async (tx) => {
    const closed = await closeDueSolved(
      tx,
      portalId,
      new Date(now.getTime() - AUTO_CLOSE_MS),
      AUTO_CLOSE_MS,
    );
    for (const c of closed) {
      await announceUpdate(
        tx,
        steps,
        {
          portalId: c.portalId,
          ticketId: c.id,
          changes: { status: { from: 'solved', to: 'closed' } },
          by: 'system',
          updatedAt: c.closedAt,
        },
        null,
      );
    }
    return closed.length;
  });
}
