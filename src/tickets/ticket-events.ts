/**
 * What a change to a ticket tells the world: the steps other features add (webhooks'
 * `ticket.updated` and `ticket.comment_added`, given at composition in services.ts), and the
 * audit events of agents' status changes and assignments. Both run in the change's transaction.
 *
 * @see docs/support.md "Webhooks"
 */
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { TicketStatus } from './ticket-lifecycle.ts';
import type { Tx } from './tickets-repository.ts';

/** One changed field: its value before and after. */
export interface FieldChange<T> {
  from: T;
  to: T;
}

/** A change of status, priority or assignee (display names), as `ticket.updated` reports it. */
export interface TicketUpdate {
  portalId: number;
  ticketId: string;
  changes: {
    status?: FieldChange<TicketStatus>;
    priority?: FieldChange<string>;
    assignee?: FieldChange<string | null>;
  };
  /** Who made it: the customer, an agent, or the clock (`system`: a solved ticket closing). */
  by: 'customer' | 'agent' | 'system';
  updatedAt: Date;
}

/** A public comment by support, as `ticket.comment_added` reports it (the text as the API shows it). */
export interface SupportComment {
  portalId: number;
  ticketId: string;
  commentId: string;
  authorName: string;
  body: string;
  createdAt: Date;
}

/** The steps another feature adds to ticket changes; each runs in the change's transaction. */
export interface TicketEventSteps {
  updated?: (tx: Tx, update: TicketUpdate) => Promise<void>;
  commentAdded?: (tx: Tx, comment: SupportComment) => Promise<void>;
}

/** True when `update` changes anything. */
export function hasChanges(update: TicketUpdate): boolean {
  return Object.keys(update.changes).length > 0;
}

/**
 * Run the `updated` step when anything changed, and, for an agent's change, write the audit
 * events: `ticket.status_changed` and `ticket.assigned` (actor `agent`, the ticket's portal).
 */
export async function announceUpdate(
  tx: Tx,
  steps: TicketEventSteps,
  update: TicketUpdate,
  audit: { actor: Actor; requestId?: string | undefined } | null,
): Promise<void> {
  if (!hasChanges(update)) return;
  await steps.updated?.(tx, update);
  if (!audit) return;
  const base = {
    portalId: update.portalId,
    actor: audit.actor,
    requestId: audit.requestId ?? null,
  };
  const { status, assignee } = update.changes;
  if (status) {
    await recordAuditEvent(tx, {
      ...base,
      action: 'ticket.status_changed',
      reason: `Ticket ${update.ticketId}: ${status.from} → ${status.to}.`,
    });
  }
  if (assignee) {
    await recordAuditEvent(tx, {
      ...base,
      action: 'ticket.assigned',
      reason: `Ticket ${update.ticketId} assigned to ${assignee.to ?? 'nobody'}.`,
    });
  }
}
