import { sql } from 'drizzle-orm';
import { integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * Data deletion requests received from the provider (its data-deletion callback). The
 * confirmation code is public (the provider shows it to the person), so the row holds only
 * what the status page says: whose request, what was deleted, and when. No secret.
 *
 * A request is open (`completed_at` null) while it is being carried out; a provider user has at
 * most one open request, and a request for them meanwhile answers with its code.
 */
export const dataDeletionRequests = pgTable(
  'data_deletion_requests',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    /** Alphanumeric, unique, unguessable. */
    confirmationCode: text('confirmation_code').notNull().unique(),
    providerUserId: text('provider_user_id').notNull(),
    /** How many connections the request revoked and erased. */
    connectionsDeleted: integer('connections_deleted').notNull(),
    /** Plain-words summary of what was deleted. */
    summary: text('summary').notNull(),
    requestedAt: timestamp('requested_at', { withTimezone: true }).notNull().defaultNow(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('data_deletion_requests_open_per_user')
      .on(t.providerUserId)
      .where(sql`${t.completedAt} is null`),
  ],
);
