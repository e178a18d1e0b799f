/**
 * The authorization request: the address of the provider's dialog the browser is sent to.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.1
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow#invokingloginflow
 */
import type { ProviderSettings } from '../../config.ts';

/**
 * `{AUTH_BASE}/{VERSION}/dialog/oauth?client_id&redirect_uri&state&response_type=code` plus
 * `config_id` when a login configuration is set, else `scope` (the required permissions,
 * comma-separated as Facebook Login takes them: without either it grants only its default
 * permissions). Carries the state and never the app secret.
 */
export function authorizationRequestUrl(settings: ProviderSettings, state: string): string {
  const url = new URL(`${settings.authorizationBaseUrl}/${settings.apiVersion}/dialog/oauth`);
  url.searchParams.set('client_id', settings.appId);
  url.searchParams.set('redirect_uri', settings.redirectUri);
  url.searchParams.set('state', state);
  url.searchParams.set('response_type', 'code');
  if (settings.configId !== undefined) url.searchParams.set('config_id', settings.configId);
  else url.searchParams.set('scope', settings.requiredPermissions.join(','));
  return url.toString();
}
