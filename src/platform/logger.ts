/**
 * pino options shared by the server and the CLI.
 *
 * Invariant: no credential reaches a log line. Requests are logged as method + path only: the
 * query string is dropped because the OAuth callback carries `code` and `state` there, and no
 * header is logged. Redaction is the second line of defence for objects logged by hand.
 *
 * @see docs/security.md (secrets never reach a log line)
 */
import type { FastifyRequest } from 'fastify';
import {
  pino,
  stdSerializers,
  type DestinationStream,
  type BaseLogger,
  type Logger as PinoLogger,
  type LoggerOptions,
} from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers.cookie',
  'headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.accessToken',
  '*.access_token',
  '*.client_secret',
  '*.authorizationCode',
];

/**
 * The path an access line or a request serializer logs: the path without its query, or, for a
 * route whose config sets `logRoutePattern` (its path carries personal data, such as
 * `/crm/contacts/by-phone/:phone`), the route's pattern instead.
 */
export function loggedPath(req: FastifyRequest): string {
  const route = req.routeOptions as Partial<FastifyRequest['routeOptions']> | undefined;
  return route?.config?.logRoutePattern && route.url ? route.url : pathOnly(req.url);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Log the route's pattern instead of its path: the path carries personal data. */
    logRoutePattern?: boolean;
  }
}

/** The path of a request URL without its query string. */
export function pathOnly(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * pino's error serializer, minus query parameters: a failed Drizzle query puts
 * `params: <values>` in its message (and stack), and those values can be user input or secrets.
 */
export function serializeError(err: Error): Record<string, unknown> {
  const out = stdSerializers.err(err) as unknown as Record<string, unknown>;
  const scrub = (text: unknown) =>
    typeof text === 'string'
      ? text.replace(/\nparams: [\s\S]*?(?=\n {4}at |$)/g, '\nparams: [REDACTED]')
      : text;
  out.message = scrub(out.message);
  out.stack = scrub(out.stack);
  if (out.cause && typeof out.cause === 'object') {
    const cause = out.cause as Record<string, unknown>;
    cause.message = scrub(cause.message);
    cause.stack = scrub(cause.stack);
  }
  return out;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    serializers: {
      req: (req: FastifyRequest) => ({ method: req.method, path: loggedPath(req) }),
      err: serializeError,
    },
  };
}

/** The process logger: JSON lines to `stream` (default stdout). */
export function createLogger(level: string, stream?: DestinationStream): PinoLogger {
  return stream ? pino(loggerOptions(level), stream) : pino(loggerOptions(level));
}

/**
 * The logger services receive: pino's, seen through only what services use. Services never
 * import Fastify; Fastify's logger (the same pino instance) fits this type.
 */
export interface Logger extends Pick<
  BaseLogger,
  'level' | 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
> {
  child(bindings: Record<string, unknown>): Logger;
}
