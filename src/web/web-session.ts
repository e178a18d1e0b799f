/**
 * Per-request helpers of the pages: the signed-in session from its cookie, the CSRF check, and
 * the `next` path after sign-in.
 *
 * @see ../../../shared/DESIGN.md "Security invariants" 5
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../platform/crypto.ts';
import type { Services } from '../services.ts';
import { clearedCookieOptions, cookieNames } from './cookies.ts';
import type { WebSession } from './session-store.ts';

/** The session of this request, or null (no cookie, unknown or expired). */
export async function readSession(
  request: FastifyRequest,
  services: Services,
): Promise<WebSession | null> {
  const id = request.cookies[cookieNames(services.config.isProduction).session];
  if (!id) return null;
  return services.sessions.find(id);
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

/** Remove the session cookie (sign-out, or a cookie whose session has ended). */
export function clearSessionCookie(reply: FastifyReply, services: Services): void {
  const { isProduction } = services.config;
  reply.clearCookie(cookieNames(isProduction).session, clearedCookieOptions(isProduction));
}
