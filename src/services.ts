/**
 * The services of every feature, built once over one storage. Shared by the HTTP app, the
 * admin socket and the CLI, so that all three apply the same rules. Only the composition roots
 * (`main.ts`, `app.ts`) and `cli/` import this file; a feature's route plugin gets
 * the few services it uses.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createAccountsService, type AccountsService } from './accounts/accounts-service.ts';
import { createApiKeysService, type ApiKeysService } from './accounts/api-keys-service.ts';
import { createAgentsService, type AgentsService } from './accounts/agents-service.ts';
import { TeamService } from './accounts/team-service.ts';
import { createSecretScanner } from './accounts/secret-scanner.ts';
import { createTokenVerification, type TokenVerification } from './accounts/token-verification.ts';
import { createSessionStore, type SessionStore } from './browser/session-store.ts';
import type { Config } from './config.ts';
import { createContactsService, type ContactsService } from './contacts/contacts-service.ts';
import {
  createConversationsService,
  type ConversationsService,
} from './messaging/conversations/conversations-service.ts';
import type { Storage } from './db/client.ts';
import { createMediaService, type MediaService } from './messaging/media/media-service.ts';
import { messagingErasureSteps } from './messaging/service/message-erasure.ts';
import { createReadReceipts, type ReadReceipts } from './messaging/outbound/read-receipts.ts';
import { failQueuedOnRevocation } from './messaging/store/message-failures.ts';
import {
  createMessagingService,
  type MessagingRuntime,
} from './messaging/service/messages-service.ts';
import {
  createMessagingEvents,
  type MessagingEvents,
} from './messaging/events/messaging-events.ts';
import { subscribeConsentKeywords } from './messaging/conversations/consent-keywords.ts';
import {
  createProviderAdapter,
  type ProviderAdapter,
} from './messaging/provider/provider-adapter.ts';
import { createDraftsService, type DraftsService } from './messaging/drafts/drafts-service.ts';
import type { MessagingPrices } from './messaging/outbound/message-sending.ts';
import {
  createCampaignsService,
  type CampaignsService,
} from './messaging/campaigns/campaigns-service.ts';
import {
  createCampaignRunner,
  type CampaignRunner,
} from './messaging/campaigns/campaign-runner.ts';
import {
  createTemplatesService,
  type TemplatesService,
} from './messaging/templates/templates-service.ts';
import { createPartnerService, type PartnerService } from './partner/partner-service.ts';
import { loadKeyring, type Keyring } from './platform/keyring.ts';
import { prepareSealedValues } from './db/sealing.ts';
import type { Logger } from './platform/logger.ts';
import { createAgentDeskService, type AgentDeskService } from './tickets/agent-desk-service.ts';
import { createTicketsService, type TicketsService } from './tickets/tickets-service.ts';
import { createBackgroundTasks } from './background-tasks.ts';
import type { BackgroundWork } from './jobs/background-work.ts';
import { anonymiseTicketsOf } from './tickets/ticket-erasure.ts';
import { createJobQueue, type JobQueue } from './jobs/job-queue.ts';
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
  apiKeys: ApiKeysService;
  /** The members of each portal: roles, status, invitations (`/settings/team`, `user`). */
  team: TeamService;
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
   * (its workers run after `start()`).
   */
  messaging: MessagingRuntime;
  /**
   * Conversations: their list, messages of both directions, opt-out keywords, and the sweep
   * (windows closing, content retention), a background task.
   */
  conversations: ConversationsService;
  /**
   * Messaging's one adapter of the provider: connected or not, the sender numbers and
   * templates of the connected WhatsApp Business account (cached), sends.
   */
  messagingProvider: ProviderAdapter;
  /** The provider's message templates of the connected account. */
  templates: TemplatesService;
  /** Inbound media's bytes, fetched from the provider on demand and checked. */
  media: MediaService;
  /** Read receipts of inbound messages (the API's, and the inbox's on opening). */
  readReceipts: ReadReceipts;
  /** Portico-side message drafts and sending them. */
  drafts: DraftsService;
  /** Campaigns: broadcasts of one template to an audience at a pace. */
  campaigns: CampaignsService;
  /** This instance's campaign runner (started by `start()`, stopped by `stop()`). */
  campaignRunner: CampaignRunner;
  /** Browser sessions of the web pages. */
  sessions: SessionStore;
  /** The one durable job queue (pg-boss): messaging's deliveries and the webhooks'. */
  jobs: JobQueue;
  webhooks: WebhooksService;
  /**
   * The one registry of background work (`tasks list` shows it, src/background-tasks.ts):
   * closing solved tickets, the conversations' sweep, settlement, retention and expiry, the
   * token health checks; and the work that is not periodic, with the reason.
   */
  background: BackgroundWork;
  /**
   * Start a serving instance's background work, in order: the job queue and messaging's
   * delivery queues, this instance's delivery workers, the webhooks' queue and worker, then the
   * periodic tasks (a revocation the health check makes queues a webhook event).
   */
  start(): Promise<void>;
  /**
   * Stop what `start` (or a command, or a test) started, in the one order: the periodic tasks
   * (the health checker's provider calls aborted) and the grant revocations at the provider,
   * the webhooks' worker, the delivery workers, then
   * the job queue, which waits for the jobs in hand. After the HTTP app closed, before storage
   * closes. Idempotent; a part never started is skipped; one that fails does not keep the rest
   * running (the first failure is thrown at the end).
   */
  stop(): Promise<void>;
}

/** What tests (and only tests) may change in the webhooks' timing. */
export interface ServiceOverrides {
  webhooks?: Pick<
    Parameters<typeof createWebhooksService>[0],
    'attemptTimeoutMs' | 'retryScheduleMs' | 'resolver' | 'addressPolicy' | 'gate'
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
  // The job queue sits below the features: messaging's deliveries and the webhooks' share it.
  const jobs = createJobQueue({
    storage,
    logger,
    maintenanceIntervalS: Math.max(5, Math.round(config.MESSAGING_JOB_EXPIRE_S / 4)),
  });
  const webhooks = createWebhooksService({
    db: storage.db,
    keyring,
    logger,
    queue: pgBossWebhookQueue(
      jobs,
      deps.overrides?.webhooks?.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS,
      logger.child({ component: 'webhooks' }),
    ),
    // Production refuses private addresses; development and tests deliver to localhost.
    addressPolicy: config.isProduction ? 'public-only' : 'development-any-address',
    settings: config,
    ...deps.overrides?.webhooks,
  });
  // Webhook events are emitted by partner, messaging, tickets and contacts.
  const steps = webhookEventSteps(webhooks);
  // This instance's name in leases and background runs.
  const instanceId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const partner = createPartnerService({
    config,
    instanceId,
    db: storage.db,
    keyring,
    logger,
    connectedSteps: [steps.connected],
    revocationSteps: [failQueuedOnRevocation, steps.revoked],
  });
  const messagingProvider = createProviderAdapter({
    partner,
    cacheMs: config.MESSAGING_PROVIDER_CACHE_MS,
  });
  // Messaging's domain events: the webhooks and the consent module listen, in each change's
  // transaction (src/messaging/events/messaging-events.ts).
  const events = createMessagingEvents();
  subscribeWebhooks(events, steps, webhooks);
  const messaging = createMessaging(config, storage, logger, jobs, messagingProvider, keyring, {
    events,
    creditLowThreshold: (portalId) => webhooks.creditLowThreshold(portalId),
  });
  subscribeConsentKeywords(events, {
    optedOutSteps: [steps.optedOut],
    replies: messaging.keywordReplies,
    logger,
  });
  const prices = pricesOf(config);
  const campaignRunner = campaignRunnerOf(storage, keyring, logger, events, messaging);
  const conversations = createConversationsService({
    db: storage.db,
    logger,
    keyring,
    retentionDays: config.MESSAGING_CONTENT_RETENTION_DAYS,
    events,
  });
  const ticketSteps = { updated: steps.ticketUpdated, commentAdded: steps.ticketCommentAdded };
  const background = createBackgroundTasks({
    db: storage.db,
    logger,
    instanceId,
    settings: config,
    ticketSteps,
    conversations,
    messaging,
    webhooks,
    healthCheck: partner.healthCheckTask,
  });
  return {
    config,
    storage,
    tokenVerification,
    accounts: createAccountsService({
      db: storage.db,
      onTokenChange: tokenVerification.dropPortal,
    }),
    apiKeys: createApiKeysService({ db: storage.db, onTokenChange: tokenVerification.dropPortal }),
    team: new TeamService({ db: storage.db }),
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
      erasureSteps: [...messagingErasureSteps(keyring), anonymiseTicketsOf],
      optedOutSteps: [steps.optedOut],
    }),
    partner,
    messaging,
    conversations,
    messagingProvider,
    templates: createTemplatesService({ provider: messagingProvider }),
    ...inboundServices(config, storage, messagingProvider, keyring),
    drafts: createDraftsService({
      db: storage.db,
      keyring,
      // One message per recipient through the send service of POST /messaging/messages.
      send: (principal, message) => messaging.sendMessage({ principal, input: message }),
      isConnected: messagingProvider.isConnected,
    }),
    campaigns: createCampaignsService({
      db: storage.db,
      keyring,
      provider: messagingProvider,
      prices,
      events,
    }),
    campaignRunner,
    jobs,
    webhooks,
    sessions: createSessionStore({ db: storage.db, ttlSeconds: config.SESSION_TTL_SECONDS }),
    background,
    async start() {
      await prepareSealedValues(storage.db, keyring);
      await messaging.start();
      await messaging.startWorkers();
      await webhooks.start();
      await webhooks.startWorker();
      background.start();
      campaignRunner.start();
    },
    stop: () =>
      stopInOrder([
        // The timer stops at once; the health checker's calls are aborted while its cycle ends.
        async () => void (await Promise.all([background.stop(), partner.stopHealthChecker()])),
        () => campaignRunner.stop(),
        () => webhooks.stopWorker(),
        () => messaging.stop(),
        () => jobs.stop(),
      ]),
  };
}

/** Run every stop in order even when one fails; then throw the first failure, if any. */
async function stopInOrder(stops: readonly (() => Promise<void>)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const stop of stops) await stop().catch((err: unknown) => failures.push(err));
  if (failures.length > 0) throw failures[0];
}

/** Inbound media and read receipts, over the provider adapter. */
function inboundServices(
  config: Config,
  storage: Storage,
  provider: ProviderAdapter,
  keyring: Keyring,
): Pick<Services, 'media' | 'readReceipts'> {
  return {
    media: createMediaService({
      db: storage.db,
      provider,
      keyring,
      maxBytes: config.MESSAGING_MEDIA_MAX_BYTES,
    }),
    readReceipts: createReadReceipts({ db: storage.db, provider }),
  };
}

/** This instance's campaign runner: each recipient through the send path, idempotent per recipient. */
function campaignRunnerOf(
  storage: Storage,
  keyring: Keyring,
  logger: Logger,
  events: MessagingEvents,
  messaging: Pick<MessagingRuntime, 'sendMessage'>,
): CampaignRunner {
  return createCampaignRunner({
    db: storage.db,
    keyring,
    logger: logger.child({ component: 'campaigns' }),
    events,
    send: async (portalId, input, idempotencyKey) =>
      (await messaging.sendMessage({ principal: { portalId }, input, idempotencyKey })).body.data
        .id,
  });
}

/** The prices of the MESSAGING_PRICE_* settings. */
function pricesOf(config: Config): MessagingPrices {
  return {
    currency: config.MESSAGING_CURRENCY,
    text: config.MESSAGING_PRICE_TEXT_MINOR,
    MARKETING: config.MESSAGING_PRICE_MARKETING_MINOR,
    UTILITY: config.MESSAGING_PRICE_UTILITY_MINOR,
    AUTHENTICATION: config.MESSAGING_PRICE_AUTHENTICATION_MINOR,
  };
}

/** Messaging over its provider adapter, with the MESSAGING_* settings. */
function createMessaging(
  config: Config,
  storage: Storage,
  logger: Logger,
  jobs: JobQueue,
  provider: ProviderAdapter,
  keyring: Keyring,
  listened: Pick<Parameters<typeof createMessagingService>[0], 'events' | 'creditLowThreshold'>,
): MessagingRuntime {
  return createMessagingService({
    storage,
    logger,
    keyring,
    jobs,
    ...listened,
    provider,
    prices: pricesOf(config),
    ratePerNumber: config.MESSAGING_RATE_PER_NUMBER,
    queue: {
      retryLimit: config.MESSAGING_RETRY_LIMIT,
      retryDelayS: config.MESSAGING_RETRY_DELAY_S,
      expireS: config.MESSAGING_JOB_EXPIRE_S,
      batchSize: config.MESSAGING_WORKER_BATCH,
      pollingIntervalS: 0.5,
    },
    settlement: config,
  });
}

/**
 * The webhooks' subscriptions to messaging's events: each becomes a tenant event in the
 * transaction of its change (docs/webhooks.md "Event catalogue").
 */
function subscribeWebhooks(
  events: MessagingEvents,
  steps: ReturnType<typeof webhookEventSteps>,
  webhooks: Pick<WebhooksService, 'creditChanged'>,
): void {
  events.on('message.status_changed', (e) => steps.messageStatus(e.tx, e.portalId, e.change));
  events.on('message.statuses_changed', (e) => steps.messageStatuses(e.tx, e.portalId, e.changes));
  events.on('inbound.received', (e) => steps.messageReceived(e.tx, e.portalId, e.messages));
  events.on('inbound.reacted', (e) => steps.messageReaction(e.tx, e.portalId, e.messages));
  events.on('template.status_updated', ({ tx, portalId, event: t }) =>
    steps.templateStatusUpdated(tx, portalId, {
      templateId: t.templateId,
      name: t.name,
      language: t.language,
      status: t.status,
      wabaId: t.wabaId,
      ...(t.reason !== undefined && { reason: t.reason }),
    }),
  );
  events.on('credit.reserved', ({ tx, portalId, ...e }) => webhooks.creditChanged(tx, portalId, e));
  events.on('conversation.window_closing', ({ tx, portalId, ...e }) =>
    steps.windowClosing(tx, portalId, e),
  );
  events.on('conversation.work_changed', (e) =>
    steps.conversationWorkChanged(e.tx, e.portalId, e.change),
  );
  events.on('conversation.note_added', (e) =>
    steps.conversationNoteAdded(e.tx, e.portalId, e.note),
  );
  events.on('phone_number.quality_updated', ({ tx, portalId, ...e }) =>
    steps.phoneNumberQualityUpdated(tx, portalId, e),
  );
  events.on('template.quality_updated', ({ tx, portalId, ...e }) =>
    steps.templateStatusUpdated(tx, portalId, e),
  );
  events.on('template.category_changed', ({ tx, portalId, ...e }) =>
    steps.templateCategoryChanged(tx, portalId, e),
  );
  events.on('contact.marketing_preference_changed', ({ tx, portalId, ...e }) =>
    steps.marketingPreferenceChanged(tx, portalId, e),
  );
  events.on('account.standing', (e) => steps.accountStanding(e.tx, e.portalId, e.standing));
  events.on('campaign.changed', ({ tx, portalId, change }) =>
    steps.campaignChanged(tx, portalId, change),
  );
}
