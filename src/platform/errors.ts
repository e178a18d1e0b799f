/**
 * The one map from stable error codes to HTTP statuses, and the error type every feature throws.
 *
 * Every error of the external API leaves the server as the envelope
 * `{"success": false, "error": {"code", "message", "requestId", "details"?, "requiredScopes"?}}`.
 *
 * @see docs/reference/external-api.md
 */

export const ERROR_STATUS = {
  invalid_request: 400,
  missing_token: 401,
  invalid_token: 401,
  /** An API key past its `expiresAt`. */
  token_expired: 401,
  /** A provider webhook whose `X-Hub-Signature-256` does not verify (not an API route). */
  invalid_signature: 401,
  insufficient_scope: 403,
  /** An API key used from an address outside its allow-list (the list is never named). */
  ip_not_allowed: 403,
  insufficient_credit: 402,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_conflict: 409,
  conflict: 409,
  not_connected: 409,
  /** The sender number's onboarding is not done (webhooks not subscribed, or not registered). */
  number_not_ready: 409,
  /** The provider no longer has an inbound medium (it keeps them for a limited time). */
  media_gone: 410,
  payload_too_large: 413,
  /** A body that is not JSON (not multipart, for an upload); an upload of a type not sent. */
  unsupported_media_type: 415,
  recipient_opted_out: 422,
  /** The person stopped marketing messages from the sender number (a marketing template). */
  marketing_stopped: 422,
  /** An authentication template to a person known only by their WhatsApp user id (BSUID). */
  recipient_needs_phone: 422,
  outside_service_window: 422,
  template_not_approved: 422,
  /** A template's parameters do not fit its definition (kinds, counts, media). */
  invalid_template_parameters: 422,
  /** An upload over its kind's limit, or an inbound medium over `MESSAGING_MEDIA_MAX_BYTES`. */
  media_too_large: 422,
  rate_limited: 429,
  /**
   * A business-initiated send to a new person when the business portfolio's messaging limit
   * (distinct people in a moving 24 hours) is reached; `Retry-After` says when one leaves it.
   */
  messaging_limit_reached: 429,
  internal_error: 500,
  provider_error: 502,
  /** The provider's bytes of a medium do not match the SHA-256 its webhook gave. */
  media_checksum_mismatch: 502,
  unavailable: 503,
  provider_timeout: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** One entry of `details`: which input field was wrong, and how. */
export interface ErrorDetail {
  field: string;
  message: string;
  /** The id of the existing resource that holds a unique value (`conflict`). */
  id?: string;
}

export interface AppErrorOptions {
  details?: ErrorDetail[];
  requiredScopes?: readonly string[];
  /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * `Retry-After` of a 503 `unavailable`, in seconds: a database restart or failover takes
 * seconds; a saturated pool frees within one.
 */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/**
 * An expected failure with a stable `code`. The `message` is shown to the client, so it must
 * never contain a secret or an internal detail; put those in `cause` (logged, never sent).
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly requiredScopes: readonly string[] | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
    this.requiredScopes = options.requiredScopes;
    this.headers = options.headers ?? {};
    // A 503 `unavailable` always says when to retry (unless it names its own time).
    if (code === 'unavailable' && !('retry-after' in this.headers))
      this.headers = { ...this.headers, 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) };
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/**
 * A refusal of an operator command or service call (bad name, unknown portal, ...). `code` is
 * `not_found` when what the input names does not exist (the CLI then says where it looked).
 */
export class UsageError extends Error {
  readonly code: 'refused' | 'not_found';

  constructor(message: string, code: 'refused' | 'not_found' = 'refused') {
    super(message);
    this.name = 'UsageError';
    this.code = code;
  }
}

/** A configuration the service cannot start with; its message names the variable at fault. */
export class ConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}
