/**
 * The vocabulary of how an authorization attempt can end, said once: the callback route, the
 * service that completes an authorization and the `/auth-error` page all use these names.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2.1 (error responses)
 * @see docs/partner-connection.md "How an attempt ends"
 */

/** Why an authorization did not connect anything; each is one `/auth-error?reason=` page. */
export const AUTHORIZATION_FAILURES = [
  /** The person cancelled at the provider's dialog (`error=access_denied`). */
  'cancelled',
  /** The state was missing, expired, from another flow, or the session ended. */
  'state',
  /** Portico's registration at the provider is wrong (e.g. redirect URI mismatch). */
  'config',
  /** A required permission was declined. */
  'permission',
  /** The provider failed or answered an error. */
  'provider',
  /** Storing the connection failed on our side. */
  'storage',
  /** The signed-in user is not an administrator of the portal (only they connect). */
  'not_admin',
] as const;
export type AuthorizationFailure = (typeof AUTHORIZATION_FAILURES)[number];

export function isAuthorizationFailure(value: unknown): value is AuthorizationFailure {
  return typeof value === 'string' && (AUTHORIZATION_FAILURES as readonly string[]).includes(value);
}

/**
 * A known cause of a failure the page can name: `cookies` — the callback came with neither the
 * state cookie nor a session cookie, which happens when the person signed in at another address
 * of Portico (127.0.0.1 vs localhost) than the redirect URI's.
 */
export type AuthorizationFailureCause = 'cookies';

/** What completing a validated authorization response can end in. */
export type CompleteAuthorizationResult =
  | { ok: true }
  | { ok: false; reason: 'permission'; missingCapabilities: string[] }
  | { ok: false; reason: 'config' | 'provider' | 'storage' };

/**
 * `/auth-error?reason=…`, plus for `permission` one `missing` per capability (its plain words
 * from the catalog; the page shows only words the catalog knows).
 */
export function authErrorLocation(
  reason: AuthorizationFailure,
  missingCapabilities: readonly string[] = [],
  hint: { cause?: AuthorizationFailureCause } = {},
): string {
  const query = new URLSearchParams({ reason });
  for (const words of missingCapabilities) query.append('missing', words);
  if (hint.cause) query.set('cause', hint.cause);
  return `/auth-error?${query.toString()}`;
}
