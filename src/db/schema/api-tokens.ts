import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';
import { users } from './users.ts';

/**
 * The one API token of a portal. Only the SHA-256 of the token and its last 4 characters are
 * kept; the token itself is shown once. Regeneration replaces `token_hash` in place.
 */
export const apiTokens = pgTable('api_tokens', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  portalId: integer('portal_id')
    .notNull()
    .unique()
    .references(() => portals.id, { onDelete: 'cascade' }),
  userId: integer('user_id')
    .notNull()
    .references(() => users.id),
  /** Lower-case hex SHA-256 of the whole token. */
  tokenHash: text('token_hash').notNull().unique(),
  tokenHint: text('token_hint').notNull(),
  scopes: text('scopes').array().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  /** Who issued the current token: `cli`, or `user:<id>`. */
  createdBy: text('created_by').notNull(),
  /**
   * When the current token last authenticated a request, to the minute: written at most once a
   * minute per token and instance, after the check and off its path (accounts/token-usage.ts).
   * Null: not used since it was issued. Regeneration resets it.
   */
  lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
});
