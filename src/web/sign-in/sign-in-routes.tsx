/** @jsxRuntime automatic */
/** @jsxImportSource preact */
/**
 * Sign-in and sign-out, and the invitation links' page (invitation-routes.tsx). The sign-in form is protected by a double-submit token (there is no
 * session yet to bind it to), checked by the area's guard (page-area.ts); a new session id is
 * minted at every sign-in.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Session_Management_Cheat_Sheet.html#renew-the-session-id-after-any-privilege-level-change
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { clearedCookieOptions, cookieOptions } from '../../browser/cookies.ts';
import { sendPage } from '../../browser/render.ts';
import { safeNext } from '../../browser/web-session.ts';
import { noteRequestError } from '../../platform/access-log.ts';
import { guardPortalArea, signInFormToken } from '../page-area.ts';
import { LoginPage } from './login-page.tsx';
import { invitationFormExpired, invitationRoutes, type SignIn } from './invitation-routes.tsx';
import { installSignInLimits } from './sign-in-limits.ts';
import { CsrfBody, FormField, HtmlPage, Redirect, type WebRoutesOptions } from '../web-options.ts';

// `next` is length-checked by safeNext, so an overlong one is ignored rather than refused.
const LoginQuery = Type.Object({ next: FormField(4096) });
const LoginBody = Type.Object({
  email: FormField(1000),
  password: FormField(1024),
  csrf: FormField(100),
  next: FormField(4096),
});

/** The login page's words for a refused attempt (the wait, rounded up to whole minutes). */
function tooManyNotice(retryAfterSeconds: number): string {
  const wait =
    retryAfterSeconds < 60
      ? `${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}`
      : `${Math.ceil(retryAfterSeconds / 60)} minute${retryAfterSeconds > 60 ? 's' : ''}`;
  return `Too many failed sign-in attempts. Please wait ${wait} and try again.`;
}

export async function signInRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const { sessions, accounts } = opts;
  const { isProduction, names } = sessions;
  guardPortalArea(app, sessions, {
    home: '/login',
    // Login CSRF: the double-submit token had expired (or the form came from another site).
    signInExpired: (request, reply) =>
      invitationFormExpired(request, reply) ??
      sendPage(
        reply,
        <LoginPage
          csrfToken={signInFormToken(sessions, request, reply)}
          next={safeNext((request.body as { next?: unknown }).next)}
          notice="The sign-in form had expired. Please sign in again."
        />,
        403,
      ),
  });
  const limits = await installSignInLimits(app, opts.signInLimits);

  /**
   * Start a session for a person who has just proven who they are (a password, an invitation
   * link): a new session id at every sign-in (no session fixation); an old session here ends.
   */
  const signIn: SignIn = async (request, reply, userId) => {
    const previous = await sessions.read(request);
    if (previous) await sessions.store.destroy(previous.idHash);
    const { sessionId } = await sessions.store.create(userId);
    reply.setCookie(names.session, sessionId, cookieOptions(isProduction, opts.sessionTtlSeconds));
    reply.clearCookie(names.loginCsrf, cookieOptions(isProduction, 0));
    request.log.info({ userId }, 'signed in');
  };
  invitationRoutes(app, opts, { limits, signIn });

  app.get<{ Querystring: Static<typeof LoginQuery> }>(
    '/login',
    {
      config: { page: { public: true } },
      schema: { querystring: LoginQuery, response: { 200: HtmlPage, 302: Redirect } },
    },
    async (request, reply) => {
      const next = safeNext(request.query.next);
      if (await sessions.read(request)) return reply.redirect(next ?? '/settings', 302);
      return sendPage(
        reply,
        <LoginPage csrfToken={signInFormToken(sessions, request, reply)} next={next} />,
      );
    },
  );

  app.post<{ Body: Static<typeof LoginBody> }>(
    '/login',
    {
      config: { page: { signInForm: true } },
      schema: {
        body: LoginBody,
        response: { 303: Redirect, 401: HtmlPage, 403: HtmlPage, 429: HtmlPage },
      },
    },
    async (request, reply) => {
      const { email, password } = request.body;
      const next = safeNext(request.body.next);
      // The guard checked it against the form's token.
      const cookie = signInFormToken(sessions, request, reply);
      // Before any password hashing: a refused attempt costs no scrypt work.
      const refusal = await limits.refusal(request, email ?? '');
      if (refusal) {
        // Said on the request's one access line (code), not on a line of its own.
        noteRequestError(request, { code: 'sign_in_rate_limited' });
        reply.header('retry-after', String(refusal.retryAfterSeconds));
        return sendPage(
          reply,
          <LoginPage
            csrfToken={cookie}
            next={next}
            email={email ?? ''}
            refused={tooManyNotice(refusal.retryAfterSeconds)}
          />,
          429,
        );
      }
      const user = email && password ? await accounts.authenticatePassword(email, password) : null;
      if (!user) {
        await limits.countFailure(request, email ?? '');
        noteRequestError(request, { code: 'sign_in_refused' });
        return sendPage(
          reply,
          <LoginPage csrfToken={cookie} next={next} email={email ?? ''} failed />,
          401,
        );
      }
      await signIn(request, reply, user.userId);
      return reply.redirect(next ?? '/settings', 303);
    },
  );

  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/logout',
    {
      config: { page: { signOut: true } },
      schema: { body: CsrfBody, response: { 303: Redirect, 403: HtmlPage } },
    },
    async (request, reply) => {
      const session = request.pageSession;
      if (!session) {
        sessions.clearCookie(reply);
        reply.clearCookie(names.state, clearedCookieOptions(isProduction));
        return reply.redirect('/login', 303);
      }
      await sessions.store.destroy(session.idHash);
      sessions.clearCookie(reply);
      // A flow this session started ends with it (its state is bound to the session row, now
      // gone; the cookie goes too, so nothing of it is left in the browser).
      reply.clearCookie(names.state, clearedCookieOptions(isProduction));
      return reply.redirect('/login', 303);
    },
  );
}
