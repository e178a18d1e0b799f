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
 * @see ../../../shared/DESIGN.md "Provider code exchange"
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 */

/** What a failed provider call means to us. */
export type ProviderErrorKind =
  /** The redirect URI differs from the one used in the dialog (a configuration error). */
  | 'redirect_uri_mismatch'
  /** The authorization code is unknown, used or expired. */
  | 'invalid_code'
  /** Graph error 190: the token is invalid, expired or revoked. */
  | 'dead_token'
  /** The token lacks a permission (Graph codes 10, 200–299). */
  | 'permission'
  /** Network failure, timeout, 5xx or a transient Graph error (1, 2, 4, 17, 341). */
  | 'unavailable'
  | 'other';

/** A failed provider call. `message` is ours and safe to log; never a token, secret or code. */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  /** Graph's `error.code`, when the provider answered with an error object. */
  readonly graphCode: number | undefined;
  readonly graphSubcode: number | undefined;
  /** Graph's trace id, for a support request to the provider. */
  readonly fbtraceId: string | undefined;
  readonly httpStatus: number | undefined;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    details: {
      graphCode?: number | undefined;
      graphSubcode?: number | undefined;
      fbtraceId?: string | undefined;
      httpStatus?: number | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ProviderError';
    this.kind = kind;
    this.graphCode = details.graphCode;
    this.graphSubcode = details.graphSubcode;
    this.fbtraceId = details.fbtraceId;
    this.httpStatus = details.httpStatus;
  }
}

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

export type ProviderClient = ReturnType<typeof createProviderClient>;

interface GraphErrorBody {
  error?: {
    message?: unknown;
    type?: unknown;
    code?: unknown;
    error_subcode?: unknown;
    fbtrace_id?: unknown;
  };
}

const TRANSIENT_CODES = new Set([2, 4, 17, 32, 341, 613]);

/** Classify Graph's error object. @see Graph API "Handling Errors" */
export function classifyGraphError(code: number | undefined, subcode: number | undefined) {
  if (code === 190) return 'dead_token' as const;
  if (code === 100 && subcode === 36008) return 'redirect_uri_mismatch' as const;
  if (code === 100 && (subcode === 36007 || subcode === 36009)) return 'invalid_code' as const;
  if (code === 10 || (code !== undefined && code >= 200 && code <= 299))
    return 'permission' as const;
  if (code !== undefined && TRANSIENT_CODES.has(code)) return 'unavailable' as const;
  return 'other' as const;
}

const asNumber = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const asString = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * A provider client for one app.
 *
 * Every method rejects with `ProviderError` only (network failures and timeouts are
 * `unavailable`).
 */
export function createProviderClient(options: ProviderClientOptions) {
  const base = `${options.graphBaseUrl}/${options.apiVersion}`;
  const appAccessToken = `${options.appId}|${options.appSecret}`;

  async function call(
    what: string,
    url: string,
    init: {
      body?: URLSearchParams;
      bearer?: string;
      method?: 'GET' | 'POST';
      signal?: AbortSignal;
    },
  ): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`;
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = init.signal ? AbortSignal.any([timeout, init.signal]) : timeout;
    let res: Response;
    try {
      res = await fetch(url, {
        method: init.method ?? (init.body ? 'POST' : 'GET'),
        headers,
        ...(init.body && { body: init.body }),
        redirect: 'error',
        signal,
      });
    } catch (cause) {
      const timedOut = timeout.aborted;
      throw new ProviderError(
        'unavailable',
        timedOut
          ? `${what}: the provider did not answer within ${options.timeoutMs} ms`
          : `${what}: the provider could not be reached`,
        { cause: timedOut ? undefined : sanitizeCause(cause) },
      );
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new ProviderError(
        res.status >= 500 ? 'unavailable' : 'other',
        `${what}: the provider answered HTTP ${res.status} without JSON`,
        { httpStatus: res.status },
      );
    }
    const error = (body as GraphErrorBody | null)?.error;
    if (!res.ok || error) {
      const code = asNumber(error?.code);
      const subcode = asNumber(error?.error_subcode);
      const kind =
        res.status >= 500 && code === undefined ? 'unavailable' : classifyGraphError(code, subcode);
      throw new ProviderError(
        kind,
        `${what}: the provider refused (HTTP ${res.status}, Graph error ${code ?? '-'}/${subcode ?? '-'})`,
        {
          graphCode: code,
          graphSubcode: subcode,
          fbtraceId: asString(error?.fbtrace_id),
          httpStatus: res.status,
        },
      );
    }
    if (typeof body !== 'object' || body === null)
      throw new ProviderError('other', `${what}: the provider answered an unexpected body`);
    return body as Record<string, unknown>;
  }

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

  return {
    /**
     * Exchange an authorization code: `POST {graph}/{version}/oauth/access_token` with
     * `client_id`, `client_secret`, `redirect_uri`, `code` as a form body.
     *
     * @see RFC 6749 §4.1.3
     */
    async exchangeCode(authorizationCode: string): Promise<AccessTokenResponse> {
      let body: Record<string, unknown>;
      try {
        body = await call('code exchange', `${base}/oauth/access_token`, {
          body: new URLSearchParams({
            client_id: options.appId,
            client_secret: options.appSecret,
            redirect_uri: options.redirectUri,
            code: authorizationCode,
          }),
        });
      } catch (err) {
        // At the token endpoint, any other "invalid parameter" (100) is about the code.
        if (err instanceof ProviderError && err.kind === 'other' && err.graphCode === 100)
          throw new ProviderError('invalid_code', err.message, {
            graphCode: err.graphCode,
            graphSubcode: err.graphSubcode,
            fbtraceId: err.fbtraceId,
            httpStatus: err.httpStatus,
          });
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
      const body = await call('long-lived exchange', `${base}/oauth/access_token`, {
        body: new URLSearchParams({
          grant_type: 'fb_exchange_token',
          client_id: options.appId,
          client_secret: options.appSecret,
          fb_exchange_token: accessToken,
        }),
        ...(signal && { signal }),
      });
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
        body = await call('token inspection', `${base}/debug_token`, {
          body: new URLSearchParams({ input_token: accessToken }),
          bearer: appAccessToken,
          ...(signal && { signal }),
        });
      } catch (err) {
        // A 190 here is about the app access token (our id/secret), not the inspected token:
        // never let it read as "the customer's token is dead".
        if (err instanceof ProviderError && err.kind === 'dead_token')
          throw new ProviderError(
            'other',
            'token inspection: the provider refused the app credentials',
            {
              graphCode: err.graphCode,
              graphSubcode: err.graphSubcode,
              fbtraceId: err.fbtraceId,
              httpStatus: err.httpStatus,
            },
          );
        throw err;
      }
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
      return call('graph read', `${base}/${path.replace(/^\//, '')}`, {
        bearer: accessToken,
        method: 'GET',
        ...(signal && { signal }),
      });
    },
  };
}

/** Keep the error class and code of a network failure, not its message (it may quote a URL). */
function sanitizeCause(cause: unknown): unknown {
  if (!(cause instanceof Error)) return undefined;
  const inner = (cause as { cause?: { code?: unknown } }).cause;
  return { name: cause.name, code: typeof inner?.code === 'string' ? inner.code : undefined };
}
