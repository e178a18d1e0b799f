/**
 * Token → principal for the external API.
 *
 * A request presents the API token in exactly one of `Authorization: <token>` (also
 * `Authorization: Bearer <token>`) or `X-API-Key: <token>`. Failures carry the RFC 6750 §3
 * `WWW-Authenticate` challenge. A token whose shape or checksum is wrong is refused here,
 * before any cache or database read.
 *
 * @see docs/api-tokens.md "Presenting a token"
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
import type { IncomingHttpHeaders } from 'node:http';
import { hashApiToken, isWellFormedApiToken } from '../accounts/api-token.ts';
import type { Principal, PrincipalLookup } from '../accounts/principal.ts';
import { AppError } from '../platform/errors.ts';

const REALM = 'Bearer realm="portico"';
const BEARER = /^bearer(?:[ \t]+|$)/i;

/**
 * The token a request presents, exactly as sent (after an optional `Bearer ` scheme).
 *
 * @throws AppError `invalid_request` (400) when both headers are present,
 *   `missing_token` (401) when neither carries a value.
 */
export function presentedToken(headers: IncomingHttpHeaders): string {
  const authorization = headers.authorization;
  const apiKey = headers['x-api-key'];
  if (authorization !== undefined && apiKey !== undefined) {
    throw new AppError(
      'invalid_request',
      'Send the API token in one header only: Authorization or X-API-Key, not both.',
    );
  }
  const raw = (authorization ?? (Array.isArray(apiKey) ? apiKey.join(',') : apiKey) ?? '').trim();
  const token = raw.replace(BEARER, '');
  if (token === '') {
    throw new AppError(
      'missing_token',
      'Send your API token in the Authorization header (or X-API-Key).',
      { headers: { 'www-authenticate': REALM } },
    );
  }
  return token;
}

export function invalidToken(): AppError {
  // One code and one message for malformed, unknown and regenerated tokens: the client learns
  // nothing about which it was.
  return new AppError('invalid_token', 'The API token is not valid.', {
    headers: { 'www-authenticate': `${REALM}, error="invalid_token"` },
  });
}

/** A successful authentication: the principal, and the hash of the token (the rate-limit key). */
export interface Authenticated {
  principal: Principal;
  /** SHA-256 hex of the presented token; never the token itself. */
  tokenHash: string;
}

/**
 * Authenticate a request's headers.
 *
 * @returns the principal of the presented token and the token's hash.
 * @throws AppError `invalid_request`, `missing_token` or `invalid_token`.
 */
export async function authenticateToken(
  headers: IncomingHttpHeaders,
  lookup: PrincipalLookup,
): Promise<Authenticated> {
  const token = presentedToken(headers);
  if (!isWellFormedApiToken(token)) throw invalidToken();
  const tokenHash = hashApiToken(token);
  const principal = await lookup(tokenHash);
  if (!principal) throw invalidToken();
  return { principal, tokenHash };
}

/**
 * @throws AppError `insufficient_scope` (403) naming the scopes the route needs.
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3.1
 */
export function requireScopes(principal: Principal, required: readonly string[]): void {
  const granted = new Set<string>(principal.scopes);
  const missing = required.filter((s) => !granted.has(s));
  if (missing.length === 0) return;
  throw new AppError(
    'insufficient_scope',
    `This API token lacks the scope this route needs: ${required.join(', ')}.`,
    {
      requiredScopes: required,
      headers: {
        'www-authenticate': `${REALM}, error="insufficient_scope", scope="${required.join(' ')}"`,
      },
    },
  );
}
