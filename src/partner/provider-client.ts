/**
 * The provider client: code exchange, long-lived exchange, token inspection (`debug_token`) and
 * authenticated Graph reads, over global `fetch` (undici), in the provider's documented wire
 * format.
 *
 * Invariants: the app secret travels only in a POST form body or the app-token `Authorization`
 * header; a provider token travels only in a POST form body or an `Authorization` header, never
 * in a URL; every call has a timeout; no error message carries a token, secret or code (Graph's
 * own message is kept out of `message` too, since it may quote its input).
 *
 * @see docs/partner-connection.md "Provider wire format"
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 */
import { createCloudApi } from './cloud-api/cloud-api.ts';
import { asNumber, asString, graphCall } from './graph-call.ts';
import { ProviderError } from './provider-error.ts';

export { ProviderError, type ProviderErrorKind } from './provider-error.ts';

export interface ProviderClientOptions {
  graphBaseUrl: string;
  apiVersion: string;
  appId: string;
  appSecret: string;
  redirectUri: string;
  /** Per-call timeout in milliseconds. */
  timeoutMs: number;
}

/** A user access token as the token endpoint returns it. */
export interface AccessTokenResponse {
  accessToken: string;
  tokenType: string;
  /** Seconds until expiry, when the provider says. */
  expiresIn: number | undefined;
}

/** What `debug_token` says about a token. */
export interface TokenInspection {
  isValid: boolean;
  appId: string | undefined;
  userId: string | undefined;
  scopes: string[];
  /** Asset ids per permission (`granular_scopes[].target_ids`). */
  granularScopes: { scope: string; targetIds: string[] }[];
  /** Unix seconds; undefined or 0 means no expiry. */
  expiresAt: number | undefined;
  /** Graph's error code for an invalid token (190 for a dead one), when given. */
  errorCode: number | undefined;
}

/** The provider client; `cloud` holds the WhatsApp Cloud API calls (cloud-api.ts). */
export type ProviderClient = ReturnType<typeof createProviderClient>;

/**
 * When a token expires: `debug_token`'s `expires_at` (Unix seconds) when the provider gives one,
 * else `expires_in` (seconds from now) of the token endpoint, else null (no known expiry).
 *
 * @see https://developers.facebook.com/docs/graph-api/reference/debug_token
 */
export function tokenExpiry(
  inspection: Pick<TokenInspection, 'expiresAt'>,
  expiresInS: number | undefined,
): Date | null {
  if (inspection.expiresAt) return new Date(inspection.expiresAt * 1000);
  return expiresInS ? new Date(Date.now() + expiresInS * 1000) : null;
}

/**
 * A provider client for one app.
 *
 * Every method rejects with `ProviderError` only (network failures and timeouts are
 * `unavailable`).
 */
export function createProviderClient(options: ProviderClientOptions) {
  const base = `${options.graphBaseUrl}/${options.apiVersion}`;
  const appAccessToken = `${options.appId}|${options.appSecret}`;

  return {
    cloud: createCloudApi(base, options.timeoutMs), // phone numbers, templates, messages
    /**
     * Exchange an authorization code: `POST {graph}/{version}/oauth/access_token` with
     * `client_id`, `client_secret`, `redirect_uri`, `code` (+ PKCE `code_verifier`) as a form body.
     * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.3 (and RFC 7636 §4.5, the verifier)
     */
    async exchangeCode(code: string, codeVerifier?: string): Promise<AccessTokenResponse> {
      let body: Record<string, unknown>;
      try {
        body = await graphCall(options.timeoutMs, 'code exchange', `${base}/oauth/access_token`, {
          body: new URLSearchParams({
            client_id: options.appId,
            client_secret: options.appSecret,
            redirect_uri: options.redirectUri,
            code,
            ...(codeVerifier !== undefined && { code_verifier: codeVerifier }),
          }),
        });
      } catch (err) {
        // At the token endpoint, any other "invalid parameter" (100) is about the code.
        if (err instanceof ProviderError && err.kind === 'other' && err.graphCode === 100)
          throw err.as('invalid_code', err.message);
        throw err;
      }
      return tokenResponse('code exchange', body);
    },

    /**
     * Exchange a token for a long-lived one (`grant_type=fb_exchange_token`), as a POST form
     * body so neither the secret nor the token is in a URL. Also the refresh of a long-lived
     * token near expiry.
     *
     * @see https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived
     */
    async exchangeForLongLived(
      accessToken: string,
      signal?: AbortSignal,
    ): Promise<AccessTokenResponse> {
      const body = await graphCall(
        options.timeoutMs,
        'long-lived exchange',
        `${base}/oauth/access_token`,
        {
          body: new URLSearchParams({
            grant_type: 'fb_exchange_token',
            client_id: options.appId,
            client_secret: options.appSecret,
            fb_exchange_token: accessToken,
          }),
          ...(signal && { signal }),
        },
      );
      return tokenResponse('long-lived exchange', body);
    },

    /**
     * Inspect a token: `debug_token` with `input_token` as a POST form field (Graph accepts POST
     * for its GET endpoints) and the app access token `{app_id}|{app_secret}` in the
     * `Authorization` header — no token in any URL.
     *
     * @see https://developers.facebook.com/docs/graph-api/reference/debug_token
     */
    async inspectToken(accessToken: string, signal?: AbortSignal): Promise<TokenInspection> {
      let body: Record<string, unknown>;
      try {
        body = await graphCall(options.timeoutMs, 'token inspection', `${base}/debug_token`, {
          body: new URLSearchParams({ input_token: accessToken }),
          bearer: appAccessToken,
          ...(signal && { signal }),
        });
      } catch (err) {
        // A 190 here is about the app access token (our id/secret), not the inspected token:
        // never let it read as "the customer's token is dead".
        if (err instanceof ProviderError && err.kind === 'dead_token')
          throw err.as('other', 'token inspection: the provider refused the app credentials');
        throw err;
      }
      return parseTokenInspection(body);
    },

    /**
     * Revoke the person's whole grant: `DELETE /{user-id}/permissions` (`me` when the id is
     * unknown), the token in the `Authorization` header. @throws ProviderError (`dead_token`:
     * already dead). @see https://developers.facebook.com/docs/facebook-login/guides/permissions/request-revoke#revoking
     */
    async revokePermissions(
      accessToken: string,
      providerUserId: string | null,
      signal?: AbortSignal,
    ): Promise<void> {
      const node = providerUserId && /^[0-9]+$/.test(providerUserId) ? providerUserId : 'me';
      await graphCall(options.timeoutMs, 'permissions revocation', `${base}/${node}/permissions`, {
        bearer: accessToken,
        method: 'DELETE',
        ...(signal && { signal }),
      });
    },

    /**
     * A Graph read with the user's token in the `Authorization` header, e.g. `me?fields=id`.
     * `path` is relative to `{graph}/{version}/` and must not carry a token.
     */
    async graphGet(
      accessToken: string,
      path: string,
      signal?: AbortSignal,
    ): Promise<Record<string, unknown>> {
      return graphCall(options.timeoutMs, 'graph read', `${base}/${path.replace(/^\//, '')}`, {
        bearer: accessToken,
        method: 'GET',
        ...(signal && { signal }),
      });
    },
  };
}

/** The access token of a token endpoint answer. @throws ProviderError without one. */
function tokenResponse(what: string, body: Record<string, unknown>): AccessTokenResponse {
  const accessToken = asString(body.access_token);
  if (!accessToken)
    throw new ProviderError('other', `${what}: the provider answered without an access token`);
  return {
    accessToken,
    tokenType: asString(body.token_type) ?? 'bearer',
    expiresIn: asNumber(body.expires_in),
  };
}

/**
 * `debug_token`'s `data` as a `TokenInspection`.
 *
 * @see https://developers.facebook.com/docs/graph-api/reference/debug_token
 */
function parseTokenInspection(body: Record<string, unknown>): TokenInspection {
  const data = (body.data ?? {}) as Record<string, unknown>;
  const granular = Array.isArray(data.granular_scopes) ? data.granular_scopes : [];
  const dataError = (data.error ?? {}) as Record<string, unknown>;
  return {
    isValid: data.is_valid === true,
    appId: asString(data.app_id),
    userId: asString(data.user_id),
    scopes: Array.isArray(data.scopes) ? data.scopes.filter((s) => typeof s === 'string') : [],
    granularScopes: granular.flatMap((g: unknown) => {
      const entry = g as { scope?: unknown; target_ids?: unknown };
      const scope = asString(entry.scope);
      if (!scope) return [];
      const ids = Array.isArray(entry.target_ids)
        ? entry.target_ids.filter((t): t is string => typeof t === 'string')
        : [];
      return [{ scope, targetIds: ids }];
    }),
    expiresAt: asNumber(data.expires_at),
    errorCode: asNumber(dataError.code),
  };
}
