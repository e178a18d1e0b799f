/**
 * buildApp: the HTTP application, as the ordered list of its registrations: Fastify's options,
 * the platform's hooks, then the features, each in its own encapsulated context: the external
 * API (JSON only, no cookie, form or page-header hooks) and the pages (cookies, forms, helmet). Performs no I/O at import; `services`
 * carries the open storage.
 *
 * @see docs/architecture.md
 */
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ListenerTiming, TokenChangeListener } from './accounts/token-change-listener.ts';
import { listAuditEvents } from './audit/audit-log.ts';
import { contactsRoutes } from './contacts/contacts-routes.ts';
import { cspDirectives } from './browser/content-security-policy.ts';
import { sendNotFoundPage, wantsErrorPage } from './browser/error-pages.tsx';
import { createPageSessions } from './browser/web-session.ts';
import { apiReferencePage } from './external-api/docs-page.ts';
import { draftsRoutes } from './messaging/drafts/drafts-routes.ts';
import { campaignsRoutes } from './messaging/campaigns/campaigns-routes.ts';
import { mediaRoutes } from './messaging/media/media-routes.ts';
import { readReceiptsRoutes } from './messaging/outbound/read-receipts-routes.ts';
import { numbersRoutes } from './messaging/numbers/numbers-routes.ts';
import { templatesRoutes } from './messaging/templates/templates-routes.ts';
import { OPENAPI_PATH, swaggerOptions } from './external-api/openapi.ts';
import { keysRoutes } from './external-api/keys-routes.ts';
import { EXTERNAL_API_PREFIX, externalApi } from './external-api/plugin.ts';
import { messagingRoutes } from './messaging/service/messages-routes.ts';
import { authorizationRoutes } from './partner/oauth/authorization-routes.ts';
import { providerCallbacksRoutes } from './partner/callbacks/provider-callbacks-routes.ts';
import { type ProviderWebhookSink } from './partner/cloud-api/provider-webhook-events.ts';
import { providerWebhooksRoutes } from './partner/cloud-api/provider-webhooks-routes.ts';
import {
  BODY_LIMIT_BYTES,
  clientErrorHandler,
  installErrorHandlers,
  sendError,
  toAppError,
} from './platform/error-envelope.ts';
import { probes } from './platform/probes.ts';
import { AJV_CUSTOM_OPTIONS, sharedSchemaCompilers } from './platform/schema-compilers.ts';
import { requestLoggingOptions } from './platform/request-logger.ts';
import type { Redis } from 'ioredis';
import { connectRedis, isDegraded } from './platform/redis.ts';
import { recordRoutes } from './platform/route-table.ts';
import type { Services } from './services.ts';
import { ticketsRoutes } from './tickets/tickets-routes.ts';
import { eventsRoutes } from './webhooks/events-routes.ts';
import { webRoutes } from './web/web-routes.tsx';
import { signalsInForce } from './messaging/provider-webhooks/account-standing.ts';
import {
  changeMessagingSettings,
  messagingSettings,
} from './messaging/conversations/messaging-settings.ts';
import { conversationIdsOfContact } from './web/contacts/contact-page-data.ts';
import { createInboxReads } from './web/inbox-data.ts';
import type { InboxReads } from './web/inbox-reads.ts';
import {
  createConversationEvents,
  type ConversationEvents,
} from './messaging/store/conversation-changes.ts';
import { createAdmission, type Admission } from './platform/admission.ts';
import { loadKeyring } from './platform/keyring.ts';

/** Largest request body accepted, in bytes (64 KiB). */
export { BODY_LIMIT_BYTES };

/** Where the OpenAPI document is served (no token needed). */
export const OPENAPI_URL = `${EXTERNAL_API_PREFIX}${OPENAPI_PATH}`;

export interface BuildAppOptions {
  services: Services;
  /** A pino logger made with `createLogger` (tests give it a stream to read the lines). */
  logger: FastifyBaseLogger;
  /** Overrides of the token change listener's timings (tests shorten the reconnect backoff). */
  listenerTiming?: Partial<ListenerTiming>;
  /**
   * Where the provider's webhook events go (tests record them). Default: messaging's sink.
   */
  providerWebhookSink?: ProviderWebhookSink;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's token change listener (its state shows in tests and the benchmark). */
    tokenChangeListener: TokenChangeListener;
    /** The external API's admission (its counts show in tests). */
    apiAdmission: Admission;
  }
}

export async function buildApp({
  services,
  logger,
  listenerTiming,
  providerWebhookSink,
}: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    ...requestLoggingOptions(logger),
    trustProxy: config.TRUST_PROXY,
    bodyLimit: BODY_LIMIT_BYTES,
    return503OnClosing: true,
    clientErrorHandler,
    // The router's own refusals (a malformed URL encoding, a path parameter over the length
    // limit) get the envelope too, and never echo the path.
    frameworkErrors: (err, _request, reply) => {
      void sendError(reply, toAppError(err));
    },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // The project's Ajv options (schema-compilers.ts says why each).
    ajv: { customOptions: { ...AJV_CUSTOM_OPTIONS } },
    // Compiled schemas are shared by every app of this process (schema-compilers.ts).
    schemaController: { compilersFactory: sharedSchemaCompilers },
  });

  recordRoutes(app);
  // Callback style, not async: no promise per request for a header.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // An unknown address opened by a browser outside /api/ is a page; the API keeps the envelope.
  installErrorHandlers(app, {
    notFoundPage: (request, reply) => (wantsErrorPage(request) ? sendNotFoundPage(reply) : null),
  });

  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, logger) : undefined;
  if (redis)
    app.addHook('onClose', async () => {
      // A Redis that is down (a degraded start) has nothing to quit: stop reconnecting.
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
      else redis.disconnect();
    });

  // Before any route: the document is built from the routes registered after it.
  await app.register(swagger, swaggerOptions(EXTERNAL_API_PREFIX, config.APP_BASE_URL));
  await app.register(probes, {
    ping: () => services.storage.ping(),
    degraded: () => (redis && isDegraded(redis) ? ['redis'] : []),
  });

  // The verification cache is trusted only while this listener hears token changes.
  const listener = await services.tokenVerification.listen(listenerTiming);
  app.decorate('tokenChangeListener', listener);
  app.addHook('onClose', () => listener.close());
  // After the API's own close: the last counts are written.
  app.addHook('onClose', () => services.tokenVerification.usage.close());

  // Back-pressure before the pool (docs/decisions/0061-back-pressure.md).
  const admission = createAdmission({
    concurrency: config.API_CONCURRENCY,
    queue: config.API_QUEUE,
    waitMs: config.API_QUEUE_TIMEOUT_MS,
  });
  app.decorate('apiAdmission', admission);
  await app.register(externalApi, {
    prefix: EXTERNAL_API_PREFIX,
    admission,
    lookupPrincipal: services.tokenVerification.lookup,
    cachedPrincipal: services.tokenVerification.cached,
    keyUsage: services.tokenVerification.usage,
    rateLimits: {
      perMinute: config.RATE_LIMIT_PER_MINUTE,
      failuresPerMinute: config.RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
      redis,
      keyPrefix: config.REDIS_KEY_PREFIX,
      syncMs: config.RATE_LIMIT_SYNC_MS,
    },
    routes: [
      keysRoutes(services.apiKeys),
      ticketsRoutes(services.tickets),
      contactsRoutes(services.contacts),
      messagingRoutes(services.messaging, services.conversations),
      numbersRoutes(services.messagingProvider),
      templatesRoutes(services.templates),
      draftsRoutes(services.drafts),
      campaignsRoutes(services.campaigns),
      mediaRoutes(services.media),
      readReceiptsRoutes(services.readReceipts),
      eventsRoutes(services.webhooks),
    ],
  });

  // The inbox's live updates: conversation changes heard from every instance (LISTEN/NOTIFY).
  const conversationEvents = createConversationEvents({
    storage: services.storage,
    logger,
    timing: listenerTiming,
  });
  await conversationEvents.start();
  app.addHook('onClose', () => conversationEvents.close());

  await app.register((pages) =>
    registerPages(pages, app, services, redis, inboxReadsOf(services, conversationEvents, logger)),
  );

  // The provider's webhooks, in a context of their own: a JSON parser that keeps the raw bytes
  // (the signature is over them), and no cookie, form or page-header hook.
  await app.register(providerWebhooksRoutes, {
    partner: services.partner,
    sink: providerWebhookSink ?? services.messaging.webhookSink,
  });

  return app;
}

/**
 * The pages and the provider's callbacks, in a context of their own: cookies, form bodies and
 * the pages' security headers run their hooks on these routes only, never on an API request.
 */
async function registerPages(
  pages: FastifyInstance,
  app: FastifyInstance,
  services: Services,
  redis: Redis | undefined,
  inbox: InboxReads,
): Promise<void> {
  const { config } = services;
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
    apiKeys: services.apiKeys,
    team: services.team,
    contacts: services.contacts,
    contactConversationIds: (portalId, contactId, limit) =>
      conversationIdsOfContact(services.storage.db, portalId, contactId, limit),
    messaging: {
      provider: services.messagingProvider,
      accountSignals: (portalId) => signalsInForce(services.storage.db, portalId),
      templates: services.templates,
      drafts: services.drafts,
      log: services.messaging,
      send: services.messaging,
      upload: async (portalId, { phoneNumberId, fileName, file }) => {
        const received = await services.media.receive(file, fileName);
        try {
          const medium = await services.media.upload(portalId, received, {
            fileName,
            phoneNumberId,
          });
          return { ...medium, kind: received.kind };
        } finally {
          await received.dispose();
        }
      },
    },
    webhooks: services.webhooks,
    inbox,
    tickets: services.tickets,
    agents: services.agents,
    desk: services.desk,
    messagingSettings: {
      read: (portalId) => messagingSettings(services.storage.db, portalId),
      change: (portalId, settings, context) =>
        changeMessagingSettings(services.storage.db, portalId, settings, context),
    },
    auditEvents: (portalId, page) => listAuditEvents(services.storage.db, portalId, page),
    appBaseUrl: config.APP_BASE_URL,
    canonicalOrigin: config.NODE_ENV === 'development' ? config.APP_BASE_URL : null,
  });
  await pages.register(authorizationRoutes, {
    sessions,
    partner: services.partner,
    appBaseUrl: config.APP_BASE_URL,
  });
  await pages.register(providerCallbacksRoutes, { partner: services.partner });
}

/** The inbox's reads over messaging, with this instance's conversation hub. */
function inboxReadsOf(
  services: Services,
  events: ConversationEvents,
  logger: FastifyBaseLogger,
): InboxReads {
  return createInboxReads({
    db: services.storage.db,
    conversations: services.conversations,
    logger: logger.child({ component: 'inbox' }),
    keyring: loadKeyring(services.config),
    events,
    media: async (portalId, id) => {
      const medium = await services.media.download(portalId, id);
      return {
        contentType: medium.contentType,
        contentLength: medium.bytes.length,
        fileName: medium.fileName,
        body: medium.bytes,
      };
    },
    markReadOnOpen: (portalId, c) => services.readReceipts.markReadOnOpen(portalId, c),
    showTyping: (portalId, c) => services.readReceipts.showTypingInConversation(portalId, c),
  });
}
