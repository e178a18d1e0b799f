import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { agents } from './agents.ts';
import { portals } from './portals.ts';
import { users } from './users.ts';

export const TICKET_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
/**
 * The lifecycle: `new` → `open` (an agent took it) → `pending` (waiting on the customer) →
 * `solved` → `closed` (final). See docs/support.md "Lifecycle".
 */
export const TICKET_STATUSES = ['new', 'open', 'pending', 'solved', 'closed'] as const;

/**
 * Support tickets of a portal. Invariants: every read filters by `portal_id` in the query;
 * `subject` and `description` never hold a recognised secret (they are scanned and redacted
 * before the insert). Times have millisecond precision so that the keyset pagination cursor,
 * which carries `created_at` as a JavaScript date, compares exactly.
 */
export const supportTickets = pgTable(
  'support_tickets',
  {
    /** Public id: `tkt_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    description: text('description').notNull(),
    priority: text('priority', { enum: TICKET_PRIORITIES }).notNull().default('normal'),
    status: text('status', { enum: TICKET_STATUSES }).notNull().default('new'),
    category: text('category'),
    tags: text('tags')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** The owner of the token that created the ticket. */
    requesterUserId: integer('requester_user_id')
      .notNull()
      .references(() => users.id),
    /** True when a secret was found in subject or description and replaced by `[REDACTED]`. */
    secretRedacted: boolean('secret_redacted').notNull().default(false),
    /** The agent working on it; null while unassigned. */
    assigneeAgentId: integer('assignee_agent_id').references(() => agents.id),
    /** When support first replied (an internal note does not count). */
    firstResponseAt: timestamp('first_response_at', { withTimezone: true, precision: 3 }),
    /** When it was last set `solved`; cleared when it is reopened. */
    solvedAt: timestamp('solved_at', { withTimezone: true, precision: 3 }),
    closedAt: timestamp('closed_at', { withTimezone: true, precision: 3 }),
    /** Public comments in the thread (internal notes not counted). */
    commentCount: integer('comment_count').notNull().default(0),
    lastCommentAt: timestamp('last_comment_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    // Ascending on purpose: scanned backwards, they serve `ORDER BY created_at DESC, id DESC`
    // (PostgreSQL's DESC is NULLS FIRST; an index built `DESC NULLS LAST` would not match it).
    index('support_tickets_portal_page').on(t.portalId, t.createdAt, t.id),
    index('support_tickets_portal_status_page').on(t.portalId, t.status, t.createdAt, t.id),
    index('support_tickets_queue').on(t.createdAt, t.id),
    index('support_tickets_solved_at')
      .on(t.solvedAt)
      .where(sql`${t.status} = 'solved'`),
  ],
);
