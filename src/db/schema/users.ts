import { sql } from 'drizzle-orm';
import {
  boolean,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';

/**
 * People of a portal. `id` is public as `userId`. Invariant: at most one main administrator
 * per portal (partial unique index).
 */
export const users = pgTable(
  'users',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    /** Stored lower-cased. */
    email: text('email').notNull().unique(),
    /** scrypt hash (`scrypt$N$r$p$salt$hash`), null until a password is set. */
    passwordHash: text('password_hash'),
    isMainAdmin: boolean('is_main_admin').notNull().default(false),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('users_one_main_admin_per_portal')
      .on(t.portalId)
      .where(sql`${t.isMainAdmin}`),
    index('users_portal_id').on(t.portalId),
  ],
);
