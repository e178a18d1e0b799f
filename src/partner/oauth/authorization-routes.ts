/**
 * The browser side of the authorization-code flow: consent → start → (provider) → callback,
 * and disconnect.
 *
 * - `POST /api/auth/partner/consent`: the `/connect` form (CSRF-checked) records a short-lived
 *   consent in the session and hands over to start.
 * - `GET /api/auth/partner/start`: needs a session and that consent; mints the state, sets the
 *   state cookie and redirects to the provider's dialog.
 * - `GET /api/auth/partner/callback`: the registered redirect URI, step by step.
 * - `POST /api/auth/partner/disconnect`: the user's revocation path (CSRF-checked).
 *
 * Invariants: the authorization code is handed to the partner service and nowhere else (not
 * logged, stored or echoed); the state leaves the server only in the cookie and the provider
 * redirect; the portal always comes from the session, never from the query.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-2.1 (CSRF protection with state)
 * @see docs/partner-connection.md "The callback, step by step"
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { cookieOptions, STATE_COOKIE_MAX_AGE_SECONDS } from '../../browser/cookies.ts';
import { pageErrorHandler } from '../../browser/error-pages.tsx';
import { sendFormExpired, sendNotAllowed } from '../../browser/refusal-pages.tsx';
import { csrfOk, redirectToLogin, type PageSessions } from '../../browser/web-session.ts';
import { randomBase64Url, safeEqual } from '../../platform/crypto.ts';
import { databaseErrorCode } from '../../platform/database-errors.ts';
import { authErrorLocation } from './authorization-outcome.ts';
import { validateAuthorizationResponse } from './authorization-response.ts';
import type { PartnerService } from '../partner-service.ts';

/** What a user other than an administrator is told by consent, start and disconnect. */
export const ONLY_MAIN_ADMIN =
  'Only an administrator of the portal can connect or disconnect the provider account. Nothing changed.';

/** Random bytes in a state value (RFC 9700 asks for enough entropy; 32 bytes = 256 bits). */
export const STATE_BYTES = 32;

export interface AuthorizationRoutesOptions {
  sessions: PageSessions;
  partner: Pick<
    PartnerService,
    'authorizationRequest' | 'completeAuthorization' | 'revokeConnection' | 'recordCancelledAttempt'
  >;
  /** Portico's public origin (APP_BASE_URL), named by the page when cookies went missing. */
  appBaseUrl: string;
}

const Redirect = Type.String({ description: 'Redirect; see Location.' });
const HtmlPage = Type.String({ description: 'An HTML page (text/html).' });
const CsrfBody = Type.Object({ csrf: Type.Optional(Type.String({ maxLength: 100 })) });
const DisconnectBody = Type.Object({
  csrf: Type.Optional(Type.String({ maxLength: 100 })),
  /** `yes` from the confirmation page; without it the user is sent there first. */
  confirm: Type.Optional(Type.String({ maxLength: 10 })),
});
const CallbackQuery = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 512 })),
  code: Type.Optional(Type.String({ maxLength: 4096 })),
  error: Type.Optional(Type.String({ maxLength: 200 })),
});

/**
 * Register consent, start, callback and disconnect. The pages they redirect to are in
 * `web/`.
 */
export async function authorizationRoutes(
  app: FastifyInstance,
  opts: AuthorizationRoutesOptions,
): Promise<void> {
  const { sessions, partner } = opts;
  const { isProduction, names } = sessions;
  // A person gets a page, never a JSON envelope, when a route of the flow fails.
  app.setErrorHandler(pageErrorHandler);

  app.post<{ Body: Static<typeof CsrfBody> }>(
    '/api/auth/partner/consent',
    { schema: { body: CsrfBody, response: { 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = await sessions.read(request);
      if (!session) return redirectToLogin(reply, '/connect', 303);
      if (!csrfOk(session, request.body.csrf)) return sendFormExpired(reply, session);
      if (!session.isAdmin) return sendNotAllowed(reply, session, ONLY_MAIN_ADMIN);
      await sessions.store.recordConsent(session.idHash);
      return reply.redirect('/api/auth/partner/start', 303);
    },
  );

  app.get(
    '/api/auth/partner/start',
    { schema: { response: { 302: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      // The answer sets the state cookie: no cache may keep it (RFC 9111 §5.2.2.5).
      reply.header('cache-control', 'no-store');
      const session = await sessions.read(request);
      if (!session) return reply.redirect('/connect', 302);
      if (!session.isAdmin) return sendNotAllowed(reply, session, ONLY_MAIN_ADMIN);
      // Start is a GET: the recent, single-use consent is what shows that the signed-in user
      // asked for this (a link from another site cannot have posted the /connect form).
      if (!(await sessions.store.takeConsent(session.idHash))) {
        return reply.redirect('/connect?retry=consent', 302);
      }
      const state = randomBase64Url(STATE_BYTES);
      let authorization: { url: string; codeVerifier: string | undefined };
      try {
        authorization = partner.authorizationRequest(state);
      } catch (err) {
        // The provider settings are missing: an administrator's problem, not the user's.
        request.log.error({ err }, 'cannot build the authorization address');
        return reply.redirect(authErrorLocation('config'), 302);
      }
      // The state is bound to this session too (its hash in the session row): a callback
      // completes only in the session that started the flow. The PKCE code verifier stays
      // server-side with it (sealed under the state); only its challenge is in the address.
      await sessions.store.bindOAuthState(session.idHash, state, authorization.codeVerifier);
      reply.setCookie(
        names.state,
        state,
        cookieOptions(isProduction, STATE_COOKIE_MAX_AGE_SECONDS),
      );
      request.log.info({ userId: session.userId }, 'authorization started');
      return reply.redirect(authorization.url, 302);
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
    async (request, reply) => {
      // The request's URL held the code (and clears the state cookie): never cached.
      reply.header('cache-control', 'no-store');
      try {
        return await callback(opts, request, reply);
      } catch (err) {
        // Every failure of the callback ends on a page, never a JSON error at the redirect URI:
        // a storage failure (reading the session, binding the state) is `storage`. The state
        // cookie was cleared before anything could throw. Not the error object: a driver error
        // quotes its query's parameters.
        request.log.error(
          { code: databaseErrorCode(err), error: err instanceof Error ? err.name : typeof err },
          'authorization callback failed',
        );
        return reply.redirect(authErrorLocation('storage'), 302);
      }
    },
  );

  app.post<{ Body: Static<typeof DisconnectBody> }>(
    '/api/auth/partner/disconnect',
    { schema: { body: DisconnectBody, response: { 303: Redirect, 403: HtmlPage } } },
    async (request, reply) => {
      const session = await sessions.read(request);
      if (!session) return redirectToLogin(reply, '/settings', 303);
      if (!csrfOk(session, request.body.csrf)) return sendFormExpired(reply, session);
      if (!session.isAdmin) return sendNotAllowed(reply, session, ONLY_MAIN_ADMIN);
      // A destructive action is confirmed on its own page first
      // (web/settings/confirm-routes.tsx), which says what stops working; a form without the
      // confirmation goes there.
      if (request.body.confirm !== 'yes') return reply.redirect('/settings/disconnect', 303);
      // The one revocation cleanup: ciphertext deleted, inactive, audit record with
      // this user as the actor, outbound calls stopped. Idempotent.
      const { revoked } = await partner.revokeConnection(session.portalId, {
        actor: { type: 'user', id: String(session.userId) },
        reason: 'disconnect',
        requestId: request.id,
        revokeAtProvider: true,
      });
      request.log.info({ portalId: session.portalId, revoked }, 'disconnect requested by user');
      return reply.redirect(`/settings?done=${revoked ? 'disconnected' : 'not-connected'}`, 303);
    },
  );
}

/** The callback, in the order of docs/partner-connection.md "The callback, step by step". */
async function callback(
  { sessions, partner }: AuthorizationRoutesOptions,
  request: FastifyRequest<{ Querystring: Static<typeof CallbackQuery> }>,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { isProduction, names } = sessions;
  // 1. The expected state from the cookie; 2. the cookie cleared at once, before any
  // comparison, whatever happens next: a state is good for one callback only.
  const expected = request.cookies[names.state];
  reply.clearCookie(names.state, cookieOptions(isProduction, 0));
  // 3–4. Validate the response (state compared in constant time); a failure ends here, no
  // exchange.
  const response = validateAuthorizationResponse(
    request.validationError === undefined ? request.query : null,
    expected,
  );
  if (!response.ok) {
    request.log.info({ reason: response.reason, why: response.why }, 'authorization refused');
    if (response.reason === 'cancelled')
      await recordCancelled(request, expected, sessions, partner);
    // No state cookie and no session cookie: the browser kept this site's cookies under another
    // address (signed in at 127.0.0.1, called back at localhost); the page says so.
    const cookiesMissing =
      response.reason === 'state' && expected === undefined && !request.cookies[names.session];
    return reply.redirect(
      authErrorLocation(response.reason, [], cookiesMissing ? { cause: 'cookies' } : {}),
      302,
    );
  }
  // 4. The connection belongs to the portal of the signed-in user who started the flow: the
  // session must be the one the state was bound to at start (signed out and another user
  // signed in on this browser meanwhile → refused). The validated state equals the cookie's.
  const session = await sessions.read(request);
  if (!session) {
    request.log.info('authorization callback refused: no session');
    return reply.redirect(authErrorLocation('state'), 302);
  }
  const binding =
    expected === undefined ? null : await sessions.store.takeOAuthState(session.idHash, expected);
  if (!binding) {
    request.log.info('authorization callback refused: the state belongs to another session');
    return reply.redirect(authErrorLocation('state'), 302);
  }
  // Only an administrator connects (checked at consent and start too; the session reads
  // the user's role afresh, so a demotion meanwhile is seen here).
  if (!session.isAdmin) {
    request.log.info(
      { userId: session.userId },
      'authorization callback refused: not an administrator',
    );
    return reply.redirect(authErrorLocation('not_admin'), 302);
  }
  // 5–6. Exchange and store; the code goes nowhere else.
  const result = await partner
    .completeAuthorization({
      portalId: session.portalId,
      userId: session.userId,
      authorizationCode: response.authorizationCode,
      codeVerifier: binding.codeVerifier,
      requestId: request.id,
    })
    .catch((err: unknown) => {
      request.log.error({ err }, 'completing the authorization failed');
      return { ok: false, reason: 'storage' } as const;
    });
  // 7. Only after both the exchange and the storage succeeded.
  if (result.ok) {
    request.log.info({ portalId: session.portalId }, 'provider account connected');
    return reply.redirect('/authorized', 302);
  }
  request.log.info({ reason: result.reason }, 'authorization not completed');
  const missing = result.reason === 'permission' ? result.missingCapabilities : [];
  return reply.redirect(authErrorLocation(result.reason, missing), 302);
}

/**
 * Audit a cancellation at the provider as `connection.cancelled`, but only for an attempt this
 * session started (the state in the answer matches the cookie and the session's binding): a
 * forged `?error=access_denied` link writes nothing.
 */
async function recordCancelled(
  request: FastifyRequest<{ Querystring: Static<typeof CallbackQuery> }>,
  expected: string | undefined,
  sessions: PageSessions,
  partner: AuthorizationRoutesOptions['partner'],
): Promise<void> {
  const state = request.validationError === undefined ? request.query.state : undefined;
  if (!expected || !state || !safeEqual(state, expected)) return;
  const session = await sessions.read(request);
  if (!session || !(await sessions.store.takeOAuthState(session.idHash, expected))) return;
  await partner.recordCancelledAttempt({
    portalId: session.portalId,
    userId: session.userId,
    requestId: request.id,
  });
}
