import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** Tenants. `portal_code` is the public identifier: a string of digits, unique. */
export const portals = pgTable('portals', {
  id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
  portalCode: text('portal_code').notNull().unique(),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
