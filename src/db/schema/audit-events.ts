import { bigint, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';

/**
 * Append-only audit log. Invariant: never holds a secret (no token, code, state or key), only
 * who did what to which portal, why, and when. Rows are never updated or deleted by the app.
 * Pages are keyset pages on `(occurred_at, id)`, newest first (db/keyset-page.ts), served by
 * the ascending page index scanned backwards; times have millisecond precision so the cursor
 * compares exactly.
 */
export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** Null for events that concern no single portal (e.g. a key rotation). */
    portalId: integer('portal_id').references(() => portals.id, { onDelete: 'cascade' }),
    actorType: text('actor_type', { enum: ['user', 'provider', 'system', 'agent'] }).notNull(),
    /**
     * User id for `user`, agent id for `agent`, provider user id for `provider`, component name
     * for `system`.
     */
    actorId: text('actor_id').notNull(),
    action: text('action').notNull(),
    reason: text('reason'),
    requestId: text('request_id'),
    occurredAt: timestamp('occurred_at', { withTimezone: true, precision: 3 })
      .notNull()
      .defaultNow(),
  },
  (t) => [index('audit_events_portal_page').on(t.portalId, t.occurredAt, t.id)],
);
