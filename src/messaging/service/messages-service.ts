/**
 * The messaging service: sending (checks, then the message row, due for delivery, and the
 * credit reservation from this instance's escrow block in one statement), the message log and its summary, the credit ledger, the
 * provider's webhook events, and the delivery workers.
 *
 * The pieces: checks in send-rules.ts, queries in messages-repository.ts and credit-ledger.ts,
 * the queue in delivery-queue.ts, the worker in delivery-worker.ts, webhook events in
 * status-events.ts, the API's shapes in message-view.ts. This module composes them.
 *
 * @see docs/messaging.md
 */
import { recordAuditEvent } from '../../audit/audit-log.ts';
import type { Config } from '../../config.ts';
import type { Database, Storage } from '../../db/client.ts';
import { AppError, UsageError } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import { createCreditEscrow } from '../credit/credit-escrow.ts';
import { listTransactionPage, readCredit, topUp } from '../credit/credit-ledger.ts';
import { createSendMessage, type MessagingPrices } from '../outbound/message-sending.ts';
import type { JobQueue } from '../../jobs/job-queue.ts';
import { createDeliveryQueue, type DeliveryQueueSettings } from '../outbound/delivery-queue.ts';
import { createDeliveryWorker } from '../outbound/delivery-worker.ts';
import { failUndelivered } from '../store/message-failures.ts';
import { settleDeliveries, type SettlementDeps } from '../outbound/delivery-settlement.ts';
import {
  messageCursor,
  outboundContentOf,
  toMessage,
  toPeriods,
  toTransaction,
  transactionCursor,
} from '../store/message-view.ts';
import { findMessage, listMessagePage, summaryRows } from '../store/messages-repository.ts';
import type { SummaryQuery } from '../store/messages-schemas.ts';
import type { MessagingService, PortalOf } from '../store/messaging-types.ts';
import type { ProviderAdapter } from '../provider/provider-adapter.ts';
import { createSenderPacing } from '../outbound/sender-pacing.ts';
import { readDailyCounts } from '../store/daily-counts.ts';
import { readCosts } from '../store/costs.ts';
import { createWebhookSink, statusBatchApplier } from '../provider-webhooks/status-events.ts';
import { createStatusQueue } from '../provider-webhooks/status-queue.ts';
import { createAccountSignalSink } from '../provider-webhooks/account-signals.ts';
import { createInboundIngestion } from '../inbound/inbound-ingestion.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import type { KeywordReplies } from '../conversations/consent-keywords.ts';
import type { ContentKeyring } from '../store/message-content.ts';

interface MessagingServiceDeps {
  storage: Storage;
  logger: Logger;
  /** Seals and opens messages' content (message-content.ts). */
  keyring: ContentKeyring;
  /**
   * Where messaging's domain events are emitted, each in the transaction of its change
   * (events/messaging-events.ts); services.ts subscribes the webhooks and the consent module.
   */
  events?: MessagingEvents;
  /**
   * The portal's `credit.low` threshold in minor units, or null when it has none: where
   * `credit.reserved` may be emitted. Read again at most every second per portal and instance.
   */
  creditLowThreshold?: (portalId: number) => Promise<number | null>;
  /** The provider (numbers and templates for the checks, sends, the cache a webhook drops). */
  provider: Pick<ProviderAdapter, 'catalog' | 'sendMessage' | 'invalidate' | 'cachedNumbers'>;
  prices: MessagingPrices;
  /** Sends per second per sender number on this instance. */
  ratePerNumber: number;
  /** The service's one job queue (started and stopped by its owner, `services.ts`). */
  jobs: JobQueue;
  queue: DeliveryQueueSettings;
  /** When the settlement sweep ends unsettled messages (delivery-settlement.ts), in seconds. */
  settlement: Pick<Config, 'MESSAGING_SEND_CONFIRM_S' | 'MESSAGING_STATUS_WAIT_S'>;
  /** The clock (tests move it). */
  now?: () => Date;
}

/** The service, plus the queue's life cycle (main.ts and tests drive it). */
export interface MessagingRuntime extends MessagingService {
  /** Start the job queue and create the status queue; sends need it. Idempotent. */
  start(): Promise<void>;
  /**
   * Start this instance's delivery workers and the sweep of status batches other instances left
   * (after `start`).
   */
  startWorkers(): Promise<void>;
  /**
   * One run of the settlement sweep now (delivery-settlement.ts): the `messaging.settlement`
   * background task (src/background-tasks.ts).
   *
   * @returns how many messages it failed and escrow blocks it settled.
   */
  settle(): Promise<{ messages: number; blocks: number }>;
  /**
   * Stop this instance's workers, aborting their provider calls (the batches in hand end
   * before the job queue stops: `JobQueue.stop` waits for them), and settle this instance's
   * escrow blocks of credit.
   */
  stop(): Promise<void>;
  /** The send path as the consent module's confirmation replies use it. */
  keywordReplies: KeywordReplies;
  /** Messages due for delivery or under a worker's lease (tests, benchmark). */
  waitingJobs(): Promise<number>;
  /**
   * Resolves when every status batch this instance accepted from the provider's webhooks has
   * been applied (or failed, to be retried): what reads right after a webhook wait for.
   */
  statusesApplied(): Promise<void>;
}

/** How often an instance takes the status batches other instances left (ms). */
const STATUS_SWEEP_MS = 5000;

export function createMessagingService(deps: MessagingServiceDeps): MessagingRuntime {
  const { storage, logger, prices } = deps;
  const db: Database = storage.db;
  const now = deps.now ?? (() => new Date());
  const { provider } = deps;
  const queue = createDeliveryQueue({ db, settings: deps.queue, logger });
  const worker = createDeliveryWorker({
    db,
    keyring: deps.keyring,
    provider,
    pacing: createSenderPacing(deps.ratePerNumber),
    logger,
  });
  const escrow = createCreditEscrow({
    db,
    logger,
    threshold: deps.creditLowThreshold,
  });
  const settlement: SettlementDeps = {
    db,
    confirmS: deps.settlement.MESSAGING_SEND_CONFIRM_S,
    statusWaitS: deps.settlement.MESSAGING_STATUS_WAIT_S,
    failed: (tx, row, error) =>
      deps.events?.emitSerial('message.status_changed', {
        tx,
        portalId: row.portalId,
        change: {
          messageId: row.id,
          providerMessageId: row.providerMessageId,
          status: 'failed',
          occurredAt: (row.failedAt ?? now()).toISOString(),
          error,
        },
      }) ?? Promise.resolve(),
  };
  const applyStatuses = statusBatchApplier({ db, logger, events: deps.events, prices });
  const statusQueue = createStatusQueue({
    jobs: deps.jobs,
    apply: applyStatuses,
    logger,
    sweepMs: STATUS_SWEEP_MS,
  });
  const sendMessage = createSendMessage({
    db,
    keyring: deps.keyring,
    provider,
    queue,
    escrow,
    prices,
    now,
    events: deps.events,
  });

  return {
    sendMessage,

    async listMessages(principal, query) {
      const page = await listMessagePage(db, principal.portalId, {
        limit: query.limit,
        after: messageCursor.after(query.cursor),
        filter: {
          status: query.status,
          to: query.to,
          since: query.since === undefined ? undefined : new Date(query.since),
          until: query.until === undefined ? undefined : new Date(query.until),
        },
      });
      return messageCursor.page(page, (row) =>
        toMessage(row, outboundContentOf(deps.keyring, row)),
      );
    },

    async getMessage(principal, id) {
      const row = await findMessage(db, principal.portalId, id);
      if (!row) throw new AppError('not_found', 'No message with this id.');
      return toMessage(row, outboundContentOf(deps.keyring, row));
    },

    summary: (principal, query) => summaryOf(db, principal, query, prices.currency),

    async costs(principal, query) {
      const { since, until } = summaryPeriod({ ...query, granularity: 'day' });
      const spanMs = until.getTime() - since.getTime();
      if (!(spanMs > 0) || spanMs > 366 * 24 * 3600 * 1000)
        throw new AppError('invalid_request', '`until` must be after `since`, within 366 days.', {
          details: [
            { field: 'querystring.until', message: 'is not after since, or too far from it' },
          ],
        });
      return {
        since: since.toISOString(),
        until: until.toISOString(),
        currency: prices.currency,
        rows: await readCosts(db, principal.portalId, { since, until }),
      };
    },

    dailyCounts: (principal, range) => readDailyCounts(db, principal.portalId, range),

    credit: (principal) => readCredit(db, principal.portalId, prices.currency),

    async listCreditTransactions(principal, query) {
      const page = await listTransactionPage(db, principal.portalId, {
        limit: query.limit,
        after: transactionCursor.after(query.cursor),
      });
      return transactionCursor.page(page, toTransaction);
    },

    addCredit: (args) => addCreditTo(db, args, prices.currency),

    webhookSink: {
      ...createWebhookSink({
        db,
        logger,
        onTemplateChange: (id) => provider.invalidate(id),
        events: deps.events,
        applyStatuses,
        statusQueue,
        inbound: createInboundIngestion({
          db,
          keyring: deps.keyring,
          logger,
          events: deps.events,
        }),
      }),
      ...createAccountSignalSink({ db, provider, events: deps.events }),
    },

    start: () => statusQueue.start(),
    async startWorkers() {
      queue.work(
        (jobs) => worker.handle(jobs),
        (out) => failUndelivered(db, out),
      );
      statusQueue.startSweep();
    },
    settle: () => settleDeliveries(settlement, now()),
    async stop() {
      const stopped = queue.stopWorkers();
      worker.abort();
      await statusQueue.stop();
      await stopped;
      // The sends have ended (the app closed first): this instance's credit blocks go back.
      await escrow.close();
    },
    keywordReplies: {
      async sendReply({ portalId, contactId, phoneNumberId, body, optOut }) {
        const result = await sendMessage({
          principal: { portalId },
          input: { contactId, from: phoneNumberId, type: 'text', text: { body } },
          optOutConfirmation: optOut,
        });
        return result.body.data.id;
      },
    },
    waitingJobs: () => queue.waiting(),
    statusesApplied: () => statusQueue.idle(),
  };
}

/** The default span of a summary: 30 days by day, 24 hours by hour (milliseconds). */
const DEFAULT_SUMMARY_SPAN_MS = { day: 30 * 24 * 3600 * 1000, hour: 24 * 3600 * 1000 };

/**
 * The period a summary covers: `[since, until)`, `until` by default now and `since` by default
 * the default span before it.
 */
export function summaryPeriod(query: SummaryQuery): { since: Date; until: Date } {
  const until = query.until === undefined ? new Date() : new Date(query.until);
  const since =
    query.since === undefined
      ? new Date(until.getTime() - DEFAULT_SUMMARY_SPAN_MS[query.granularity])
      : new Date(query.since);
  return { since, until };
}

/** Counts per status, delivery rate and cost per bucket of the summary's period. */
async function summaryOf(db: Database, principal: PortalOf, query: SummaryQuery, currency: string) {
  const { since, until } = summaryPeriod(query);
  const spanMs = until.getTime() - since.getTime();
  const maxMs = (query.granularity === 'hour' ? 31 : 366) * 24 * 3600 * 1000;
  if (!(spanMs > 0) || spanMs > maxMs) {
    throw new AppError(
      'invalid_request',
      '`until` must be after `since`, within 366 days (31 for hours).',
      {
        details: [
          { field: 'querystring.until', message: 'is not after since, or too far from it' },
        ],
      },
    );
  }
  const rows = await summaryRows(db, principal.portalId, {
    since,
    until,
    granularity: query.granularity,
  });
  return toPeriods(rows, currency);
}

/** An operator's top-up and its `credit.added` audit event, in one transaction. */
async function addCreditTo(
  db: Database,
  { portalId, amount, note, actor }: Parameters<MessagingService['addCredit']>[0],
  currency: string,
) {
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new UsageError('The amount must be a positive whole number of minor units.');
  return db.transaction(async (tx) => {
    const result = await topUp(tx, {
      portalId,
      amount,
      currency,
      note,
      actor: `${actor.type}:${actor.id}`,
    });
    await recordAuditEvent(tx, {
      portalId,
      actor,
      action: 'credit.added',
      reason: `${amount} minor units of ${result.currency} (transaction ${result.transactionId})`,
    });
    return result;
  });
}
