/**
 * Server-side browser sessions. The session id (32 random bytes, base64url) exists only in the
 * visitor's cookie; the database keeps its SHA-256, so reading the table does not let anyone
 * sign in. Each session carries a CSRF synchronizer token and, for a few minutes after the user
 * confirms on /connect, the moment of that consent.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Session_Management_Cheat_Sheet.html
 */
import { and, count, eq, gt, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import {
  agents,
  portals,
  sessions,
  users,
  type MemberAvailability,
  type MemberRole,
} from '../db/schema/index.ts';
import { randomBase64Url, sha256Hex } from '../platform/crypto.ts';
import { createOneTimeSecrets, openForSession, sealForSession } from './one-time-secret.ts';

/** What a request knows about its signed-in user. Never carries the session id. */
export interface WebSession {
  /** SHA-256 of the session id (the row key). */
  idHash: string;
  userId: number;
  email: string;
  /** The portal's owner (created with it; owns its first API key). Always an admin. */
  isMainAdmin: boolean;
  /** What the member may do: an agent works the inbox and contacts only. */
  role: MemberRole;
  /** `role === 'admin'`: may change the connection, credit, keys, webhooks and the team. */
  isAdmin: boolean;
  /** Whether the member takes new conversations. */
  availability: MemberAvailability;
  portalId: number;
  portalCode: string;
  portalName: string;
  /** The synchronizer token of this session's forms. */
  csrfToken: string;
  expiresAt: Date;
}

/** What a request knows about its signed-in support agent. Never carries the session id. */
export interface AgentSession {
  idHash: string;
  agentId: number;
  email: string;
  name: string;
  csrfToken: string;
  expiresAt: Date;
}

/** How long a consent given on /connect lets `/api/auth/partner/start` proceed (seconds). */
export const CONSENT_MAX_AGE_SECONDS = 300;

export type SessionStore = ReturnType<typeof createSessionStore>;

/**
 * Delete the sessions (of users and agents) that expired before `now`: the `sessions.expire`
 * background task (src/background-tasks.ts). `find` never returns an expired session, so this
 * only frees storage.
 *
 * @returns how many were deleted.
 * @see docs/architecture.md "jobs/"
 */
export async function expireSessions(db: Database, now = new Date()): Promise<number> {
  const gone = await db
    .delete(sessions)
    .where(lt(sessions.expiresAt, now))
    .returning({ idHash: sessions.idHash });
  return gone.length;
}

/**
 * @param deps.ttlSeconds lifetime of a session from sign-in (absolute, not sliding).
 * @param deps.now clock, for tests of expiry; defaults to `Date.now`.
 */
export function createSessionStore(deps: { db: Database; ttlSeconds: number; now?: () => number }) {
  const { db, ttlSeconds } = deps;
  const now = deps.now ?? Date.now;

  return {
    /**
     * Start a session for a user who has just proven who they are (expired sessions are
     * deleted by the `sessions.expire` background task, `expireSessions`).
     *
     * @returns the session id (for the cookie only; never stored or logged) and its expiry.
     */
    async create(userId: number): Promise<{ sessionId: string; expiresAt: Date }> {
      const sessionId = randomBase64Url(32);
      const expiresAt = new Date(now() + ttlSeconds * 1000);
      await db.insert(sessions).values({
        idHash: sha256Hex(sessionId),
        userId,
        csrfSecret: randomBase64Url(32),
        createdAt: new Date(now()),
        expiresAt,
      });
      return { sessionId, expiresAt };
    },

    /**
     * The live session with this id, or null (unknown, expired, malformed id, or a member who
     * is disabled: their sessions are deleted when they are, and this check holds meanwhile).
     */
    async find(sessionId: string): Promise<WebSession | null> {
      if (!/^[A-Za-z0-9_-]{43}$/.test(sessionId)) return null;
      const [row] = await db
        .select({
          idHash: sessions.idHash,
          userId: users.id,
          email: users.email,
          isMainAdmin: users.isMainAdmin,
          role: users.role,
          isAdmin: sql<boolean>`${users.role} = 'admin'`,
          availability: users.availability,
          portalId: portals.id,
          portalCode: portals.portalCode,
          portalName: portals.name,
          csrfToken: sessions.csrfSecret,
          expiresAt: sessions.expiresAt,
        })
        .from(sessions)
        .innerJoin(users, eq(users.id, sessions.userId))
        .innerJoin(portals, eq(portals.id, users.portalId))
        .where(
          and(
            eq(sessions.idHash, sha256Hex(sessionId)),
            gt(sessions.expiresAt, new Date(now())),
            eq(users.status, 'active'),
          ),
        );
      return row ?? null;
    },

    /**
     * Replace the session's CSRF secret, so that the form just submitted cannot be submitted
     * again (a reload or a replay of a one-shot action such as token regeneration).
     *
     * @returns the new CSRF token for the page that answers.
     */
    async rotateCsrf(idHash: string): Promise<string> {
      const csrfSecret = randomBase64Url(32);
      await db.update(sessions).set({ csrfSecret }).where(eq(sessions.idHash, idHash));
      return csrfSecret;
    },

    /** How many live (unexpired) sessions user `userId` has, this one included. */
    async countActive(userId: number): Promise<number> {
      const [row] = await db
        .select({ n: count() })
        .from(sessions)
        .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, new Date(now()))));
      return row?.n ?? 0;
    },

    /** End a session (sign-out). Idempotent. */
    async destroy(idHash: string): Promise<void> {
      await db.delete(sessions).where(eq(sessions.idHash, idHash));
    },

    /** Values shown to a session once, across a redirect (one-time-secret.ts). */
    oneTime: createOneTimeSecrets(db),

    ...agentSessions(db, ttlSeconds, now),

    ...flowBindings(db, now),
  };
}

/**
 * Sessions of support agents: the same table, cookie and lifetime as a user's, with `agent_id`
 * set instead of `user_id` (a check constraint keeps exactly one), so a portal page never
 * finds an agent's session and the console never finds a user's.
 */
function agentSessions(db: Database, ttlSeconds: number, now: () => number) {
  return {
    /** Start a session for an agent who has just proven who they are. */
    async createForAgent(agentId: number): Promise<{ sessionId: string; expiresAt: Date }> {
      const sessionId = randomBase64Url(32);
      const expiresAt = new Date(now() + ttlSeconds * 1000);
      await db.insert(sessions).values({
        idHash: sha256Hex(sessionId),
        agentId,
        csrfSecret: randomBase64Url(32),
        createdAt: new Date(now()),
        expiresAt,
      });
      return { sessionId, expiresAt };
    },

    /** The live session of an enabled agent with this id, or null. */
    async findAgent(sessionId: string): Promise<AgentSession | null> {
      if (!/^[A-Za-z0-9_-]{43}$/.test(sessionId)) return null;
      const [row] = await db
        .select({
          idHash: sessions.idHash,
          agentId: agents.id,
          email: agents.email,
          name: agents.displayName,
          csrfToken: sessions.csrfSecret,
          expiresAt: sessions.expiresAt,
        })
        .from(sessions)
        .innerJoin(agents, eq(agents.id, sessions.agentId))
        .where(
          and(
            eq(sessions.idHash, sha256Hex(sessionId)),
            gt(sessions.expiresAt, new Date(now())),
            isNull(agents.disabledAt),
          ),
        );
      return row ?? null;
    },
  };
}

/**
 * What a session holds of a partner authorization in progress: the consent given on /connect
 * and the hash of the OAuth state its authorization request carried.
 */
function flowBindings(db: Database, now: () => number) {
  return {
    /** Record that the user confirmed the consent on /connect just now. */
    async recordConsent(idHash: string): Promise<void> {
      await db
        .update(sessions)
        .set({ partnerConsentAt: new Date(now()) })
        .where(eq(sessions.idHash, idHash));
    },

    /**
     * Bind the OAuth state of the authorization request this session is starting (its SHA-256),
     * replacing any earlier one: only the latest flow of a session can complete. With PKCE, its
     * code verifier is kept beside it, sealed under a key derived from the state.
     *
     * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.1
     */
    async bindOAuthState(idHash: string, state: string, codeVerifier?: string): Promise<void> {
      await db
        .update(sessions)
        .set({
          oauthStateHash: sha256Hex(state),
          oauthCodeVerifier:
            codeVerifier === undefined ? null : sealForSession(state, codeVerifier),
        })
        .where(eq(sessions.idHash, idHash));
    },

    /**
     * Use up the OAuth state bound to this session. Either way the binding (and its verifier) is
     * cleared, so a state completes at most one callback. Comparing hashes in SQL leaks nothing
     * usable about the state.
     *
     * @returns null unless `state` is the one this session's authorization request carried;
     *   else the PKCE code verifier bound with it (undefined when the request had none).
     * @see https://www.rfc-editor.org/rfc/rfc9700#section-2.1 (state bound to the user agent)
     */
    async takeOAuthState(
      idHash: string,
      state: string,
    ): Promise<{ codeVerifier: string | undefined } | null> {
      const bound = and(eq(sessions.idHash, idHash), eq(sessions.oauthStateHash, sha256Hex(state)));
      const [row] = await db
        .select({ sealed: sessions.oauthCodeVerifier })
        .from(sessions)
        .where(bound);
      const cleared = { oauthStateHash: null, oauthCodeVerifier: null };
      const taken = await db
        .update(sessions)
        .set(cleared)
        .where(bound)
        .returning({ idHash: sessions.idHash });
      if (taken.length === 0) {
        await db.update(sessions).set(cleared).where(eq(sessions.idHash, idHash));
        return null;
      }
      const sealed = row?.sealed;
      return { codeVerifier: (sealed && openForSession(state, sealed)) ?? undefined };
    },

    /**
     * Use up the consent of this session: true when one was given within
     * CONSENT_MAX_AGE_SECONDS. Either way the consent is cleared, so one confirmation starts
     * at most one authorization.
     */
    async takeConsent(idHash: string): Promise<boolean> {
      const since = new Date(now() - CONSENT_MAX_AGE_SECONDS * 1000);
      const taken = await db
        .update(sessions)
        .set({ partnerConsentAt: null })
        .where(
          and(
            eq(sessions.idHash, idHash),
            isNotNull(sessions.partnerConsentAt),
            gt(sessions.partnerConsentAt, since),
          ),
        )
        .returning({ idHash: sessions.idHash });
      if (taken.length === 0) {
        await db
          .update(sessions)
          .set({ partnerConsentAt: null })
          .where(eq(sessions.idHash, idHash));
      }
      return taken.length === 1;
    },
  };
}
