/**
 * The token endpoint, `POST /{version}/oauth/access_token` (form body), which the app calls from
 * its server with its `client_id` and `client_secret`:
 *
 * - code exchange (`code`, `redirect_uri`): a short-lived user token (2 hours) for a code the
 *   dialog issued. A code works once, within 60 s, and only with the exact `redirect_uri` of its
 *   dialog (Graph error 100 with subcode 36009 used, 36007 expired, 36008 redirect differs).
 *   A code whose dialog request carried a PKCE `code_challenge` needs the matching
 *   `code_verifier` (error 100 otherwise, the code then spent); one without refuses a verifier.
 * - `grant_type=fb_exchange_token` (`fb_exchange_token`): a long-lived user token (60 days) for a
 *   live token of the same app; a dead one gets error 190.
 *
 * Answers `{"access_token", "token_type": "bearer", "expires_in"}` (seconds until it expires on
 * the sandbox clock) or a Graph error with HTTP 400.
 *
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 * @see https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.3
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.6
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { GraphError, graphError, type GraphFault } from './graph-errors.ts';
import type { CodeChallenge, SandboxAppConfig, TokenRecord } from './sandbox-state.ts';
import { VersionParams, type SurfaceOptions } from './surface.ts';

const TokenBody = Type.Object({
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 1000 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
  code: Type.Optional(Type.String({ maxLength: 2000 })),
  grant_type: Type.Optional(Type.String({ maxLength: 100 })),
  fb_exchange_token: Type.Optional(Type.String({ maxLength: 2000 })),
  code_verifier: Type.Optional(Type.String({ maxLength: 200 })),
});

const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.String(),
  expires_in: Type.Integer(),
});
type TokenAnswer = Static<typeof TokenResponse>;

/** A code the app cannot redeem again (also when its grant was removed meanwhile). */
const CODE_USED: GraphFault = {
  code: 100,
  subcode: 36009,
  message: 'This authorization code has been used.',
};

/**
 * Whether `codeVerifier` proves the PKCE challenge `record` was issued with (RFC 7636 §4.6); a
 * code issued without one accepts no verifier (RFC 9700 §2.1.1: no PKCE downgrade).
 */
function verifierFault(
  challenge: CodeChallenge | undefined,
  codeVerifier: string | undefined,
): GraphFault | null {
  if (!challenge) {
    return codeVerifier === undefined
      ? null
      : {
          code: 100,
          message: 'Invalid code_verifier: the authorization request had no code_challenge.',
        };
  }
  if (codeVerifier === undefined)
    return {
      code: 100,
      message: 'Missing code_verifier: the authorization request had a code_challenge.',
    };
  const derived =
    challenge.codeChallengeMethod === 'S256'
      ? createHash('sha256').update(codeVerifier, 'ascii').digest('base64url')
      : codeVerifier;
  const a = Buffer.from(derived);
  const b = Buffer.from(challenge.codeChallenge);
  return a.length === b.length && timingSafeEqual(a, b)
    ? null
    : { code: 100, message: 'Invalid code_verifier: it does not match the code_challenge.' };
}

/** The answer for a token just issued; `nowMs` is the sandbox clock when the request came in. */
function answer(token: string, record: TokenRecord, nowMs: number): TokenAnswer {
  return {
    access_token: token,
    token_type: 'bearer',
    expires_in: Math.floor((record.expiresAtMs - nowMs) / 1000),
  };
}

/** Exchange an authorization code of `client` for a short-lived token. */
function exchangeCode(
  { state, noteCall }: SurfaceOptions,
  request: FastifyRequest,
  client: SandboxAppConfig,
  body: Static<typeof TokenBody>,
  nowMs: number,
): TokenAnswer | { fault: GraphFault } {
  const record = body.code ? state.codes.get(body.code) : undefined;
  if (!record || record.appId !== client.appId)
    return { fault: { code: 100, message: 'Invalid verification code format.' } };
  if (record.used) return { fault: CODE_USED };
  if (record.expiresAtMs <= nowMs)
    return {
      fault: { code: 100, subcode: 36007, message: 'This authorization code has expired.' },
    };
  if (body.redirect_uri !== record.redirectUri)
    return {
      fault: {
        code: 100,
        subcode: 36008,
        message:
          'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
      },
    };
  // Spent before the verifier is checked: a guessed verifier gets one try per code.
  record.used = true;
  const pkce = verifierFault(record.challenge, body.code_verifier);
  if (pkce) return { fault: pkce };
  noteCall(request, record.userId, client.appId);
  const grant = state.grant(client.appId, record.userId);
  if (!grant) return { fault: CODE_USED };
  const { token, record: issued } = state.issueToken(grant, false);
  return answer(token, issued, nowMs);
}

/** Exchange a live token of `client` for a long-lived one (`grant_type=fb_exchange_token`). */
function exchangeForLongLived(
  { state, noteCall }: SurfaceOptions,
  request: FastifyRequest,
  client: SandboxAppConfig,
  oldToken: string | undefined,
  nowMs: number,
): TokenAnswer | { fault: GraphFault } {
  const old = oldToken ? state.tokens.get(oldToken) : undefined;
  if (!old || old.appId !== client.appId || old.revoked || old.expiresAtMs <= nowMs)
    return {
      fault: {
        code: 190,
        subcode: 460,
        message: 'Error validating access token: the session is invalid.',
      },
    };
  noteCall(request, old.userId, client.appId);
  const grant = state.grant(client.appId, old.userId);
  if (!grant)
    return {
      fault: {
        code: 190,
        subcode: 458,
        message: 'Error validating access token: the user has not authorized the application.',
      },
    };
  const { token, record } = state.issueToken(grant, true);
  return answer(token, record, nowMs);
}

/** A Graph error with HTTP 400, or the token answer. */
function send(reply: FastifyReply, result: TokenAnswer | { fault: GraphFault }) {
  return 'fault' in result ? graphError(reply, 400, result.fault) : result;
}

/** The token endpoint surface. */
export async function tokenEndpointRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  const { state, noteCall } = options;
  app.post(
    '/:version/oauth/access_token',
    {
      schema: {
        params: VersionParams,
        body: TokenBody,
        response: { 200: TokenResponse, 400: GraphError },
      },
    },
    async (request, reply) => {
      const b = request.body as Static<typeof TokenBody>;
      const client = b.client_id ? state.apps.get(b.client_id) : undefined;
      if (!client)
        return graphError(reply, 400, {
          code: 101,
          message: 'Error validating application. Invalid application ID.',
        });
      noteCall(request, undefined, client.appId);
      if (b.client_secret !== client.appSecret)
        return graphError(reply, 400, { code: 1, message: 'Error validating client secret.' });
      // One reading of the clock per request: validity and `expires_in` agree.
      const now = state.now();
      if (b.grant_type === 'fb_exchange_token')
        return send(
          reply,
          exchangeForLongLived(options, request, client, b.fb_exchange_token, now),
        );
      if (b.grant_type !== undefined)
        return graphError(reply, 400, { code: 100, message: 'Unsupported grant_type.' });
      return send(reply, exchangeCode(options, request, client, b, now));
    },
  );
}
