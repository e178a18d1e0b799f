import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { agents } from './agents.ts';
import { users } from './users.ts';

/**
 * Browser sessions. The session id lives only in the visitor's cookie; the row keeps its
 * SHA-256, so a copy of the table does not let anyone sign in. `csrf_secret` is the
 * synchronizer token every state-changing form of the session carries. A session is a portal
 * user's or an agent's, never both (check constraint).
 */
export const sessions = pgTable(
  'sessions',
  {
    /** Lower-case hex SHA-256 of the session id. */
    idHash: text('id_hash').primaryKey(),
    userId: integer('user_id').references(() => users.id, { onDelete: 'cascade' }),
    agentId: integer('agent_id').references(() => agents.id, { onDelete: 'cascade' }),
    csrfSecret: text('csrf_secret').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** When the user last confirmed consent on /connect; start accepts it for a few minutes. */
    partnerConsentAt: timestamp('partner_consent_at', { withTimezone: true }),
    /**
     * Lower-case hex SHA-256 of the OAuth state this session's last authorization request
     * carried: the callback accepts a state only in the session that started it, once.
     */
    oauthStateHash: text('oauth_state_hash'),
    /**
     * The PKCE code verifier of that authorization request, AES-256-GCM sealed under a key
     * derived from its state (which only the visitor's state cookie and the callback's URL hold),
     * so the table alone never reveals it. Taken with the state by the callback.
     */
    oauthCodeVerifier: text('oauth_code_verifier'),
    /**
     * A value to show this session once (a regenerated API token, between the POST and the page
     * it redirects to): AES-256-GCM sealed under a key derived from the session id, which only
     * the visitor's cookie holds, so the table alone never reveals it. Cleared by the one read.
     */
    oneTimeSecret: text('one_time_secret'),
  },
  (t) => [
    index('sessions_user_id').on(t.userId),
    index('sessions_agent_id').on(t.agentId),
    index('sessions_expires_at').on(t.expiresAt),
    check('sessions_one_principal', sql`num_nonnulls(${t.userId}, ${t.agentId}) = 1`),
  ],
);
