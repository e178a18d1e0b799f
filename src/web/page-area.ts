/**
 * The door of a page area. Every page area (a folder of src/web/: `/inbox`, `/settings`,
 * `/contacts`, the agents' desk…) is an encapsulated Fastify plugin that calls one of the two
 * guards below first; the guard's `preHandler` hook then runs before every route of the area,
 * after the query, params and body are validated, and:
 *
 * 1. resolves who is signed in once (the portal user's session, or the agent's), and sets it on
 *    the request ({@link signedIn}, {@link signedInAgent});
 * 2. without one: a page GET is redirected to the sign-in page (back to the page afterwards), a
 *    form post likewise with 303, a script's fragment or stream gets 401 with no body;
 * 3. for every unsafe method (POST, PUT, PATCH, DELETE), checks the form's `csrf` field against
 *    the session's synchronizer token (constant time), and sends the area's "form expired"
 *    answer when it does not match;
 * 4. in an area for the administrators only, answers anyone else with 403.
 *
 * A route changes this only through its `config.page` ({@link PageRouteRules}); handlers never
 * read the session cookie or compare tokens themselves. test/web/page-areas.test.ts walks every
 * route of the app and holds each to these rules.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html#synchronizer-token-pattern
 * @see https://fastify.dev/docs/latest/Reference/Encapsulation/
 * @see docs/decisions/0054-page-areas.md
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cookieOptions } from '../browser/cookies.ts';
import { sendFormExpired, sendNotAllowed } from '../browser/refusal-pages.tsx';
import type { AgentSession, WebSession } from '../browser/session-store.ts';
import { csrfOk, redirectToLogin, type PageSessions } from '../browser/web-session.ts';
import { randomBase64Url, safeEqual } from '../platform/crypto.ts';

/** What one route of a page area changes in its area's rules (`config.page`). */
export interface PageRouteRules {
  /** Open to anyone: the guard does nothing (a sign-in page, a page where errors land). */
  public?: true;
  /** Sign-out: runs without a session too (the handler sees none); with one, CSRF is checked. */
  signOut?: true;
  /**
   * The sign-in form: no session yet, so its token is the double-submit cookie's
   * ({@link signInFormToken}); a mismatch gets the area's `signInExpired` answer.
   */
  signInForm?: true;
  /** Fetched by a page's script (a fragment, an event stream): 401, empty, without a session. */
  fragment?: true;
  /**
   * Where sign-in brings the visitor back: default the request's path for a GET, the area's
   * home for a form post.
   */
  back?: string | ((request: FastifyRequest) => string);
  /**
   * A multipart form whose token arrives in the stream, before its file: the handler reads the
   * parts and checks the token with {@link streamedFormTokenOk} before anything is stored. A
   * post that is not multipart is checked by the guard as any other.
   */
  streamedCsrf?: true;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's exceptions to its page area's rules (src/web/page-area.ts). */
    page?: PageRouteRules;
  }
  interface FastifyRequest {
    /** The portal user signed in, set by a portal page area's guard; null elsewhere. */
    pageSession: WebSession | null;
    /** The agent signed in, set by the agents' desk guard; null elsewhere. */
    agentSession: AgentSession | null;
  }
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The sign-in form's double-submit token: 32 random bytes, base64url. */
const SIGN_IN_TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** Lifetime of the sign-in form's CSRF cookie (seconds). */
const SIGN_IN_TOKEN_MAX_AGE_SECONDS = 3600;

/** A portal page area: its home page (where a refused form's sign-in returns to) and role. */
export interface PortalArea {
  /** The area's page, e.g. `/contacts`. */
  home: string;
  /** Set for an area of the administrators only: the 403 page's words for anyone else. */
  adminOnly?: string;
  /** The sign-in form's answer to a stale double-submit token (the sign-in area only). */
  signInExpired?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply;
}

/** The agents' desk: its answer to a form whose token does not match the agent's session. */
export interface AgentArea {
  formExpired: (
    request: FastifyRequest,
    reply: FastifyReply,
    agent: AgentSession,
  ) => Promise<FastifyReply> | FastifyReply;
  signInExpired: (request: FastifyRequest, reply: FastifyReply) => FastifyReply;
}

/**
 * The portal user of a request of a portal page area (set by its guard).
 *
 * @throws Error when called outside a guarded route: a programming error, never a visitor's.
 */
export function signedIn(request: FastifyRequest): WebSession {
  if (!request.pageSession) throw new Error(`${request.url}: not behind a portal page guard`);
  return request.pageSession;
}

/**
 * The agent of a request of the agents' desk (set by its guard).
 *
 * @throws Error when called outside a guarded route.
 */
export function signedInAgent(request: FastifyRequest): AgentSession {
  if (!request.agentSession) throw new Error(`${request.url}: not behind the agents' guard`);
  return request.agentSession;
}

/**
 * Guard every route of the portal page area `app` (call it first in the area's plugin).
 *
 * @see docs/architecture.md "web/"
 */
export function guardPortalArea(app: FastifyInstance, sessions: PageSessions, area: PortalArea) {
  decorate(app);
  app.addHook('preHandler', async function portalPageGuard(request, reply) {
    const rules = request.routeOptions.config.page ?? {};
    if (rules.public) return;
    if (rules.signInForm) {
      if (signInFormTokenOk(sessions, request)) return;
      if (!area.signInExpired) throw new Error(`${request.url}: a sign-in form needs its answer`);
      return area.signInExpired(request, reply);
    }
    const session = await sessions.read(request);
    if (!session) {
      if (rules.signOut) return;
      if (rules.fragment) return reply.code(401).type('text/html; charset=utf-8').send('');
      if (request.cookies[sessions.names.session]) sessions.clearCookie(reply);
      const unsafe = UNSAFE_METHODS.has(request.method);
      return redirectToLogin(reply, backOf(request, rules, area.home), unsafe ? 303 : 302);
    }
    request.pageSession = session;
    if (needsToken(request, rules) && !csrfOk(session, formToken(request.body))) {
      return sendFormExpired(reply, session);
    }
    if (area.adminOnly && !session.isAdmin) {
      return sendNotAllowed(reply, session, area.adminOnly);
    }
  });
}

/**
 * Guard every route of the agents' desk: an agent's session only (a portal user's is none);
 * without one, the agent sign-in page.
 */
export function guardAgentArea(app: FastifyInstance, sessions: PageSessions, area: AgentArea) {
  decorate(app);
  app.addHook('preHandler', async function agentPageGuard(request, reply) {
    const rules = request.routeOptions.config.page ?? {};
    if (rules.public) return;
    if (rules.signInForm) {
      return signInFormTokenOk(sessions, request) ? undefined : area.signInExpired(request, reply);
    }
    const id = request.cookies[sessions.names.session];
    const agent = id ? await sessions.store.findAgent(id) : null;
    if (!agent) {
      if (rules.signOut) return;
      return reply.redirect('/agent/login', 302);
    }
    request.agentSession = agent;
    const token = formToken(request.body);
    if (needsToken(request, rules) && !(token && safeEqual(token, agent.csrfToken))) {
      return area.formExpired(request, reply, agent);
    }
  });
}

/**
 * The sign-in form's double-submit token: the cookie's when it holds one, else a new one set
 * in the cookie (an hour).
 */
export function signInFormToken(
  sessions: PageSessions,
  request: FastifyRequest,
  reply: FastifyReply,
): string {
  const existing = request.cookies[sessions.names.loginCsrf];
  if (existing && SIGN_IN_TOKEN.test(existing)) return existing;
  const token = randomBase64Url(32);
  reply.setCookie(
    sessions.names.loginCsrf,
    token,
    cookieOptions(sessions.isProduction, SIGN_IN_TOKEN_MAX_AGE_SECONDS),
  );
  return token;
}

/**
 * The token of a multipart form, read from its stream by the handler of a `streamedCsrf`
 * route: true when it matches the signed-in session's.
 */
export function streamedFormTokenOk(request: FastifyRequest, submitted: string | undefined) {
  return csrfOk(signedIn(request), submitted);
}

/** Login CSRF: a cross-site form cannot read our cookie, so it cannot send a match. */
function signInFormTokenOk(sessions: PageSessions, request: FastifyRequest): boolean {
  const cookie = request.cookies[sessions.names.loginCsrf];
  const submitted = formToken(request.body);
  return !!cookie && !!submitted && safeEqual(cookie, submitted);
}

function needsToken(request: FastifyRequest, rules: PageRouteRules): boolean {
  if (!UNSAFE_METHODS.has(request.method)) return false;
  const multipart = /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');
  return !(rules.streamedCsrf && multipart);
}

function formToken(body: unknown): string | undefined {
  const value = (body as { csrf?: unknown } | null | undefined)?.csrf;
  return typeof value === 'string' ? value : undefined;
}

function backOf(request: FastifyRequest, rules: PageRouteRules, home: string): string {
  if (typeof rules.back === 'function') return rules.back(request);
  if (rules.back) return rules.back;
  return UNSAFE_METHODS.has(request.method) ? home : (request.url.split('?')[0] ?? home);
}

function decorate(app: FastifyInstance): void {
  if (!app.hasRequestDecorator('pageSession')) app.decorateRequest('pageSession', null);
  if (!app.hasRequestDecorator('agentSession')) app.decorateRequest('agentSession', null);
}
