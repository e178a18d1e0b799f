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

  /** The same failure (Graph code, trace id, status) read as another kind, with our message. */
  as(kind: ProviderErrorKind, message: string): ProviderError {
    return new ProviderError(kind, message, {
      graphCode: this.graphCode,
      graphSubcode: this.graphSubcode,
      fbtraceId: this.fbtraceId,
      httpStatus: this.httpStatus,
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
    };
  }
}

const TRANSIENT_CODES = new Set([2, 4, 17, 32, 341, 613]);

/**
 * Classify Graph's error object by `code` and `error_subcode`.
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling#errorcodes
 */
export function classifyGraphError(code: number | undefined, subcode: number | undefined) {
  if (code === 190) return 'dead_token' as const;
  if (code === 100 && subcode === 36008) return 'redirect_uri_mismatch' as const;
  if (code === 100 && (subcode === 36007 || subcode === 36009)) return 'invalid_code' as const;
  if (code === 10 || (code !== undefined && code >= 200 && code <= 299))
    return 'permission' as const;
  if (code !== undefined && TRANSIENT_CODES.has(code)) return 'unavailable' as const;
  return 'other' as const;
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
