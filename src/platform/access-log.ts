/**
 * One access line per request (`request completed`: reqId, method, path without query, status,
 * response time in milliseconds) instead of Fastify's two (`incoming request` + `request
 * completed`). A request the error handler answered carries its error `code` on that same line
 * (and, for a 5xx, the error itself at level `error`) instead of a line of its own
 * ({@link noteRequestError}). Requests whose response stream failed keep Fastify's own `request
 * errored` line; every other internal log line of Fastify is unchanged. The path is logged through `loggablePath`, so a token-shaped
 * segment (`GET /api/v1/external/ptk_…`) is masked.
 *
 * Why: the log was the largest per-request cost of a cached token check (measured with
 * `npm run bench`, CPU per request). The access line's fields are fixed primitives that can
 * never hold a credential (the query string is dropped, token-shaped path segments masked), so
 * it is written through a child logger without the redaction paths: pino's wildcard redaction
 * walks and copies every line it touches, and here it could never match anything.
 *
 * @see ./logger.ts for the invariant that no credential reaches a log line
 */
import {
  LogController,
  type FastifyBaseLogger,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { loggedPath } from './logger.ts';

/** Levels at which a route's access line is written (a route may log at `warn` only). */
const LOGS_INFO = new Set(['info', 'debug', 'trace']);

/** What the error handler answered, kept until the access line (only failed requests). */
interface AnsweredError {
  /** The envelope's `code` (`invalid_request`, `internal_error`, …). */
  code: string;
  /** The error, for a 5xx only (its stack belongs in the log; a 4xx is the client's). */
  err?: unknown;
}
const answeredErrors = new WeakMap<FastifyRequest, AnsweredError>();

/**
 * Remember the error a request was answered with, so that its one access line says so: the
 * `code` for every error, and `err` (serialized by the logger's scrubbing serializer) for a 5xx,
 * written at level `error`. Replaces the separate `request refused` / `request failed` lines.
 */
export function noteRequestError(request: FastifyRequest, answered: AnsweredError): void {
  answeredErrors.set(request, answered);
}

export class AccessLogController extends LogController {
  readonly #accessLog: FastifyBaseLogger;

  constructor(logger: FastifyBaseLogger) {
    super();
    this.#accessLog = logger.child({}, { redact: { paths: [] } });
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (error) return super.requestCompleted(error, request, reply, metadata);
    const answered = answeredErrors.get(request);
    if (answered?.err !== undefined) {
      // A server error is logged whatever the route's level, with its (scrubbed) error.
      this.#accessLog.error(
        { ...this.#fields(request, reply), code: answered.code, err: answered.err },
        'request completed',
      );
      return;
    }
    if (this.isLogDisabled(request) || !LOGS_INFO.has(reply.log.level)) return;
    this.#accessLog.info(
      answered
        ? { ...this.#fields(request, reply), code: answered.code }
        : this.#fields(request, reply),
      'request completed',
    );
  }

  #fields(request: FastifyRequest, reply: FastifyReply) {
    return {
      reqId: request.id,
      method: request.method,
      path: loggedPath(request),
      statusCode: reply.statusCode,
      responseTime: reply.elapsedTime,
    };
  }
}
