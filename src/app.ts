/**
 * buildApp: the HTTP application. Registers Fastify's plugins, then the features, in a fixed
 * order. Performs no I/O at import; `services` carries the open storage.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { externalApi, EXTERNAL_API_PREFIX } from './external-api/plugin.ts';
import {
  startTokenChangeListener,
  type ListenerTiming,
  type TokenChangeListener,
} from './external-api/token-change-listener.ts';
import {
  clientErrorHandler,
  installErrorHandlers,
  requestIdFor,
  sendError,
} from './platform/error-envelope.ts';
import { AppError } from './platform/errors.ts';
import { AccessLogController } from './platform/access-log.ts';
import type { Services } from './services.ts';

/** Largest request body accepted, in bytes (64 KiB). */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface BuildAppOptions {
  services: Services;
  /** A pino logger made with `createLogger` (tests give it a stream to read the lines). */
  logger: FastifyBaseLogger;
  /** Overrides of the token change listener's timings (tests shorten the reconnect backoff). */
  listenerTiming?: Partial<ListenerTiming>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's token change listener (its state shows in tests and the benchmark). */
    tokenChangeListener: TokenChangeListener;
  }
}

export async function buildApp({
  services,
  logger,
  listenerTiming,
}: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    loggerInstance: logger,
    genReqId: (req) => requestIdFor(req, randomUUID),
    trustProxy: config.TRUST_PROXY,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    // One access line per request instead of Fastify's two (see access-log.ts).
    logController: new AccessLogController(logger),
    clientErrorHandler,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandlers(app);

  app.get('/healthz', { logLevel: 'warn' }, async () => ({ status: 'ok' }));
  app.get('/readyz', { logLevel: 'warn' }, async (request, reply) => {
    try {
      await services.storage.ping();
      return { status: 'ready' };
    } catch (err) {
      request.log.warn({ err }, 'storage is not answering');
      return sendError(reply, new AppError('unavailable', 'Storage is not answering.'));
    }
  });

  // The verification cache is trusted only while this listener hears token changes.
  const listener = startTokenChangeListener({
    storage: services.storage,
    cache: services.principalCache,
    logger,
    listenUrl: config.DATABASE_LISTEN_URL,
    ...(listenerTiming ? { timing: listenerTiming } : {}),
  });
  app.decorate('tokenChangeListener', listener);
  app.addHook('onClose', () => listener.close());
  await listener.ready;

  await app.register(externalApi, {
    prefix: EXTERNAL_API_PREFIX,
    lookupPrincipal: (tokenHash) => services.principalCache.lookup(tokenHash),
  });

  return app;
}
