/**
 * Validation of the authorization response that reaches the redirect URI, in one pure function
 * (the habit of oauth4webapi's `validateAuthResponse`): the query and the state cookie in, a
 * validated authorization code or the reason to refuse out. `completeAuthorization` accepts
 * only a `ValidatedAuthorizationCode`, so a code that did not pass the state check cannot
 * reach the code exchange: the compiler says so.
 *
 * Invariants: the state is compared in constant time; any absence or mismatch refuses; nothing
 * here logs or returns the code or the state in a failure.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2 (authorization response)
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-2.1 (CSRF protection with state)
 * @see docs/partner-connection.md "The callback, step by step"
 */
import { safeEqual } from '../../platform/crypto.ts';
import type { AuthorizationFailure } from './authorization-outcome.ts';

declare const validated: unique symbol;
/** An authorization code whose response carried the state this browser was given. */
export type ValidatedAuthorizationCode = string & { readonly [validated]: true };

/** The callback's query parameters (absent when the query was malformed). */
export interface AuthorizationResponseQuery {
  state?: string | undefined;
  code?: string | undefined;
  error?: string | undefined;
}

export type AuthorizationResponseResult =
  | { ok: true; authorizationCode: ValidatedAuthorizationCode }
  | {
      ok: false;
      reason: Extract<AuthorizationFailure, 'cancelled' | 'provider' | 'state'>;
      /** Why, for the log: never a code or state value. */
      why: string;
    };

/**
 * Validate an authorization response against the state cookie.
 *
 * @param query the callback's query, or null when it failed schema validation (then treated as
 *   a response without a state).
 * @param expectedState the state cookie's value, or undefined when absent.
 * @returns `state` when the state or the cookie is missing or the states differ (error
 *   responses included), or when the code is missing; `cancelled` for `error=access_denied`,
 *   `provider` for any other `error`; else the code.
 */
export function validateAuthorizationResponse(
  query: AuthorizationResponseQuery | null,
  expectedState: string | undefined,
): AuthorizationResponseResult {
  const { state, code, error } = query ?? {};
  // An error response returns the state too (RFC 6749 §4.1.2.1): one without this browser's
  // state did not come from its attempt (a cross-site navigation), so it is refused as forged.
  if (error !== undefined) {
    if (!state || !expectedState || !safeEqual(state, expectedState))
      return { ok: false, reason: 'state', why: 'error response without the expected state' };
    if (error === 'access_denied')
      return { ok: false, reason: 'cancelled', why: 'cancelled at the provider' };
    return { ok: false, reason: 'provider', why: 'the provider answered with an error' };
  }
  if (!code || !state || !expectedState) {
    const missing = [!code && 'code', !state && 'state', !expectedState && 'cookie'];
    return { ok: false, reason: 'state', why: `missing ${missing.filter(Boolean).join(', ')}` };
  }
  if (!safeEqual(state, expectedState))
    return { ok: false, reason: 'state', why: 'state mismatch' };
  return { ok: true, authorizationCode: code as ValidatedAuthorizationCode };
}
