import { sql } from 'drizzle-orm';
import { boolean, check, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { agents } from './agents.ts';
import { portals } from './portals.ts';
import { supportTickets } from './support-tickets.ts';
import { users } from './users.ts';

export const COMMENT_AUTHOR_TYPES = ['customer', 'agent'] as const;

/**
 * The public thread of a ticket: what the customer and support wrote after the description.
 * Invariants: every read filters by `portal_id`; `body` went through the secret scanner; exactly
 * one author column is set, as `author_type` says. Internal notes are not here (see
 * ticket-notes.ts), so no customer-facing query can reach them.
 */
export const ticketComments = pgTable(
  'ticket_comments',
  {
    /** Public id: `cmt_` + base62. */
    id: text('id').primaryKey(),
    ticketId: text('ticket_id')
      .notNull()
      .references(() => supportTickets.id, { onDelete: 'cascade' }),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    authorType: text('author_type', { enum: COMMENT_AUTHOR_TYPES }).notNull(),
    authorUserId: integer('author_user_id').references(() => users.id),
    authorAgentId: integer('author_agent_id').references(() => agents.id),
    body: text('body').notNull(),
    secretRedacted: boolean('secret_redacted').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('ticket_comments_thread').on(t.portalId, t.ticketId, t.createdAt, t.id),
    check(
      'ticket_comments_one_author',
      sql`num_nonnulls(${t.authorUserId}, ${t.authorAgentId}) = 1`,
    ),
  ],
);

/**
 * Internal notes of agents on a ticket. Invariant: read only by the agent console and the agent
 * CLI; never by the external API, a portal page, a webhook or an export.
 */
export const ticketNotes = pgTable(
  'ticket_notes',
  {
    /** `nte_` + base62. */
    id: text('id').primaryKey(),
    ticketId: text('ticket_id')
      .notNull()
      .references(() => supportTickets.id, { onDelete: 'cascade' }),
    agentId: integer('agent_id')
      .notNull()
      .references(() => agents.id),
    body: text('body').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index('ticket_notes_ticket').on(t.ticketId, t.createdAt)],
);
