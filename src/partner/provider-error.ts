/**
 * The one error type of provider calls, and how Graph's error codes map onto what they mean to
 * Portico. A `ProviderError`'s message is ours: never a token, a secret, a code, or Graph's own
 * message (which may quote its input).
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling
 */
import type { Logger } from '../platform/logger.ts';

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
  /**
   * Network failure, timeout, 5xx (with Graph code 1 or 131000 too) or a transient Graph error
   * (2, 17, 32, 341, 613, 131016).
   */
  | 'unavailable'
  /**
   * A rate limit: Cloud API throughput (130429), the pair rate limit (131056), the WABA's
   * (80007) or the app's (4). Retry with backoff; `retryAfterMs` when the provider says.
   */
  | 'throttled'
  /**
   * The provider refused this message or template for good (131047 outside the 24-hour window,
   * 131026 undeliverable, 131050 stopped marketing, 1320xx template problems, any other 13xxxx,
   * 100 as a bad parameter of a send or a template): retrying the same request cannot succeed.
   */
  | 'rejected'
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
  /**
   * A short, fixed description of the failure, safe to store and show (a message's error):
   * from our own table by Graph code, never Graph's `error_user_title` or `error_data`, which
   * may quote the input (a message body, a phone number).
   */
  readonly title: string;
  /** How long to wait before retrying, in milliseconds, when the provider said (`Retry-After`). */
  readonly retryAfterMs: number | undefined;
  /**
   * The request may have reached the provider and no answer came back (a timeout, a connection
   * lost after the request was written, a success answer that could not be read): the provider
   * may have acted on it. False when the provider answered with a failure, or the request was
   * never sent (refused connection, unknown host, a check before any I/O).
   */
  readonly outcomeUnknown: boolean;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    details: {
      graphCode?: number | undefined;
      graphSubcode?: number | undefined;
      fbtraceId?: string | undefined;
      httpStatus?: number | undefined;
      retryAfterMs?: number | undefined;
      outcomeUnknown?: boolean | undefined;
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
    this.retryAfterMs = details.retryAfterMs;
    this.outcomeUnknown = details.outcomeUnknown ?? false;
    this.title = providerErrorTitle(kind, details.graphCode);
  }

  /** The same failure (Graph code, trace id, status) read as another kind, with our message. */
  as(kind: ProviderErrorKind, message: string): ProviderError {
    return new ProviderError(kind, message, {
      graphCode: this.graphCode,
      graphSubcode: this.graphSubcode,
      fbtraceId: this.fbtraceId,
      httpStatus: this.httpStatus,
      retryAfterMs: this.retryAfterMs,
      outcomeUnknown: this.outcomeUnknown,
    });
  }

  /** What a log line may say of this failure: the kind, Graph's codes and trace id, the status. */
  logFields(): Record<string, unknown> {
    return {
      kind: this.kind,
      graphCode: this.graphCode,
      graphSubcode: this.graphSubcode,
      fbtraceId: this.fbtraceId,
      httpStatus: this.httpStatus,
      outcomeUnknown: this.outcomeUnknown,
    };
  }
}

/** Transient Graph errors: retry later (131016: the Cloud API's "service unavailable"). */
const TRANSIENT_CODES = new Set([2, 17, 32, 341, 613, 131016]);
/**
 * Rate limits. Code 4 (the app's call rate) was `unavailable` before the Cloud API: every caller
 * that retries `unavailable` retries `throttled` too (`isTransientProviderError`).
 */
const THROTTLED_CODES = new Set([4, 80007, 130429, 131056]);

/**
 * Classify Graph's error object by `code` and `error_subcode`. A code 100 is `other` here:
 * only the caller knows whether it is a bad parameter of a send (`rejected`, see
 * `cloud-api.ts`) or of the token endpoint (`invalid_code`).
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling#errorcodes
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
export function classifyGraphError(
  code: number | undefined,
  subcode: number | undefined,
): ProviderErrorKind {
  if (code === 190) return 'dead_token';
  if (code === 100 && subcode === 36008) return 'redirect_uri_mismatch';
  if (code === 100 && (subcode === 36007 || subcode === 36009)) return 'invalid_code';
  if (code === 10 || (code !== undefined && code >= 200 && code <= 299)) return 'permission';
  if (code !== undefined && THROTTLED_CODES.has(code)) return 'throttled';
  if (code !== undefined && TRANSIENT_CODES.has(code)) return 'unavailable';
  if (code !== undefined && code >= 130_000 && code <= 139_999) return 'rejected';
  return 'other';
}

/** Whether a failure may succeed when retried later (`unavailable` or `throttled`). */
export function isTransientProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError && (err.kind === 'unavailable' || err.kind === 'throttled');
}

/**
 * Fixed titles by Graph code: what a message's `error.title` says. Ours, in the words of the
 * Cloud API's error-code table, so nothing the provider echoes of the input is ever kept.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
const GRAPH_TITLES: Readonly<Record<number, string>> = {
  4: 'Too many calls',
  10: 'Permission denied',
  100: 'Invalid parameter',
  190: 'Access token expired or invalid',
  200: 'Permission denied',
  80007: 'Rate limit issues',
  130429: 'Rate limit hit',
  131000: 'Something went wrong',
  131016: 'Service unavailable',
  131021: 'Recipient cannot be sender',
  131026: 'Message undeliverable',
  131031: 'Account has been locked',
  131042: 'Business eligibility payment issue',
  131045: 'Incorrect certificate',
  131047: 'Re-engagement message',
  131049: 'Message not delivered to maintain healthy ecosystem engagement',
  131050: 'User stopped marketing messages',
  131051: 'Unsupported message type',
  131052: 'Media download error',
  131053: 'Media upload error',
  131056: 'Pair rate limit hit',
  132000: 'Template parameter count mismatch',
  132001: 'Template does not exist',
  132005: 'Template hydrated text too long',
  132007: 'Template format character policy violated',
  132012: 'Template parameter format mismatch',
  132015: 'Template is paused',
  132016: 'Template is disabled',
  133005: 'Two step verification PIN mismatch',
  133010: 'Phone number not registered',
  133016: 'Registration rate limit exceeded',
};

const KIND_TITLES: Readonly<Record<ProviderErrorKind, string>> = {
  redirect_uri_mismatch: 'Redirect URI mismatch',
  invalid_code: 'Invalid authorization code',
  dead_token: 'Access token expired or invalid',
  permission: 'Permission denied',
  unavailable: 'Provider unavailable',
  throttled: 'Rate limit hit',
  rejected: 'Rejected by the provider',
  other: 'Provider error',
};

/** The fixed title of a failure: by Graph code when we know it, else by kind. */
export function providerErrorTitle(kind: ProviderErrorKind, graphCode: number | undefined): string {
  return (graphCode !== undefined && GRAPH_TITLES[graphCode]) || KIND_TITLES[kind];
}

/**
 * Log a failed provider call without anything secret: `ProviderError`'s kind, Graph codes and
 * trace id; for anything else only the error's class name (a driver error quotes its query's
 * parameters).
 */
export function logProviderFailure(
  log: Logger,
  what: string,
  err: unknown,
  portalId: number,
): void {
  if (err instanceof ProviderError)
    log.warn({ portalId, ...err.logFields() }, `${what}: ${err.message}`);
  else
    log.error({ portalId, error: err instanceof Error ? err.name : typeof err }, `${what} failed`);
}
