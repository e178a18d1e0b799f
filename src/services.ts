/**
 * The services of every feature, built once over one storage. Shared by the HTTP app, the
 * admin socket and the CLI, so that all three apply the same rules. Only the composition roots
 * (`main.ts`, `app.ts`, `cli.ts`) and `admin/` import this file; a feature's route plugin gets
 * the few services it uses.
 */
import { createAccountsService, type AccountsService } from './accounts/accounts-service.ts';
import { createAgentsService, type AgentsService } from './accounts/agents-service.ts';
import { createSecretScanner } from './accounts/secret-scanner.ts';
import { createTokenVerification, type TokenVerification } from './accounts/token-verification.ts';
import { createSessionStore, type SessionStore } from './browser/session-store.ts';
import type { Config } from './config.ts';
import { createContactsService, type ContactsService } from './contacts/contacts-service.ts';
import type { Storage } from './db/client.ts';
import {
  anonymiseMessagesOnErasure,
  failQueuedOnRevocation,
} from './messaging/messages/message-failures.ts';
import {
  createMessagingService,
  type MessagingRuntime,
} from './messaging/messages/messages-service.ts';
import type { MessagingEventSteps } from './messaging/provider-webhooks/status-events.ts';
import { partnerMessagingProvider } from './messaging/provider/provider-port.ts';
import { createDraftsService, type DraftsService } from './messaging/drafts/drafts-service.ts';
import { createNumbersService, type NumbersService } from './messaging/numbers/numbers-service.ts';
import {
  createTemplatesService,
  type TemplatesService,
} from './messaging/templates/templates-service.ts';
import { createPartnerService, type PartnerService } from './partner/partner-service.ts';
import { loadKeyring } from './platform/keyring.ts';
import type { Logger } from './platform/logger.ts';
import { createAgentDeskService, type AgentDeskService } from './tickets/agent-desk-service.ts';
import { createTicketsService, type TicketsService } from './tickets/tickets-service.ts';
import { transactionJobDb } from './db/job-queue-db.ts';
import type { DeliveryQueue } from './messaging/delivery/delivery-queue.ts';
import { resealWebhookSecrets } from './webhooks/webhook-key-rotation.ts';
import { webhookEventSteps } from './webhooks/event-hooks.ts';
import { pgBossWebhookQueue } from './webhooks/webhook-queue.ts';
import {
  ATTEMPT_TIMEOUT_MS,
  createWebhooksService,
  type WebhooksService,
} from './webhooks/webhooks-service.ts';

export interface Services {
  config: Config;
  storage: Storage;
  accounts: AccountsService;
  tickets: TicketsService;
  /** Support agents (the operator's people): create, list, disable, sign-in. */
  agents: AgentsService;
  /** The support team's side of every portal's tickets (console and CLI). */
  desk: AgentDeskService;
  contacts: ContactsService;
  /**
   * API token verification (hash → cache → lookup), distrusted, i.e. read-through, until its
   * listener is started (`buildApp` does).
   */
  tokenVerification: TokenVerification;
  partner: PartnerService;
  /**
   * Messaging: sends, reports, credit, the provider's webhook events, and the delivery queue
   * (`start` before serving; `startWorkers` on every instance; `stop` before storage closes).
   */
  messaging: MessagingRuntime;
  /** The sender numbers of the connected WhatsApp Business account. */
  numbers: NumbersService;
  /** The provider's message templates of the connected account. */
  templates: TemplatesService;
  /** Portico-side message drafts and sending them. */
  drafts: DraftsService;
  /** Browser sessions of the web pages. */
  sessions: SessionStore;
  /** The one durable job queue (pg-boss): messaging's deliveries and the webhooks'. */
  jobs: DeliveryQueue;
  webhooks: WebhooksService;
}

/** What tests (and only tests) may change in the webhooks' timing. */
export interface ServiceOverrides {
  webhooks?: Pick<
    Parameters<typeof createWebhooksService>[0],
    'attemptTimeoutMs' | 'retryScheduleMs' | 'resolver' | 'addressPolicy'
  >;
}

export function createServices(deps: {
  config: Config;
  storage: Storage;
  logger: Logger;
  overrides?: ServiceOverrides;
}): Services {
  const { config, storage, logger } = deps;
  const tokenVerification = createTokenVerification({ storage, settings: config, logger });
  const keyring = loadKeyring(config);
  // Webhook events are emitted by partner, tickets and contacts, while the webhooks' queue is
  // messaging's, which needs partner: the steps reach the webhooks service once it exists.
  const late: { webhooks?: WebhooksService } = {};
  const steps = webhookEventSteps({
    emit: (tx, portalId, type, data) => late.webhooks!.emit(tx, portalId, type, data),
  });
  const partner = createPartnerService({
    config,
    db: storage.db,
    keyring,
    logger,
    connectedSteps: [steps.connected],
    revocationSteps: [failQueuedOnRevocation, steps.revoked],
    keyRotationSteps: [resealWebhookSecrets],
  });
  const messaging = createMessaging(config, storage, logger, partner, {
    statusChanged: steps.messageStatus,
    received: steps.messageReceived,
    templateStatusUpdated: (tx, portalId, e) =>
      steps.templateStatusUpdated(tx, portalId, {
        templateId: e.templateId,
        name: e.name,
        language: e.language,
        status: e.status,
        wabaId: e.wabaId,
        ...(e.reason !== undefined && { reason: e.reason }),
      }),
    creditReserved: (tx, portalId, e) => late.webhooks!.creditChanged(tx, portalId, e),
  });
  const webhooks = createWebhooksService({
    db: storage.db,
    keyring,
    logger,
    queue: pgBossWebhookQueue(
      { boss: messaging.jobs.boss, ready: () => messaging.start() },
      transactionJobDb,
      deps.overrides?.webhooks?.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS,
    ),
    // Production refuses private addresses; development and tests deliver to localhost.
    addressPolicy: config.isProduction ? 'public-only' : 'development-any-address',
    ...deps.overrides?.webhooks,
  });
  late.webhooks = webhooks;
  const ticketSteps = { updated: steps.ticketUpdated, commentAdded: steps.ticketCommentAdded };
  return {
    config,
    storage,
    tokenVerification,
    accounts: createAccountsService({
      db: storage.db,
      // This instance drops its own entry before the changing call returns: the old token fails
      // here on the very next request, without waiting for the notification.
      onTokenChange: (portalId) => tokenVerification.dropPortal(portalId),
    }),
    tickets: createTicketsService({
      db: storage.db,
      providerAppSecret: config.PROVIDER_APP_SECRET,
      logger,
      createdSteps: [steps.ticketCreated],
      eventSteps: ticketSteps,
    }),
    agents: createAgentsService({ db: storage.db }),
    desk: createAgentDeskService({
      db: storage.db,
      scanner: createSecretScanner(config.PROVIDER_APP_SECRET),
      steps: ticketSteps,
    }),
    contacts: createContactsService({
      db: storage.db,
      logger,
      erasureSteps: [anonymiseMessagesOnErasure],
      optedOutSteps: [steps.optedOut],
    }),
    partner,
    messaging,
    numbers: createNumbersService({ partner }),
    templates: createTemplatesService({ partner }),
    drafts: createDraftsService({
      db: storage.db,
      // One message per recipient through the send service of POST /messaging/messages.
      send: (principal, message) => messaging.sendMessage({ principal, input: message }),
      isConnected: async (portalId) => (await partner.wabaIdsOf(portalId)).length > 0,
    }),
    jobs: messaging.jobs,
    webhooks,
    sessions: createSessionStore({ db: storage.db, ttlSeconds: config.SESSION_TTL_SECONDS }),
  };
}

/** Messaging over partner's outbound path, with the MESSAGING_* settings. */
function createMessaging(
  config: Config,
  storage: Storage,
  logger: Logger,
  partner: PartnerService,
  eventSteps: MessagingEventSteps,
): MessagingRuntime {
  const isConnected = async (portalId: number) =>
    (await partner.connectionSummary(portalId)).status === 'active';
  return createMessagingService({
    storage,
    logger,
    eventSteps,
    provider: partnerMessagingProvider({
      withCloudApi: partner.withCloudApi,
      wabaIdsOf: partner.wabaIdsOf,
    }),
    isConnected,
    prices: {
      currency: config.MESSAGING_CURRENCY,
      text: config.MESSAGING_PRICE_TEXT_MINOR,
      MARKETING: config.MESSAGING_PRICE_MARKETING_MINOR,
      UTILITY: config.MESSAGING_PRICE_UTILITY_MINOR,
      AUTHENTICATION: config.MESSAGING_PRICE_AUTHENTICATION_MINOR,
    },
    ratePerNumber: config.MESSAGING_RATE_PER_NUMBER,
    providerCacheMs: config.MESSAGING_PROVIDER_CACHE_MS,
    queue: {
      retryLimit: config.MESSAGING_RETRY_LIMIT,
      retryDelayS: config.MESSAGING_RETRY_DELAY_S,
      expireS: config.MESSAGING_JOB_EXPIRE_S,
      batchSize: config.MESSAGING_WORKER_BATCH,
      pollingIntervalS: 0.5,
      maintenanceIntervalS: Math.max(5, Math.round(config.MESSAGING_JOB_EXPIRE_S / 4)),
    },
  });
}
