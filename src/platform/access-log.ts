/**
 * One access line per request (`request completed`: reqId, method, path without query, status,
 * response time in milliseconds) instead of Fastify's two (`incoming request` + `request
 * completed`). Failed requests keep Fastify's own `request errored` line; every other internal
 * log line of Fastify is unchanged. The path is logged through `loggablePath`, so a token-shaped
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
    if (this.isLogDisabled(request) || !LOGS_INFO.has(reply.log.level)) return;
    this.#accessLog.info(
      {
        reqId: request.id,
        method: request.method,
        path: loggedPath(request),
        statusCode: reply.statusCode,
        responseTime: reply.elapsedTime,
      },
      'request completed',
    );
  }
}
