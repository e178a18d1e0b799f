/**
 * buildApp: the HTTP application. Registers Fastify's plugins, then the features, in a fixed
 * order. Performs no I/O at import; `services` carries the open storage.
 */
import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import { authorizationRoutes } from './partner/authorization-routes.ts';
import { isKnownCapability } from './partner/capability-words.ts';
import { providerCallbacksRoutes } from './partner/provider-callbacks-routes.ts';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import { Type } from 'typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { ConfigError } from './config.ts';
import { EXTERNAL_API_PREFIX, externalApi } from './external-api/plugin.ts';
import { OPENAPI_PATH, swaggerOptions } from './external-api/openapi.ts';
import {
  startTokenChangeListener,
  type ListenerTiming,
  type TokenChangeListener,
} from './external-api/token-change-listener.ts';
import {
  clientErrorHandler,
  errorEnvelopeFor,
  installErrorHandlers,
  toAppError,
  requestIdFor,
  sendError,
} from './platform/error-envelope.ts';
import { AppError } from './platform/errors.ts';
import { recordRoutes } from './platform/route-table.ts';
import { AccessLogController } from './platform/access-log.ts';
import type { Services } from './services.ts';
import { ticketsRoutes } from './tickets/tickets-routes.ts';
import { cspDirectives } from './web/content-security-policy.ts';
import { webRoutes } from './web/web-routes.tsx';

/** Content-Security-Policy of the API reference page (/docs): same origin only. */
const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

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
    // The router's own refusals (a malformed URL encoding, a path parameter over the length
    // limit) get the envelope too, and never echo the path.
    frameworkErrors: (err, _request, reply) => {
      void sendError(reply, toAppError(err));
    },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // A schema that says `additionalProperties: false` refuses unknown fields (400 naming them)
    // instead of silently dropping them: a misspelt optional field is a client bug to report.
    ajv: { customOptions: { removeAdditional: false } },
  });

  recordRoutes(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installErrorHandlers(app);

  // Plugins first (cookies, form bodies, security headers), then the features.
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);
  // Security headers on every response. Referrer-Policy: no-referrer keeps the callback's
  // query (code, state) out of any Referer header (DESIGN.md invariant 5).
  await app.register(fastifyHelmet, {
    global: true,
    referrerPolicy: { policy: 'no-referrer' },
    contentSecurityPolicy: { useDefaults: false, directives: cspDirectives(config.isProduction) },
    hsts: config.isProduction,
  });

  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, logger) : undefined;
  if (redis) app.addHook('onClose', async () => void (await redis.quit()));

  // Before any route: the document is built from the routes registered after it.
  await app.register(swagger, swaggerOptions(EXTERNAL_API_PREFIX));
  // The reference page and its JavaScript bundle are served from this process; no CDN, no
  // web fonts from elsewhere. It runs Scalar's bundle plus one inline bootstrap script, so it
  // gets its own Content-Security-Policy (same-origin only); the strict one stays everywhere
  // else. The page shows only the public API description, never user data.
  await app.register(async (docs) => {
    docs.addHook('onSend', async (_request, reply) => {
      reply.header('content-security-policy', DOCS_CSP);
    });
    await docs.register(scalar, {
      routePrefix: '/docs',
      logLevel: 'warn',
      configuration: {
        pageTitle: 'Portico API reference',
        content: () => app.swagger(),
        withDefaultFonts: false,
        telemetry: false,
        // A reference for integrators: no hosted AI agent, no Scalar developer toolbar.
        agent: { disabled: true },
        showDeveloperTools: 'never',
        authentication: { preferredSecurityScheme: 'AuthorizationHeader' },
      },
    });
  });

  app.get(
    '/healthz',
    {
      logLevel: 'warn',
      schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      logLevel: 'warn',
      schema: {
        response: {
          200: Type.Object({ status: Type.Literal('ready') }),
          503: errorEnvelopeFor(['unavailable']),
        },
      },
    },
    async (request, reply) => {
      try {
        await services.storage.ping();
        return { status: 'ready' };
      } catch (err) {
        request.log.warn({ err }, 'storage is not answering');
        return sendError(reply, new AppError('unavailable', 'Storage is not answering.'));
      }
    },
  );

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
    rateLimits: {
      perMinute: config.RATE_LIMIT_PER_MINUTE,
      failuresPerMinute: config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
      redis,
      keyPrefix: config.REDIS_KEY_PREFIX,
    },
    routes: [ticketsRoutes(services.tickets)],
  });
  await app.register(webRoutes, {
    services,
    partner: services.partner,
    isKnownCapability,
  });
  await app.register(authorizationRoutes, {
    services,
    partner: services.partner,
  });

  await app.register(providerCallbacksRoutes, { services });

  return app;
}

/** Where the OpenAPI document is served (no token needed). */
export const OPENAPI_URL = `${EXTERNAL_API_PREFIX}${OPENAPI_PATH}`;

/**
 * Connect to Redis before serving, so a wrong REDIS_URL stops start-up instead of silently
 * splitting the rate limits per instance. Afterwards commands fail fast while disconnected
 * (no offline queue) and the limits fail open (logged).
 *
 * @throws ConfigError when Redis does not answer; the message never contains the URL.
 */
async function connectRedis(url: string, logger: FastifyBaseLogger): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
  });
  redis.on('error', (err: Error) => logger.warn({ reason: err.message }, 'Redis error'));
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    // A configuration problem for the operator: one line at start-up (main.ts).
    throw new ConfigError(
      `REDIS_URL: Redis at REDIS_URL did not answer (${err instanceof Error ? err.message : String(err)})`,
      { cause: err },
    );
  }
  return redis;
}
