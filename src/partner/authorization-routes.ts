/**
 * The browser side of the authorization-code flow: consent → start → (provider) → callback,
 * and disconnect.
 *
 * - `POST /api/auth/partner/consent`: the `/connect` form (CSRF-checked) records a short-lived
 *   consent in the session and hands over to start.
 * - `GET /api/auth/partner/start`: needs a session and that consent; mints the state, sets the
 *   state cookie and redirects to the provider's dialog.
 * - `GET /api/auth/partner/callback`: the registered redirect URI; spec §4.4 step by step.
 * - `POST /api/auth/partner/disconnect`: the user's revocation path (CSRF-checked).
 *
 * Invariants: the authorization code is handed to the partner service and nowhere else (not
 * logged, stored or echoed); the state leaves the server only in the cookie and the provider
 * redirect; the portal always comes from the session, never from the query.
 *
 * @see ../../../shared/spec/external-api-and-partner-flow.md §4.3, §4.4, §5.2, §7.2
 * @see https://www.rfc-editor.org/rfc/rfc9700 §2.1 (CSRF protection with state), §4.7
 * @see ../../../shared/DESIGN.md "Cookies", "Security invariants" 1, 2, 5
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { randomBase64Url, safeEqual } from '../platform/crypto.ts';
import type { Services } from '../services.ts';
import { cookieNames, cookieOptions, STATE_COOKIE_MAX_AGE_SECONDS } from '../web/cookies.ts';
import type { AuthErrorReason } from '../web/pages/auth-error-page.tsx';
import type { PartnerPort } from '../web/partner-port.ts';
import { sendFormExpired } from '../web/refusal-pages.tsx';
import { csrfOk, readSession, redirectToLogin } from '../web/web-session.ts';

/** Random bytes in a state value (RFC 9700 asks for enough entropy; 32 bytes = 256 bits). */
export const STATE_BYTES = 32;

export interface AuthorizationRoutesOptions {
  services: Services;
  partner: PartnerPort;
}

const Redirect = Type.String({ description: 'Redirect; see Location.' });
const HtmlPage = Type.String({ description: 'An HTML page (text/html).' });
const CsrfBody = Type.Object({ csrf: Type.Optional(Type.String({ maxLength: 100 })) });
const CallbackQuery = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 512 })),
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  error: Type.Optional(Type.String({ maxLength: 200 })),
});

/**
 * `/auth-error?reason=…`, plus for `permission` one `missing` per capability (its plain words
 * from the catalog; the page shows only words the catalog knows).
 */
function authError(reason: AuthErrorReason, missing: readonly string[] = []): string {
  const query = new URLSearchParams({ reason });
  for (const words of missing) query.append('missing', words);
  return `/auth-error?${query.toString()}`;
}

/**
 * Register consent, start, callback and disconnect. The pages they redirect to are in
 * `web/web-routes.tsx`.
 */
export async function authorizationRoutes(
  app: FastifyInstance,
  opts: AuthorizationRoutesOptions,
): Promise<void> {
  const { services, partner } = opts;
  const { isProduction } = services.config;
  const names = cookieNames(isProduction);

  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/api/auth/partner/consent',
    { schema: { body: CsrfBody, response: { 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = await readSession(request, services);
      if (!session) return redirectToLogin(reply, '/connect', 303);
      if (!csrfOk(session, request.body.csrf)) return sendFormExpired(reply, session);
      await services.sessions.recordConsent(session.idHash);
      return reply.redirect('/api/auth/partner/start', 303);
    },
  );

  app.get(
    '/api/auth/partner/start',
    { schema: { response: { 302: Redirect } } },
    async (request, reply) => {
      const session = await readSession(request, services);
      if (!session) return reply.redirect('/connect', 302);
      // Start is a GET: the recent, single-use consent is what shows that the signed-in user
      // asked for this (a link from another site cannot have posted the /connect form).
      if (!(await services.sessions.takeConsent(session.idHash))) {
        return reply.redirect('/connect?retry=consent', 302);
      }
      const state = randomBase64Url(STATE_BYTES);
      let location: string;
      try {
        location = partner.authorizationUrl(state);
      } catch (err) {
        // The provider settings are missing: an administrator's problem, not the user's.
        request.log.error({ err }, 'cannot build the authorization address');
        return reply.redirect(authError('config'), 302);
      }
      reply.setCookie(
        names.state,
        state,
        cookieOptions(isProduction, STATE_COOKIE_MAX_AGE_SECONDS),
      );
      request.log.info({ userId: session.userId }, 'authorization started');
      return reply.redirect(location, 302);
    },
  );

  app.get<{ Querystring: Static<typeof CallbackQuery> }>(
    '/api/auth/partner/callback',
    {
      // Malformed queries still reach the handler, so that the state cookie is cleared on
      // every path; they are then treated as a missing state.
      attachValidation: true,
      schema: { querystring: CallbackQuery, response: { 302: Redirect } },
    },
    async (request, reply) => callback(request, reply),
  );

  /** Spec §4.4, in its order. */
  async function callback(
    request: FastifyRequest<{ Querystring: Static<typeof CallbackQuery> }>,
    reply: FastifyReply,
  ): Promise<FastifyReply> {
    // 1. Read state and code from the query, the expected state from the cookie.
    const valid = request.validationError === undefined;
    const state = valid ? request.query.state : undefined;
    const code = valid ? request.query.code : undefined;
    const error = valid ? request.query.error : undefined;
    const expected = request.cookies[names.state];
    // 2. Clear the state cookie at once, before any comparison, whatever happens next: a
    // state is good for one callback only.
    reply.clearCookie(names.state, cookieOptions(isProduction, 0));

    // The user cancelled (or the provider refused) at the dialog: no code to exchange.
    if (error === 'access_denied') {
      request.log.info('authorization cancelled at the provider');
      return reply.redirect(authError('cancelled'), 302);
    }
    if (error !== undefined) {
      request.log.warn('the provider answered the authorization with an error');
      return reply.redirect(authError('provider'), 302);
    }
    // 3. Anything missing: reject, no exchange.
    if (!code || !state || !expected) {
      request.log.info(
        { hasCode: Boolean(code), hasState: Boolean(state), hasCookie: Boolean(expected) },
        'authorization callback refused: state missing',
      );
      return reply.redirect(authError('state'), 302);
    }
    // 4. Constant-time comparison; a mismatch ends here, no exchange.
    if (!safeEqual(state, expected)) {
      request.log.warn('authorization callback refused: state mismatch');
      return reply.redirect(authError('state'), 302);
    }
    // The connection belongs to the portal of the signed-in user who started the flow.
    const session = await readSession(request, services);
    if (!session) {
      request.log.info('authorization callback refused: no session');
      return reply.redirect(authError('state'), 302);
    }
    // 5–6. Exchange and store (the partner service); the code goes nowhere else.
    let result;
    try {
      result = await partner.completeAuthorization({
        portalId: session.portalId,
        userId: session.userId,
        authorizationCode: code,
        requestId: request.id,
      });
    } catch (err) {
      request.log.error({ err }, 'completing the authorization failed');
      return reply.redirect(authError('storage'), 302);
    }
    // 7. Only after both the exchange and the storage succeeded.
    if (result.ok) {
      request.log.info({ portalId: session.portalId }, 'provider account connected');
      return reply.redirect('/authorized', 302);
    }
    request.log.info({ reason: result.reason }, 'authorization not completed');
    if (result.reason === 'permission') {
      return reply.redirect(authError('permission', result.missingCapabilities), 302);
    }
    return reply.redirect(authError(result.reason), 302);
  }

  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/api/auth/partner/disconnect',
    { schema: { body: CsrfBody, response: { 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = await readSession(request, services);
      if (!session) return redirectToLogin(reply, '/settings', 303);
      if (!csrfOk(session, request.body.csrf)) return sendFormExpired(reply, session);
      // The one revocation cleanup (issue 4): ciphertext deleted, inactive, audit record with
      // this user as the actor, outbound calls stopped. Idempotent.
      const { revoked } = await partner.revokeConnection(session.portalId, {
        actor: { type: 'user', id: String(session.userId) },
        reason: 'user disconnected',
        requestId: request.id,
      });
      request.log.info({ portalId: session.portalId, revoked }, 'disconnect requested by user');
      return reply.redirect(`/settings?done=${revoked ? 'disconnected' : 'not-connected'}`, 303);
    },
  );
}
