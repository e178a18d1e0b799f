import { pgTable, integer, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Support agents: the operator's people who answer tickets of every portal. They belong to no
 * portal and never hold an API token. Invariant: `email` is stored lower-cased and unique; a
 * disabled agent (`disabled_at` set) cannot sign in and has no live session.
 *
 * @see docs/support.md "The support team's side"
 */
export const agents = pgTable('agents', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  /** Stored lower-cased; never shown to customers. */
  email: text('email').notNull().unique(),
  /** The name customers see on the agent's replies. */
  displayName: text('display_name').notNull(),
  /** scrypt hash (`scrypt$N$r$p$salt$hash`). */
  passwordHash: text('password_hash').notNull(),
  disabledAt: timestamp('disabled_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
