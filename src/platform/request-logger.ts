/**
 * The request's logger (`request.log`), made only when a line is written.
 *
 * Fastify gives every request a pino child carrying `reqId`; making one copies the parent's
 * bindings and runs the redaction over the new binding, on every request, although most
 * requests never log through it (the access line has its own logger, access-log.ts). This
 * factory returns a small stand-in instead: the same methods and level, and the real child
 * (`parent.child({ reqId }, options)`, identical to Fastify's default) is made at the first line
 * the stand-in writes at an enabled level. So every line written is what it was, with its
 * `reqId`, redaction and serializers. {@link requestLoggingOptions} gives Fastify this factory
 * with the rest of how requests are logged.
 *
 * @see https://fastify.dev/docs/latest/Reference/Server/#childloggerfactory
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilent } from 'pino';
import { AccessLogController } from './access-log.ts';
import { requestIdFor } from './error-envelope.ts';

type LevelName = Exclude<LevelWithSilent, 'silent'>;

/** pino's numeric levels (fixed by pino; custom levels are not used here). */
const LEVEL_VALUES: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Infinity,
};

class LazyRequestLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  #write(level: LevelName, args: unknown[]): void {
    if (this.#child) return void Reflect.apply(this.#child[level], this.#child, args);
    if (!this.isLevelEnabled(level)) return;
    const child = this.#real();
    Reflect.apply(child[level], child, args);
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  isLevelEnabled(level: string): boolean {
    return (LEVEL_VALUES[level] ?? 0) >= (LEVEL_VALUES[this.level] ?? 0);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/**
 * Fastify's `childLoggerFactory`: a request logger that becomes `logger.child(bindings,
 * options)` at its first written line.
 */
export function lazyRequestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  // The stand-in has every method and property of FastifyBaseLogger that Fastify and our code
  // use; its methods take pino's argument forms and hand them on unchanged.
  return new LazyRequestLogger(logger, bindings, options);
}

/**
 * Fastify's options for how requests are logged: through `logger`, one access line per request
 * (access-log.ts), request ids kept from a sane `X-Request-Id` or minted (a UUID), and
 * {@link lazyRequestLogger}. The app and the benchmark's reference route (`bench/server.ts`)
 * use the same.
 *
 * @returns the `loggerInstance`, `genReqId`, `logController` and `childLoggerFactory` fields of
 *   Fastify's server options, to spread into them; a new access-line controller each call.
 *
 * @see https://fastify.dev/docs/latest/Reference/Server/#logcontroller
 */
export function requestLoggingOptions(logger: FastifyBaseLogger) {
  return {
    loggerInstance: logger,
    genReqId: (req: IncomingMessage) => requestIdFor(req, randomUUID),
    // One access line per request instead of Fastify's two (see access-log.ts).
    logController: new AccessLogController(logger),
    // request.log becomes a pino child only when a request writes a line (above).
    childLoggerFactory: lazyRequestLogger,
  };
}
