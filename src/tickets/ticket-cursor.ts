/**
 * The cursors of the tickets' lists: tickets (the API's list and the agents' queue, newest
 * first) and a ticket's comments (oldest first), each over the one keyset cursor.
 *
 * @see docs/decisions/0003-api-conventions.md
 */
import { keysetCursor } from '../api-kit/keyset-cursor.ts';

export const ticketCursor = keysetCursor(/^tkt_[0-9A-Za-z]{1,60}$/);
export const commentCursor = keysetCursor(/^cmt_[0-9A-Za-z]{1,60}$/);
