/**
 * Per-request helpers of the pages: the signed-in session from its cookie, the CSRF check, and
 * the `next` path after sign-in. Route plugins receive a `PageSessions` (the session store and
 * the cookie rules), never the whole services bag.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html#synchronizer-token-pattern
 * @see docs/architecture.md "browser/"
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../platform/crypto.ts';
import { clearedCookieOptions, cookieNames, type CookieNames } from './cookies.ts';
import type { SessionStore, WebSession } from './session-store.ts';

/** The browser sessions as the page routes use them. */
export interface PageSessions {
  /** The session table (create, destroy, CSRF rotation, consent). */
  readonly store: SessionStore;
  readonly isProduction: boolean;
  /** The cookie names of this mode (`__Host-` prefixed in production). */
  readonly names: CookieNames;
  /** The session of this request, or null (no cookie, unknown or expired). */
  read(request: FastifyRequest): Promise<WebSession | null>;
  /** Remove the session cookie (sign-out, or a cookie whose session has ended). */
  clearCookie(reply: FastifyReply): void;
  /**
   * Keep `value` server-side for this session's next page only (a POST-redirect-GET's result,
   * such as a new API token); never in a URL. No-op without a session cookie.
   */
  stashOnce(request: FastifyRequest, value: string): Promise<void>;
  /** The value {@link PageSessions.stashOnce} kept, once; null afterwards or when none. */
  takeOnce(request: FastifyRequest): Promise<string | null>;
}

export function createPageSessions(store: SessionStore, isProduction: boolean): PageSessions {
  const names = cookieNames(isProduction);
  return {
    store,
    isProduction,
    names,
    async read(request) {
      const id = request.cookies[names.session];
      return id ? store.find(id) : null;
    },
    clearCookie(reply) {
      reply.clearCookie(names.session, clearedCookieOptions(isProduction));
    },
    async stashOnce(request, value) {
      const id = request.cookies[names.session];
      if (id) await store.oneTime.stash(id, value);
    },
    async takeOnce(request) {
      const id = request.cookies[names.session];
      return id ? store.oneTime.take(id) : null;
    },
  };
}

/**
 * The synchronizer-token check of a state-changing form: the submitted token must equal the
 * session's, compared in constant time. A missing token fails.
 */
export function csrfOk(session: WebSession, submitted: string | undefined): boolean {
  return typeof submitted === 'string' && safeEqual(submitted, session.csrfToken);
}

/**
 * A `next` value is accepted only as a same-site path: one leading `/`, not `//` or `/\`
 * (which browsers read as another host), printable ASCII, no more than 512 characters.
 *
 * @returns the path, or null when the value is absent or not acceptable.
 */
export function safeNext(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 512) return null;
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(value) && !value.includes('\\') ? value : null;
}

/** Send a visitor without a session to `/login`, to come back to `next` afterwards. */
export function redirectToLogin(reply: FastifyReply, next: string, status = 302): FastifyReply {
  return reply.redirect(`/login?${new URLSearchParams({ next }).toString()}`, status);
}
