/**
 * buildApp: the HTTP application, as the ordered list of its registrations: Fastify's options,
 * the platform's hooks, then the features, each in its own encapsulated context: the external
 * API (JSON only, no cookie, form or page-header hooks) and the pages (cookies, forms, helmet). Performs no I/O at import; `services`
 * carries the open storage.
 *
 * @see docs/architecture.md
 */
import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ListenerTiming, TokenChangeListener } from './accounts/token-change-listener.ts';
import { listAuditEvents } from './audit/audit-log.ts';
import { contactsRoutes } from './contacts/contacts-routes.ts';
import { cspDirectives } from './browser/content-security-policy.ts';
import { createPageSessions } from './browser/web-session.ts';
import { apiReferencePage } from './external-api/docs-page.ts';
import { OPENAPI_PATH, swaggerOptions } from './external-api/openapi.ts';
import { EXTERNAL_API_PREFIX, externalApi } from './external-api/plugin.ts';
import { authorizationRoutes } from './partner/authorization-routes.ts';
import { providerCallbacksRoutes } from './partner/provider-callbacks-routes.ts';
import { AccessLogController } from './platform/access-log.ts';
import {
  clientErrorHandler,
  installErrorHandlers,
  requestIdFor,
  sendError,
  toAppError,
} from './platform/error-envelope.ts';
import { probes } from './platform/probes.ts';
import { lazyRequestLogger } from './platform/request-logger.ts';
import { connectRedis } from './platform/redis.ts';
import { recordRoutes } from './platform/route-table.ts';
import type { Services } from './services.ts';
import { ticketsRoutes } from './tickets/tickets-routes.ts';
import { webRoutes } from './web/web-routes.tsx';

/** Largest request body accepted, in bytes (64 KiB). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** Where the OpenAPI document is served (no token needed). */
export const OPENAPI_URL = `${EXTERNAL_API_PREFIX}${OPENAPI_PATH}`;

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
    // request.log becomes a pino child only when a request writes a line (request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    clientErrorHandler,
    // The router's own refusals (a malformed URL encoding, a path parameter over the length
    // limit) get the envelope too, and never echo the path.
    frameworkErrors: (err, _request, reply) => {
      void sendError(reply, toAppError(err));
    },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // A schema that says `additionalProperties: false` refuses unknown fields (400 naming them)
    // instead of silently dropping them: a misspelt optional field is a client bug to report.
    // `allowUnionTypes`: a contact attribute is `type: [string, number, boolean]`, one error
    // message instead of an `anyOf`'s three.
    ajv: { customOptions: { removeAdditional: false, allowUnionTypes: true } },
  });

  recordRoutes(app);
  // Callback style, not async: no promise per request for a header.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  installErrorHandlers(app);

  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, logger) : undefined;
  if (redis) app.addHook('onClose', async () => void (await redis.quit()));

  // Before any route: the document is built from the routes registered after it.
  await app.register(swagger, swaggerOptions(EXTERNAL_API_PREFIX));
  await app.register(probes, { ping: () => services.storage.ping() });

  // The verification cache is trusted only while this listener hears token changes.
  const listener = await services.tokenVerification.listen(listenerTiming);
  app.decorate('tokenChangeListener', listener);
  app.addHook('onClose', () => listener.close());

  await app.register(externalApi, {
    prefix: EXTERNAL_API_PREFIX,
    lookupPrincipal: services.tokenVerification.lookup,
    cachedPrincipal: services.tokenVerification.cached,
    rateLimits: {
      perMinute: config.RATE_LIMIT_PER_MINUTE,
      failuresPerMinute: config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
      redis,
      keyPrefix: config.REDIS_KEY_PREFIX,
      syncMs: config.RATE_LIMIT_SYNC_MS,
    },
    routes: [ticketsRoutes(services.tickets), contactsRoutes(services.contacts)],
  });

  // The pages and the provider's callbacks, in a context of their own: cookies, form bodies and
  // the pages' security headers run their hooks on these routes only, never on an API request.
  await app.register(async (pages) => {
    await pages.register(fastifyCookie);
    await pages.register(fastifyFormbody);
    // Referrer-Policy: no-referrer keeps the callback's query (code, state) out of any Referer
    // header.
    await pages.register(fastifyHelmet, {
      global: true,
      referrerPolicy: { policy: 'no-referrer' },
      contentSecurityPolicy: { useDefaults: false, directives: cspDirectives(config.isProduction) },
      hsts: config.isProduction,
    });
    await pages.register(apiReferencePage, { document: () => app.swagger() });
    const sessions = createPageSessions(services.sessions, config.isProduction);
    await pages.register(webRoutes, {
      sessions,
      sessionTtlSeconds: config.SESSION_TTL_SECONDS,
      signInLimits: { redis, keyPrefix: config.REDIS_KEY_PREFIX },
      accounts: services.accounts,
      partner: services.partner,
      contacts: services.contacts,
      recentAuditEvents: (portalId) =>
        listAuditEvents(services.storage.db, portalId, { limit: 20 }),
    });
    await pages.register(authorizationRoutes, { sessions, partner: services.partner });
    await pages.register(providerCallbacksRoutes, { partner: services.partner });
  });

  return app;
}
