import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';

/**
 * `Idempotency-Key` records, one per (portal, key). A request claims its key by inserting this
 * row in the same transaction that creates the resource, so two concurrent requests with one
 * key cannot both create: the second waits on the unique key and then replays the first.
 *
 * `request_hash` is the SHA-256 of the canonical request after secret redaction (nothing derived
 * from a secret is stored); `response_body` is the first response, replayed verbatim.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    /** The client's key, 1–255 characters, as sent. */
    key: text('key').notNull(),
    requestHash: text('request_hash').notNull(),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** After this instant the key may be reused for a new request (24 h after creation). */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.portalId, t.key] }),
    index('idempotency_keys_expiry').on(t.portalId, t.expiresAt),
  ],
);
