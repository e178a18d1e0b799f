/**
 * The authorization request: the address of the provider's dialog the browser is sent to.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow#invokingloginflow
 */
import type { ProviderSettings } from '../../config.ts';
import { createPkcePair } from './pkce.ts';

/**
 * `{AUTH_BASE}/{VERSION}/dialog/oauth?client_id&redirect_uri&state&response_type=code` plus
 * `config_id` when a login configuration is set, else `scope` (the required permissions,
 * comma-separated as Facebook Login takes them: without either it grants only its default
 * permissions), and with `codeChallenge` the PKCE `code_challenge` and
 * `code_challenge_method=S256`. Carries the state and never the app secret nor the verifier.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.3
 */
export function authorizationRequestUrl(
  settings: ProviderSettings,
  state: string,
  codeChallenge?: string,
): string {
  const url = new URL(`${settings.authorizationBaseUrl}/${settings.apiVersion}/dialog/oauth`);
  url.searchParams.set('client_id', settings.appId);
  url.searchParams.set('redirect_uri', settings.redirectUri);
  url.searchParams.set('state', state);
  url.searchParams.set('response_type', 'code');
  if (settings.configId !== undefined) url.searchParams.set('config_id', settings.configId);
  else url.searchParams.set('scope', settings.requiredPermissions.join(','));
  if (codeChallenge !== undefined) {
    url.searchParams.set('code_challenge', codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
  }
  return url.toString();
}

/** An authorization request: the dialog URL, and the PKCE code verifier of its challenge. */
export interface AuthorizationRequest {
  url: string;
  /** Undefined when PKCE is off (PROVIDER_PKCE); never put in a URL. */
  codeVerifier: string | undefined;
}

/**
 * The authorization request for `state`: with PKCE on (`settings.pkce`), a fresh code verifier
 * and the URL carrying its S256 challenge. The caller keeps the verifier server-side, bound to
 * the state, for the code exchange.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.3
 */
export function authorizationRequest(
  settings: ProviderSettings,
  state: string,
): AuthorizationRequest {
  if (!settings.pkce)
    return { url: authorizationRequestUrl(settings, state), codeVerifier: undefined };
  const { codeVerifier, codeChallenge } = createPkcePair();
  return { url: authorizationRequestUrl(settings, state, codeChallenge), codeVerifier };
}
