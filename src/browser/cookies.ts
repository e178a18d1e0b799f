/**
 * Names and attributes of the two browser cookies. In production both use the `__Host-`
 * prefix, which the browser only accepts with Secure, Path=/ and no Domain: the cookie cannot be
 * set or shadowed by a sibling subdomain or over plain HTTP.
 *
 * @see docs/partner-connection.md "Cookies"
 * @see https://datatracker.ietf.org/doc/html/draft-ietf-httpbis-rfc6265bis#section-4.1.3.2 ("__Host-" prefix)
 */
import type { CookieSerializeOptions } from '@fastify/cookie';

/** Lifetime of the OAuth state cookie (seconds): ten minutes to complete the dialog. */
export const STATE_COOKIE_MAX_AGE_SECONDS = 600;

export interface CookieNames {
  session: string;
  state: string;
  /** Double-submit token of the sign-in form (there is no session yet to bind it to). */
  loginCsrf: string;
}

export function cookieNames(isProduction: boolean): CookieNames {
  return isProduction
    ? {
        session: '__Host-portico_session',
        state: '__Host-portico_oauth_state',
        loginCsrf: '__Host-portico_login_csrf',
      }
    : {
        session: 'portico_session',
        state: 'portico_oauth_state',
        loginCsrf: 'portico_login_csrf',
      };
}

/** HttpOnly, SameSite=Lax, Path=/, Secure in production; `maxAge` in seconds. */
export function cookieOptions(
  isProduction: boolean,
  maxAgeSeconds: number,
): CookieSerializeOptions {
  return {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: isProduction,
    maxAge: maxAgeSeconds,
  };
}

/** Options that delete a cookie set with `cookieOptions` (same name, path and prefix rules). */
export function clearedCookieOptions(isProduction: boolean): CookieSerializeOptions {
  return { ...cookieOptions(isProduction, 0), expires: new Date(0) };
}
