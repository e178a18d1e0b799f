import { sql } from 'drizzle-orm';
import { date, index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';
import { users } from './users.ts';

/**
 * The API keys of a portal (several per portal; the table keeps its first name, `api_tokens`).
 * Only the SHA-256 of a key's secret and its last 4 characters are kept; the secret itself is
 * shown once. Rotation moves the current hash to `previous_token_hash`, which keeps working
 * until `previous_valid_until`; revocation deletes the row.
 */
export const apiTokens = pgTable(
  'api_tokens',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    /** What the key is for, in the portal's words (1–100 characters). */
    name: text('name').notNull().default('Default'),
    /** Lower-case hex SHA-256 of the whole secret. */
    tokenHash: text('token_hash').notNull().unique(),
    tokenHint: text('token_hint').notNull(),
    scopes: text('scopes').array().notNull(),
    /** After this instant every request with the key is refused (401 `token_expired`). */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** Addresses and CIDR ranges (IPv4, IPv6) the key may be used from; null: any. */
    allowedIps: text('allowed_ips').array(),
    /** The key's own requests per minute (at most the instance's limit); null: that limit. */
    rateLimitPerMinute: integer('rate_limit_per_minute'),
    /** The hash of the secret a rotation replaced, valid until `previous_valid_until`. */
    previousTokenHash: text('previous_token_hash').unique(),
    previousValidUntil: timestamp('previous_valid_until', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Who issued the current secret: `cli`, or `user:<id>`, or `key:<id>`. */
    createdBy: text('created_by').notNull(),
    /**
     * When the key last authenticated a request, to the minute: written in batches, after the
     * check and off its path (accounts/key-usage.ts). Null: not used since it was issued.
     */
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    /** The client address of that request (as the trusted-proxy settings define it). */
    lastUsedIp: text('last_used_ip'),
  },
  (t) => [index('api_tokens_portal_id_idx').on(t.portalId, t.id)],
);

/**
 * Requests per key, day (UTC), operation (`GET /auth/verify`) and status class (`2xx`…`5xx`),
 * added to in batches by accounts/key-usage.ts. Deleted with the key.
 */
export const apiKeyUsage = pgTable(
  'api_key_usage',
  {
    keyId: integer('key_id')
      .notNull()
      .references(() => apiTokens.id, { onDelete: 'cascade' }),
    day: date('day', { mode: 'string' }).notNull(),
    operation: text('operation').notNull(),
    statusClass: text('status_class').notNull(),
    requests: integer('requests')
      .notNull()
      .default(sql`0`),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.day, t.operation, t.statusClass] })],
);
