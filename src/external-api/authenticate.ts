/**
 * Token → principal for the external API.
 *
 * A request presents the API token in exactly one of `Authorization: <token>` (also
 * `Authorization: Bearer <token>`) or `X-API-Key: <token>`. Failures carry the RFC 6750 §3
 * `WWW-Authenticate` challenge. A token whose shape or checksum is wrong is refused here,
 * before any cache or database read.
 *
 * @see docs/reference/external-api.md
 * @see https://www.rfc-editor.org/rfc/rfc6750#section-3
 */
import type { IncomingHttpHeaders } from 'node:http';
import { hashApiToken, isWellFormedApiToken } from '../accounts/api-token.ts';
import type { KeyRefusal } from '../accounts/key-usage.ts';
import type { KeyPrincipal, Principal } from '../accounts/principal.ts';
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

/**
 * The refusal a known key's own rules give this request, or null when it may go on. Read from
 * the (cached) principal only: no I/O.
 *
 * - a previous secret past its rotation overlap → 401 `invalid_token` (as if unknown);
 * - an expired key → 401 `token_expired`;
 * - a client address outside the key's allow-list → 403 `ip_not_allowed`, naming nothing of
 *   the list.
 *
 * @param address the client address as Fastify gives it (`request.ip`, after `TRUST_PROXY`).
 * @param now Unix ms.
 * @returns the error, and the reason to audit (none for a retired secret, which is unknown).
 */
export function keyRefusal(
  principal: KeyPrincipal,
  address: string,
  now: number,
): { error: AppError; audit?: KeyRefusal } | null {
  if (principal.secretValidUntil !== null && now >= principal.secretValidUntil)
    return { error: invalidToken() };
  if (principal.expiresAt !== null && now >= principal.expiresAt) {
    return {
      audit: 'expired',
      error: new AppError('token_expired', 'The API key has expired.', {
        headers: {
          'www-authenticate': `${REALM}, error="invalid_token", error_description="The API key has expired"`,
        },
      }),
    };
  }
  if (principal.allowList && !principal.allowList.allows(address)) {
    return {
      audit: 'ip_not_allowed',
      error: new AppError(
        'ip_not_allowed',
        "This API key cannot be used from this address: it is outside the key's allowed addresses.",
      ),
    };
  }
  return null;
}

/**
 * The SHA-256 of the token a request presents (the rate-limit key and the lookup key; never
 * the token itself), checked for shape and checksum without any I/O.
 *
 * @throws AppError `invalid_request`, `missing_token` or `invalid_token`.
 */
export function presentedTokenHash(headers: IncomingHttpHeaders): string {
  const token = presentedToken(headers);
  if (!isWellFormedApiToken(token)) throw invalidToken();
  return hashApiToken(token);
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
