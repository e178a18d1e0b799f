/**
 * A benchmark server, run as a child process (`fork`) so that the load generator and the server
 * never share an event loop. Talks to its parent over IPC:
 *
 * - sends `{type: 'ready', port, token?, portalCode?}` once listening;
 * - answers `{type: 'stats'}` with the peak RSS (bytes) and, for the app, the cache state;
 * - answers `{type: 'regenerate', portalCode}` by regenerating the portal's token through this
 *   instance's services, with the monotonic time (ns) at which the call returned;
 * - `{type: 'profile-start'}` / `{type: 'profile-stop', path}` record a V8 CPU profile of the
 *   main thread between the two (the steady state only, without start-up) into `path`;
 * - `{type: 'pages-seed', portalCode, rows}` gives the portal's administrator a password and
 *   fills its pages' tables (`pages-seed.ts`), answering `pages-seeded` with the sign-in;
 * - `{type: 'trace-start'}` / `{type: 'trace-stop'}` record the statements the app sends to the
 *   database between the two and answer `traced` with each read's plan (`pages-seed.ts`);
 * - closes and exits on `{type: 'stop'}`.
 *
 * `fastify-logged` is the Fastify constant route with the app's logging (its logger, access line
 * and request ids): what one access line costs a route that does nothing else.
 *
 * Usage: `bench/server.ts floor | fastify | fastify-logged | app` (`child.ts` runs it bundled by
 * esbuild, as `npm start` runs `dist/main.js`, without the TypeScript loader). The app reads its
 * configuration from the environment like `npm start` does (DATABASE_URL or DATA_DIR,
 * TOKEN_CACHE_SIZE, LOG_LEVEL); `BENCH_CREATE_PORTAL=1` makes it create a portal and report its
 * token (its scopes BENCH_PORTAL_SCOPES, comma-separated, when given).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import Fastify from 'fastify';
import type { PagesSeeded, StatementTrace, TracedStatement } from './pages-seed.ts';

export type ServerKind = 'floor' | 'fastify' | 'fastify-logged' | 'app';

export type ToServer =
  | { type: 'stats' }
  | { type: 'regenerate'; portalCode: string }
  | { type: 'profile-start' }
  | { type: 'profile-stop'; path: string }
  | { type: 'pages-seed'; portalCode: string; rows: number }
  | { type: 'trace-start' }
  | { type: 'trace-stop' }
  | { type: 'stop' };

export type FromServer =
  | { type: 'ready'; port: number; token?: string; portalCode?: string }
  | {
      type: 'stats';
      maxRssBytes: number;
      /** CPU time (user + system) used so far, in microseconds. */
      cpuMicros: number;
      cache?: { trusted: boolean; size: number; hits: number; misses: number };
    }
  | { type: 'regenerated'; token: string; returnedAtNs: string }
  | { type: 'profiled'; path: string | null }
  | ({ type: 'pages-seeded' } & PagesSeeded)
  | { type: 'trace-started' }
  | { type: 'traced'; statements: TracedStatement[] }
  | { type: 'error'; message: string };

/** The same body shape as a verify answer, so the floor serialises as much as the app does. */
const BODY = {
  success: true,
  data: {
    portalCode: '48213907',
    userId: 1,
    isMainAdmin: true,
    scopes: ['messaging:send', 'crm:contacts:read', 'support:tickets:read'],
  },
};

function send(message: FromServer): void {
  process.send?.(message);
}

/**
 * Peak resident set size of this process, in bytes: the kernel's high-water mark (`VmHWM`) on
 * Linux. Not `process.resourceUsage().maxRSS`: on Linux that survives `exec`, so a forked child
 * would report its parent's (the load generator's) peak. Elsewhere, the largest RSS sampled.
 */
let sampledPeak = process.memoryUsage.rss();
setInterval(() => {
  sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
}, 100).unref();
function maxRssBytes(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch {
    /* not Linux */
  }
  return Math.max(sampledPeak, process.memoryUsage.rss());
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function main(kind: ServerKind): Promise<void> {
  let close: () => Promise<void>;
  let onMessage: (message: ToServer) => Promise<void> = async () => {};

  if (kind === 'floor') {
    const server = createServer((_req, res) => {
      const body = JSON.stringify(BODY);
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      res.end(body);
    });
    send({ type: 'ready', port: await listen(server) });
    close = () => new Promise((resolve) => server.close(() => resolve()));
  } else if (kind === 'fastify') {
    const app = Fastify({ logger: false });
    app.get('/', async () => BODY);
    await app.listen({ host: '127.0.0.1', port: 0 });
    send({ type: 'ready', port: (app.server.address() as AddressInfo).port });
    close = () => app.close();
  } else if (kind === 'fastify-logged') {
    const [{ asyncStdout, createLogger }, { requestLoggingOptions }] = await Promise.all([
      import('../src/platform/logger.ts'),
      import('../src/platform/request-logger.ts'),
    ]);
    // Logged as the app logs (main.ts, app.ts), at the app's LOG_LEVEL.
    const logger = createLogger(process.env.LOG_LEVEL ?? 'info', asyncStdout());
    const app = Fastify(requestLoggingOptions(logger));
    app.get('/', async () => BODY);
    await app.listen({ host: '127.0.0.1', port: 0 });
    send({ type: 'ready', port: (app.server.address() as AddressInfo).port });
    close = async () => {
      await app.close();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    };
  } else {
    // The app's modules are loaded only here, so the floor's memory is the floor's.
    const [
      { buildApp },
      { CLI_ACTOR },
      { parseConfig },
      db,
      { asyncStdout, createLogger },
      { createServices },
      { retainTickObjectShape },
    ] = await Promise.all([
      import('../src/app.ts'),
      import('../src/audit/audit-log.ts'),
      import('../src/config.ts'),
      import('../src/db/client.ts'),
      import('../src/platform/logger.ts'),
      import('../src/services.ts'),
      import('../src/platform/tick-shape.ts'),
    ]);
    // As main.ts starts.
    retainTickObjectShape();
    const config = parseConfig();
    // As `npm start` logs: asynchronously to stdout (main.ts), flushed at close.
    const logger = createLogger(config.LOG_LEVEL, asyncStdout());
    const storage = await db.openStorage(db.storageTargetFor(config));
    await storage.migrate();
    const services = createServices({ config, storage, logger });
    const app = await buildApp({ services, logger });
    let created: { token: string; portalCode: string } | undefined;
    if (process.env.BENCH_CREATE_PORTAL === '1') {
      created = await services.accounts.createPortal({
        name: 'Benchmark portal',
        adminEmail: `bench-${process.pid}-${Date.now()}@example.test`,
        // BENCH_PORTAL_SCOPES (comma-separated) for a bench that reads other routes.
        scopes: (
          process.env.BENCH_PORTAL_SCOPES ?? 'messaging:send,crm:contacts:read,support:tickets:read'
        ).split(','),
        actor: CLI_ACTOR,
      });
    }
    await app.listen({ host: '127.0.0.1', port: 0 });
    send({
      type: 'ready',
      port: (app.server.address() as AddressInfo).port,
      ...(created ? { token: created.token, portalCode: created.portalCode } : {}),
    });
    close = async () => {
      await app.close();
      await storage.close();
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
    };
    let trace: StatementTrace | undefined;
    onMessage = async (message) => {
      if (message.type === 'stats') {
        const { trusted, size, hits, misses } = services.tokenVerification.cache.stats();
        send({
          type: 'stats',
          maxRssBytes: maxRssBytes(),
          cpuMicros: cpuMicros(),
          cache: { trusted, size, hits, misses },
        });
      } else if (message.type === 'pages-seed') {
        const { seedPages } = await import('./pages-seed.ts');
        send({ type: 'pages-seeded', ...(await seedPages(storage, services, message)) });
      } else if (message.type === 'trace-start') {
        const { statementTrace } = await import('./pages-seed.ts');
        trace ??= statementTrace(storage);
        trace.start();
        send({ type: 'trace-started' });
      } else if (message.type === 'trace-stop' && trace) {
        send({ type: 'traced', statements: await trace.stop() });
      } else if (message.type === 'regenerate') {
        const { token } = await services.accounts.regenerateToken({
          portalCode: message.portalCode,
          actor: CLI_ACTOR,
        });
        send({ type: 'regenerated', token, returnedAtNs: String(process.hrtime.bigint()) });
      }
    };
  }

  const profiler = new Session();
  profiler.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      profiler.post(method, params, (err, result) => (err ? reject(err) : resolve(result))),
    );
  process.on('message', (message: ToServer) => {
    if (message.type === 'profile-start') {
      void post('Profiler.enable')
        .then(() => post('Profiler.start'))
        .then(() => send({ type: 'profiled', path: null }));
      return;
    }
    if (message.type === 'profile-stop') {
      void post('Profiler.stop').then((result) => {
        mkdirSync(dirname(message.path), { recursive: true });
        writeFileSync(message.path, JSON.stringify((result as { profile: unknown }).profile));
        send({ type: 'profiled', path: message.path });
      });
      return;
    }
    if (message.type === 'stop') {
      void close().finally(() => process.exit(0));
    } else if (message.type === 'stats' && kind !== 'app') {
      send({ type: 'stats', maxRssBytes: maxRssBytes(), cpuMicros: cpuMicros() });
    } else {
      onMessage(message).catch((err: unknown) =>
        send({
          type: 'error',
          message:
            err instanceof Error
              ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}`
              : String(err),
        }),
      );
    }
  });
  // The parent died: do not linger.
  process.on('disconnect', () => void close().finally(() => process.exit(0)));
}

const kind = process.argv[2] as ServerKind | undefined;
if (kind !== 'floor' && kind !== 'fastify' && kind !== 'fastify-logged' && kind !== 'app') {
  console.error('usage: bench/server.ts floor | fastify | fastify-logged | app');
  process.exit(2);
}
main(kind).catch((err: unknown) => {
  send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  process.exit(1);
});
