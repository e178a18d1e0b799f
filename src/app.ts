/**
 * buildApp: the HTTP application. Registers Fastify's plugins, then the features, in a fixed
 * order. Performs no I/O at import; `services` carries the open storage.
 */
import { randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { externalApi, EXTERNAL_API_PREFIX } from './external-api/plugin.ts';
import { authorizationRoutes } from './partner/authorization-routes.ts';
import { isKnownCapability } from './partner/capability-words.ts';
import { providerCallbacksRoutes } from './partner/provider-callbacks-routes.ts';
import {
  clientErrorHandler,
  installErrorHandlers,
  requestIdFor,
  sendError,
} from './platform/error-envelope.ts';
import { AppError } from './platform/errors.ts';
import type { Services } from './services.ts';
import { cspDirectives } from './web/content-security-policy.ts';
import { webRoutes } from './web/web-routes.tsx';

/** Largest request body accepted, in bytes (64 KiB). */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface BuildAppOptions {
  services: Services;
  /** A pino logger made with `createLogger` (tests give it a stream to read the lines). */
  logger: FastifyBaseLogger;
}

export async function buildApp({ services, logger }: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    loggerInstance: logger,
    genReqId: (req) => requestIdFor(req, randomUUID),
    trustProxy: config.TRUST_PROXY,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    clientErrorHandler,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
  });

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

  await app.register(externalApi, {
    prefix: EXTERNAL_API_PREFIX,
    lookupPrincipal: (hash) => services.accounts.principalForTokenHash(hash),
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
