/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * The pages: sign-in and sign-out, `/settings` (with API token regeneration), `/connect`,
 * `/authorized`, `/auth-error`, and the stylesheet. Routes stay thin: read the session, check
 * the form's CSRF token, call a service, render.
 *
 * @see ../../../shared/DESIGN.md "Routes outside the API base", "Security invariants" 5
 * @see ../../../shared/spec/external-api-and-partner-flow.md §4.5, §7.2
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { listAuditEvents } from '../audit/audit-log.ts';
import { randomBase64Url, safeEqual } from '../platform/crypto.ts';
import type { Services } from '../services.ts';
import { pageCsp } from './content-security-policy.ts';
import { cookieNames, cookieOptions } from './cookies.ts';
import type { PartnerPort } from './partner-port.ts';
import { AuthErrorPage, isAuthErrorReason } from './pages/auth-error-page.tsx';
import { AuthorizedPage } from './pages/authorized-page.tsx';
import { ConnectPage } from './pages/connect-page.tsx';
import { LoginPage } from './pages/login-page.tsx';
import { SettingsPage } from './pages/settings-page.tsx';
import { STYLESHEET } from './pages/stylesheet.ts';
import { sendFormExpired, sendNotAllowed } from './refusal-pages.tsx';
import { sendPage } from './render.ts';
import type { WebSession } from './session-store.ts';
import {
  clearSessionCookie,
  csrfOk,
  readSession,
  redirectToLogin,
  safeNext,
} from './web-session.ts';

export interface WebRoutesOptions {
  services: Services;
  partner: PartnerPort;
  /** Whether text from `/auth-error?missing=…` is a capability as the catalog words it. */
  isKnownCapability: (words: string) => boolean;
}

/** Lifetime of the sign-in form's CSRF cookie (seconds). */
const LOGIN_CSRF_MAX_AGE_SECONDS = 3600;

const HtmlPage = Type.String({ description: 'An HTML page (text/html).' });
const Redirect = Type.String({ description: 'Redirect; see Location.' });
const FormField = (maxLength: number) => Type.Optional(Type.String({ maxLength }));

// `next` is length-checked by safeNext, so an overlong one is ignored rather than refused.
const LoginQuery = Type.Object({ next: FormField(4096) });
const LoginBody = Type.Object({
  email: FormField(1000),
  password: FormField(1024),
  csrf: FormField(100),
  next: FormField(4096),
});
const CsrfBody = Type.Object({ csrf: FormField(100) });
const SettingsQuery = Type.Object({ done: FormField(32) });
/** Confirmations `/settings?done=…` can show; anything else shows nothing. */
const DONE_NOTICES: Record<string, string> = {
  disconnected: 'Your provider account is disconnected and the stored access is deleted.',
  'not-connected': 'Your provider account was not connected; nothing changed.',
};
const ConnectQuery = Type.Object({ retry: FormField(10) });
const AuthErrorQuery = Type.Object({
  reason: FormField(32),
  missing: Type.Optional(
    Type.Union([
      Type.String({ maxLength: 200 }),
      Type.Array(Type.String({ maxLength: 200 }), { maxItems: 20 }),
    ]),
  ),
});

/**
 * Register the pages. Every page that needs a session sends a visitor without one to
 * `/login?next=…`; every state-changing form is checked against the session's CSRF token.
 */
export async function webRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { services, partner } = opts;
  const { isProduction } = services.config;
  const names = cookieNames(isProduction);

  /** The session, or a redirect to /login that brings the visitor back to `next`. */
  async function sessionOr(request: FastifyRequest, reply: FastifyReply, next: string) {
    const session = await readSession(request, services);
    if (!session) {
      if (request.cookies[names.session]) clearSessionCookie(reply, services);
      redirectToLogin(reply, next);
    }
    return session;
  }

  app.get(
    '/assets/portico.css',
    { schema: { response: { 200: Type.String({ description: 'The stylesheet.' }) } } },
    async (_request, reply) =>
      reply
        .type('text/css; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .send(STYLESHEET),
  );

  app.get('/', { schema: { response: { 302: Redirect } } }, async (_request, reply) =>
    reply.redirect('/settings', 302),
  );

  // ---- Sign-in -------------------------------------------------------------------------

  /** The sign-in form's double-submit token: reuse the cookie's, or mint one. */
  function loginCsrf(request: FastifyRequest, reply: FastifyReply): string {
    const existing = request.cookies[names.loginCsrf];
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const token = randomBase64Url(32);
    reply.setCookie(
      names.loginCsrf,
      token,
      cookieOptions(isProduction, LOGIN_CSRF_MAX_AGE_SECONDS),
    );
    return token;
  }

  app.get<{ Querystring: Static<typeof LoginQuery> }>(
    '/login',
    { schema: { querystring: LoginQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const next = safeNext(request.query.next);
      if (await readSession(request, services)) return reply.redirect(next ?? '/settings', 302);
      return sendPage(reply, <LoginPage csrfToken={loginCsrf(request, reply)} next={next} />);
    },
  );

  app.post<{ Body: Static<typeof LoginBody> }>(
    '/login',
    {
      schema: {
        body: LoginBody,
        response: { 303: Redirect, 401: HtmlPage, 403: HtmlPage },
      },
    },
    async (request, reply) => {
      const { email, password, csrf } = request.body;
      const next = safeNext(request.body.next);
      const cookie = request.cookies[names.loginCsrf];
      // Login CSRF: a cross-site form cannot read our cookie, so it cannot send a match.
      if (!cookie || !csrf || !safeEqual(cookie, csrf)) {
        return sendPage(
          reply,
          <LoginPage
            csrfToken={loginCsrf(request, reply)}
            next={next}
            notice="The sign-in form had expired. Please sign in again."
          />,
          403,
        );
      }
      const user =
        email && password ? await services.accounts.authenticatePassword(email, password) : null;
      if (!user) {
        request.log.info('sign-in refused');
        return sendPage(
          reply,
          <LoginPage csrfToken={cookie} next={next} email={email ?? ''} failed />,
          401,
        );
      }
      // A new session id at every sign-in (no session fixation); an old session here ends.
      const previous = await readSession(request, services);
      if (previous) await services.sessions.destroy(previous.idHash);
      const { sessionId } = await services.sessions.create(user.userId);
      reply.setCookie(
        names.session,
        sessionId,
        cookieOptions(isProduction, services.config.SESSION_TTL_SECONDS),
      );
      reply.clearCookie(names.loginCsrf, cookieOptions(isProduction, 0));
      request.log.info({ userId: user.userId }, 'signed in');
      return reply.redirect(next ?? '/settings', 303);
    },
  );

  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/logout',
    { schema: { body: CsrfBody, response: { 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = await readSession(request, services);
      if (!session) {
        clearSessionCookie(reply, services);
        return reply.redirect('/login', 303);
      }
      if (!csrfOk(session, request.body.csrf)) return sendFormExpired(reply, session);
      await services.sessions.destroy(session.idHash);
      clearSessionCookie(reply, services);
      return reply.redirect('/login', 303);
    },
  );

  // ---- Settings ------------------------------------------------------------------------

  async function renderSettings(
    request: FastifyRequest,
    reply: FastifyReply,
    session: WebSession,
    extra: { newToken?: string; notice?: string } = {},
  ) {
    const [portal, connection, auditEvents] = await Promise.all([
      services.accounts.showPortal(session.portalCode),
      partner.connectionSummary(session.portalId).catch((err: unknown) => {
        request.log.error({ err }, 'connection summary failed');
        return null;
      }),
      listAuditEvents(services.storage.db, session.portalId, { limit: 20 }),
    ]);
    return sendPage(
      reply,
      <SettingsPage
        portal={{ code: portal.portalCode, name: portal.name }}
        user={{ id: session.userId, email: session.email, isMainAdmin: session.isMainAdmin }}
        csrfToken={session.csrfToken}
        token={portal.token}
        newToken={extra.newToken}
        connection={connection}
        auditEvents={auditEvents}
        userEmails={new Map(portal.users.map((u) => [String(u.userId), u.email]))}
        notice={extra.notice}
      />,
    );
  }

  app.get<{ Querystring: Static<typeof SettingsQuery> }>(
    '/settings',
    { schema: { querystring: SettingsQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = await sessionOr(request, reply, '/settings');
      if (!session) return reply;
      const done = request.query.done;
      const notice = done && Object.hasOwn(DONE_NOTICES, done) ? DONE_NOTICES[done] : undefined;
      return renderSettings(request, reply, session, notice ? { notice } : {});
    },
  );

  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/settings/token',
    { schema: { body: CsrfBody, response: { 200: HtmlPage, 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = await readSession(request, services);
      if (!session) return redirectToLogin(reply, '/settings', 303);
      if (!csrfOk(session, request.body.csrf)) return sendFormExpired(reply, session);
      if (!session.isMainAdmin) {
        return sendNotAllowed(
          reply,
          session,
          'Only the main administrator of the portal can regenerate the API token.',
        );
      }
      const { token } = await services.accounts.regenerateToken({
        portalCode: session.portalCode,
        actor: { type: 'user', id: String(session.userId) },
      });
      request.log.info({ userId: session.userId }, 'API token regenerated from settings');
      // Answered in place (no redirect): the token exists only in this one response. The form's
      // CSRF token is spent, so reloading this page cannot regenerate a second time.
      const csrfToken = await services.sessions.rotateCsrf(session.idHash);
      return renderSettings(request, reply, { ...session, csrfToken }, { newToken: token });
    },
  );

  // ---- Connect and the landing pages of the flow ------------------------------------------

  app.get<{ Querystring: Static<typeof ConnectQuery> }>(
    '/connect',
    { schema: { querystring: ConnectQuery, response: { 200: HtmlPage, 302: Redirect } } },
    async (request, reply) => {
      const session = await sessionOr(request, reply, '/connect');
      if (!session) return reply;
      // The consent form's submission ends in a redirect to the provider; CSP form-action
      // applies to that redirect too, so this page allows the provider's origin.
      reply.header('content-security-policy', pageCsp(isProduction, providerOrigin(partner)));
      return sendPage(
        reply,
        <ConnectPage
          email={session.email}
          csrfToken={session.csrfToken}
          refused={request.query.retry === 'consent'}
        />,
      );
    },
  );

  app.get('/authorized', { schema: { response: { 200: HtmlPage } } }, async (_request, reply) =>
    sendPage(reply, <AuthorizedPage />),
  );

  app.get<{ Querystring: Static<typeof AuthErrorQuery> }>(
    '/auth-error',
    {
      // A mangled query still lands on a (generic) page rather than a JSON error.
      attachValidation: true,
      schema: { querystring: AuthErrorQuery, response: { 200: HtmlPage } },
    },
    async (request, reply) => {
      const query = request.validationError ? {} : request.query;
      const reason = isAuthErrorReason(query.reason) ? query.reason : null;
      // Only capabilities worded by our catalog are shown: the query cannot be used to put
      // arbitrary text on the page.
      const given = query.missing;
      const missing =
        reason === 'permission'
          ? [...new Set(Array.isArray(given) ? given : given ? [given] : [])].filter(
              opts.isKnownCapability,
            )
          : [];
      return sendPage(reply, <AuthErrorPage reason={reason} missingCapabilities={missing} />);
    },
  );
}

/** The origin of the provider's authorization dialog (for CSP form-action on /connect). */
function providerOrigin(partner: PartnerPort): string | null {
  try {
    return new URL(partner.authorizationUrl('0')).origin;
  } catch {
    return null;
  }
}
