import { index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The provider `signed_request`s already processed (deauthorize and data-deletion callbacks),
 * remembered while they are fresh enough to be accepted again: a provider retry or a replay of
 * the same request is answered like the first time and changes nothing. A row may go once
 * `expires_at` has passed (the request would be refused as stale anyway).
 *
 * Holds no secret: `fingerprint` is the SHA-256 of the request's verified signature bytes (the
 * HMAC the provider sent in clear), so every encoding of one request is one row.
 *
 * @see docs/partner-connection.md "Callbacks from the provider"
 */
export const processedSignedRequests = pgTable(
  'processed_signed_requests',
  {
    /** `deauthorize` or `data_deletion`: the callback the request was sent to. */
    callback: text('callback', { enum: ['deauthorize', 'data_deletion'] }).notNull(),
    /** SHA-256 hex of the signature bytes. */
    fingerprint: text('fingerprint').notNull(),
    providerUserId: text('provider_user_id').notNull(),
    /** Data deletion: the confirmation code the first answer gave (a replay repeats it). */
    confirmationCode: text('confirmation_code'),
    processedAt: timestamp('processed_at', { withTimezone: true }).notNull().defaultNow(),
    /** `issued_at` + the accepted age + clock skew: after this the request is stale. */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.callback, t.fingerprint] }),
    index('processed_signed_requests_expiry').on(t.expiresAt),
  ],
);
