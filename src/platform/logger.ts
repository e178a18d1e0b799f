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
 * The path an access line or a request serializer logs: the path without its query and with
 * token-shaped segments masked (`loggablePath`), or, for a
 * route whose config sets `logRoutePattern` (its path carries personal data, such as
 * `/crm/contacts/by-phone/:phone`), the route's pattern instead.
 */
export function loggedPath(req: FastifyRequest): string {
  const route = req.routeOptions as Partial<FastifyRequest['routeOptions']> | undefined;
  return route?.config?.logRoutePattern && route.url ? route.url : loggablePath(req.url);
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

/** What a masked token-shaped path segment or text is replaced with. */
export const MASK = '[REDACTED]';
/**
 * The API token prefix, in any case (src/accounts/api-token.ts; platform/ cannot import it).
 * A typo'd or truncated token is still mostly secret, so the prefix alone marks one.
 */
const TOKEN_PREFIX_ANY_CASE = /ptk_/i;
/** A token-shaped run in free text: the prefix and the base62 characters after it. */
const TOKEN_IN_TEXT = /ptk_[0-9A-Za-z]*/gi;
/** Cheap pre-check: a path without either cannot hold a token, even percent-encoded. */
const MAY_HOLD_TOKEN = /ptk|%/i;

/** Byte-wise `%XX` decoding that never throws, repeated so `%2570tk_` is seen too. */
function lenientlyDecoded(segment: string): string {
  let text = segment;
  for (let round = 0; round < 3 && text.includes('%'); round++) {
    const next = text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
    if (next === text) break;
    text = next;
  }
  return text;
}

/**
 * The form of a request URL that may be logged: the path without its query string, with every
 * segment that holds an API token (`ptk_…`, any case, also percent-encoded) replaced by
 * {@link MASK}. A client that puts its token in the path (`GET /api/v1/external/ptk_…`) does
 * not get it written to the log.
 *
 * @param url the request target as received (`/path?query`), in any encoding.
 * @returns e.g. `/api/v1/external/[REDACTED]` for `/api/v1/external/ptk_…?x=1`.
 * @see https://datatracker.ietf.org/doc/html/rfc3986#section-3.3 (path segments)
 */
export function loggablePath(url: string): string {
  const path = pathOnly(url);
  if (!MAY_HOLD_TOKEN.test(path)) return path;
  return path
    .split('/')
    .map((segment) => (TOKEN_PREFIX_ANY_CASE.test(lenientlyDecoded(segment)) ? MASK : segment))
    .join('/');
}

/**
 * `text` with every token-shaped run (`ptk_` + base62, any case) replaced by {@link MASK}: for
 * messages that quote a URL, such as Fastify's own "Reply was already sent … in /path".
 */
export function maskTokens(text: string): string {
  return TOKEN_PREFIX_ANY_CASE.test(text) ? text.replace(TOKEN_IN_TEXT, MASK) : text;
}

/**
 * pino's error serializer, minus query parameters: a failed Drizzle query puts
 * `params: <values>` in its message (and stack), and those values can be user input or secrets.
 * Token-shaped text is masked too ({@link maskTokens}): an error may quote the request URL.
 */
export function serializeError(err: Error): Record<string, unknown> {
  const out = stdSerializers.err(err) as unknown as Record<string, unknown>;
  const scrub = (text: unknown) =>
    typeof text === 'string'
      ? maskTokens(text.replace(/\nparams: [\s\S]*?(?=\n {4}at |$)/g, '\nparams: [REDACTED]'))
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
    hooks: {
      // String arguments (the message) may quote a URL, as Fastify's own "Route GET:/… not
      // found" does. Objects go through the serializers above, but with no message pino copies
      // `err.message` into `msg` unserialised (Fastify's `log.warn({ err })` for "Reply was
      // already sent … in /…"), so that message is given explicitly, masked.
      logMethod(args, method) {
        const [first] = args as unknown[];
        if (args.length === 1 && typeof first === 'object' && first !== null) {
          const err: unknown = first instanceof Error ? first : (first as { err?: unknown }).err;
          if (err instanceof Error && !('msg' in first)) args.push(maskTokens(err.message));
        }
        for (let i = 0; i < args.length; i++) {
          const arg: unknown = args[i];
          if (typeof arg === 'string') args[i] = maskTokens(arg);
        }
        method.apply(this, args);
      },
    },
  };
}

/** The process logger: JSON lines to `stream` (default stdout). */
export function createLogger(level: string, stream?: DestinationStream): PinoLogger {
  return stream ? pino(loggerOptions(level), stream) : pino(loggerOptions(level));
}

/**
 * The server's log destination: stdout written asynchronously (pino's SonicBoom with
 * `sync: false`), so a request never waits for a `write(2)`; lines that accumulate while a write
 * is in flight leave in one. Nothing is lost: a clean shutdown waits for `logger.flush` (see
 * main.ts), and pino flushes this destination synchronously when the process exits any other
 * way (a start-up failure, an uncaught error).
 *
 * SonicBoom runs in buffer mode, each line handed over as a `Buffer`: in its default (utf8) mode
 * it measures the whole pending string (`Buffer.byteLength`) at every line written while a write
 * is in flight, so a burst of n lines costs time in n²; in buffer mode it adds lengths. Measured
 * under `npm run bench`'s load: 1.5 µs less CPU per logged API call (docs/how-to/deploy.md).
 *
 * @see https://getpino.io/#/docs/asynchronous
 * @see https://github.com/pinojs/sonic-boom#api (`contentMode`)
 */
export function asyncStdout(): DestinationStream & { flush(cb: (err?: Error) => void): void } {
  const stdout = pino.destination({ dest: 1, sync: false, contentMode: 'buffer' });
  // SonicBoom's types declare `write(string)` only; in buffer mode it takes a Buffer.
  const write = stdout.write.bind(stdout) as unknown as (chunk: Buffer) => boolean;
  return {
    write: (line: string) => void write(Buffer.from(line)),
    flush: (cb) => stdout.flush(cb),
  };
}

/**
 * Whether the server's log is for a person to read: development (not production) with stdout
 * a terminal. Anything else (production, a pipe, a file, a log collector) gets JSON lines.
 */
export function wantsPrettyLogs(
  isProduction: boolean,
  stdoutIsTty = process.stdout.isTTY,
): boolean {
  return !isProduction && stdoutIsTty === true;
}

/**
 * The server's log destination: {@link asyncStdout} (JSON lines), or, when
 * {@link wantsPrettyLogs}, pino-pretty writing coloured, aligned lines to stdout. pino-pretty is
 * imported only then, so production never loads it. The lines are the same objects (same
 * redaction and serializers); only their rendering differs.
 *
 * @see https://github.com/pinojs/pino-pretty#usage-with-pino (as a stream)
 */
export async function serverLogDestination(isProduction: boolean): Promise<DestinationStream> {
  if (!wantsPrettyLogs(isProduction)) return asyncStdout();
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    colorize: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    // Synchronous: a terminal is read by a person, and a line must not be lost on exit.
    sync: true,
  });
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
