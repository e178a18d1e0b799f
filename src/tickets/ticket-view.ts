/**
 * Stored rows → what the API, the pages and webhooks show: the ticket and a comment of its
 * thread. An agent appears by display name only, never by email.
 */
import { randomBase62 } from '../platform/crypto.ts';
import { AppError } from '../platform/errors.ts';
import type { Ticket } from './ticket-schemas.ts';
import type { TicketComment } from './ticket-thread-schemas.ts';
import type { CommentRow } from './ticket-thread-repository.ts';
import type { TicketRow } from './tickets-repository.ts';

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toTicket(row: TicketRow): Ticket {
  return {
    id: row.id,
    subject: row.subject,
    description: row.description,
    priority: row.priority,
    status: row.status,
    category: row.category,
    tags: row.tags,
    requester: { userId: row.requesterUserId },
    secretRedacted: row.secretRedacted,
    assignee: row.assigneeName,
    firstResponseAt: iso(row.firstResponseAt),
    solvedAt: iso(row.solvedAt),
    commentCount: row.commentCount,
    lastCommentAt: iso(row.lastCommentAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toComment(row: CommentRow): TicketComment {
  return {
    id: row.id,
    ticketId: row.ticketId,
    body: row.body,
    author:
      row.authorType === 'agent'
        ? { type: 'agent', userId: null, name: row.agentName }
        : { type: 'customer', userId: row.authorUserId, name: null },
    secretRedacted: row.secretRedacted,
    createdAt: row.createdAt.toISOString(),
  };
}

/** Public comment id: `cmt_` + base62 of 16 random bytes. */
export function newCommentId(): string {
  return `cmt_${randomBase62(16)}`;
}

/** Internal note id: `nte_` + base62 of 16 random bytes. */
export function newNoteId(): string {
  return `nte_${randomBase62(16)}`;
}

export function ticketNotFound(): AppError {
  return new AppError('not_found', 'No ticket with this id.');
}
