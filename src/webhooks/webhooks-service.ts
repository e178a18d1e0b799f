/**
 * Outbound webhooks to tenants (Standard Webhooks): the composition of this folder's modules
 * into the one object the pages, the CLI, `services.ts`' hooks and `main.ts` use.
 *
 * - `emit(tx, …)` is what other features' hooks call inside the transaction of the change: it
 *   writes the event, one delivery per subscribed endpoint and their first jobs, so an event
 *   exists exactly when its change committed;
 * - `webhook-endpoints.ts` manages endpoints and secrets; `webhook-delivery.ts` runs attempts.
 *
 * @see docs/webhooks.md
 */
import type { Config } from '../config.ts';
import type { Database } from '../db/client.ts';
import { recordAuditEvent } from '../audit/audit-log.ts';
import { randomBase62 } from '../platform/crypto.ts';
import { AppError } from '../platform/errors.ts';
import type { Keyring } from '../platform/keyring.ts';
import type { Logger } from '../platform/logger.ts';
import { systemResolver, type AddressPolicy, type Resolver } from './address-guard.ts';
import { createLoggedGate, GATE_SETTINGS, type GateSettings } from './delivery-gate.ts';
import {
  createAttemptBatches,
  runAttempt,
  RETRY_SCHEDULE_MS,
  type AttemptDeps,
} from './webhook-delivery.ts';
import { AGENT_POOL_SETTINGS, createAgentPool } from './webhook-sender.ts';
import { createEndpointManagement, type ChangeContext } from './webhook-endpoints.ts';
import { newEventRow as eventRow, type EventKeyring } from './event-payload.ts';
import { TEST_EVENT_TYPE, type EventData, type EventType } from './webhook-events.ts';
import type { WebhookQueue } from './webhook-queue.ts';
import * as repo from './webhooks-repository.ts';
import { createLogAndReplays } from './event-log-service.ts';

export type { WebhookEndpoint } from './webhook-endpoints.ts';
export type { Tx } from './webhooks-repository.ts';

/** One row of the deliveries table on the settings page and in `webhook list --json`. */
export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  /** Milliseconds, of the last attempt. */
  lastLatencyMs: number | null;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  /** The replay that queued it (`rpl_…`), or null. */
  replayId: string | null;
}

export interface WebhooksServiceDeps {
  db: Database;
  keyring: Keyring;
  queue: WebhookQueue;
  logger: Logger;
  /** `public-only` in production. */
  addressPolicy: AddressPolicy;
  /** One attempt's deadline, in milliseconds (default 15 000). */
  attemptTimeoutMs?: number;
  /** Waits before each attempt, in ms (default the Standard Webhooks schedule; tests shorten). */
  retryScheduleMs?: readonly number[];
  /** How host names resolve (default `node:dns`; a test may simulate a rebinding answer). */
  resolver?: Resolver;
  /** The lanes' and circuit breaker's limits (default `GATE_SETTINGS`; tests shorten). */
  gate?: Partial<GateSettings>;
  /**
   * Days events stay in the event log (default 30) and deliveries a replay starts per second
   * (default 10).
   */
  settings?: Pick<Config, 'EVENTS_RETENTION_DAYS' | 'WEBHOOK_REPLAY_PER_SECOND'>;
}

/** What writing an event needs: the queue for its first jobs, the keyring to seal its data. */
interface EmitDeps {
  queue: Pick<WebhookQueue, 'enqueue' | 'enqueueMany'>;
  keyring: EventKeyring;
}

/** Default deadline of one attempt, in milliseconds. */
export const ATTEMPT_TIMEOUT_MS = 15_000;

function toDelivery(row: repo.DeliveryRow, eventType: string): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    lastLatencyMs: row.lastLatencyMs,
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    replayId: row.replayId,
  };
}

/** Write an event and its deliveries to `endpointIds`, with their first jobs, in `tx`. */
async function write(
  { queue, keyring }: EmitDeps,
  tx: repo.Tx,
  portalId: number,
  type: string,
  data: object,
  endpointIds: readonly string[],
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const event = eventRow(keyring, portalId, type, new Date().toISOString(), data);
  const eventId = event.id;
  await repo.insertEvent(tx, event);
  const deliveryIds: string[] = [];
  for (const endpointId of endpointIds) {
    const id = `dlv_${randomBase62(16)}`;
    await repo.insertDelivery(tx, {
      id,
      portalId,
      endpointId,
      eventId,
      nextAttemptAt: new Date(),
    });
    await queue.enqueue(tx, { deliveryId: id, attempt: 1, portalId });
    deliveryIds.push(id);
  }
  return { eventId, deliveryIds };
}

/** `emitMany`'s writes: events of one type to the endpoints subscribed to it, in `tx`. */
async function writeMany(
  { queue, keyring }: EmitDeps,
  tx: repo.Tx,
  portalId: number,
  type: EventType,
  items: readonly object[],
): Promise<void> {
  if (items.length === 0) return;
  const subscribed = await repo.subscribedEndpoints(tx, portalId, type);
  const timestamp = new Date().toISOString();
  const events = items.map((data) => eventRow(keyring, portalId, type, timestamp, data));
  const deliveries = events.flatMap((event) =>
    subscribed.map((endpoint) => ({
      id: `dlv_${randomBase62(16)}`,
      portalId,
      endpointId: endpoint.id,
      eventId: event.id,
      nextAttemptAt: new Date(),
    })),
  );
  await repo.insertEvents(tx, events);
  await repo.insertDeliveries(tx, deliveries);
  await queue.enqueueMany(
    tx,
    deliveries.map((d) => ({ job: { deliveryId: d.id, attempt: 1, portalId } })),
  );
}

/** `emitMany`, over the queue. */
function createBatchEmit(deps: EmitDeps) {
  return {
    /**
     * `emit` for many events of one type at once (a provider webhook's batch): one read of the
     * subscribed endpoints, the events and their deliveries written in one statement each.
     *
     * @param tx the caller's transaction; the events commit or roll back with it.
     */
    async emitMany<T extends EventType>(
      tx: repo.Tx,
      portalId: number,
      type: T,
      items: readonly EventData[T][],
    ): Promise<void> {
      await writeMany(deps, tx, portalId, type, items);
    },
  };
}

/** *Send test event* and *Resend*. */
function createManualSends(db: Database, deps: EmitDeps) {
  const { queue } = deps;
  return {
    /**
     * Send a `webhook.test` event to one endpoint (enabled or not asked: it must be enabled).
     *
     * @returns the event's id (the `webhook-id`) and the delivery's.
     * @throws AppError `not_found`; `conflict` for a disabled endpoint.
     */
    async sendTestEvent(portalId: number, endpointId: string) {
      return db.transaction(async (tx) => {
        const endpoint = await repo.findEndpoint(tx, portalId, endpointId);
        if (!endpoint) throw new AppError('not_found', 'No webhook endpoint with this id.');
        if (!endpoint.enabled) {
          throw new AppError('conflict', 'The endpoint is disabled; enable it first.');
        }
        const sent = await write(deps, tx, portalId, TEST_EVENT_TYPE, { endpointId }, [endpointId]);
        return { eventId: sent.eventId, deliveryId: sent.deliveryIds[0]! };
      });
    },

    /**
     * Deliver a delivery's event again to its endpoint, as a new delivery with the same
     * `webhook-id` (receivers deduplicate on it).
     *
     * @throws AppError `not_found`; `conflict` for a disabled endpoint.
     */
    async resend(portalId: number, deliveryId: string): Promise<{ deliveryId: string }> {
      return db.transaction(async (tx) => {
        const old = await repo.findDelivery(tx, portalId, deliveryId);
        if (!old) throw new AppError('not_found', 'No webhook delivery with this id.');
        const endpoint = await repo.findEndpoint(tx, portalId, old.endpointId);
        if (!endpoint?.enabled) {
          throw new AppError('conflict', 'The endpoint is disabled; enable it first.');
        }
        const id = `dlv_${randomBase62(16)}`;
        await repo.insertDelivery(tx, {
          id,
          portalId,
          endpointId: old.endpointId,
          eventId: old.eventId,
          nextAttemptAt: new Date(),
        });
        await queue.enqueue(tx, { deliveryId: id, attempt: 1, portalId });
        return { deliveryId: id };
      });
    },
  };
}

/** What an attempt needs, from the service's dependencies (production defaults). */
function attemptDepsOf(deps: WebhooksServiceDeps, log: Logger): AttemptDeps {
  const gate = { ...GATE_SETTINGS, ...deps.gate };
  return {
    db: deps.db,
    keyring: deps.keyring,
    queue: deps.queue,
    log,
    gate: createLoggedGate(log, gate),
    batches: createAttemptBatches(deps.db, deps.queue),
    retryScheduleMs: deps.retryScheduleMs ?? RETRY_SCHEDULE_MS,
    send: {
      policy: deps.addressPolicy,
      resolver: deps.resolver ?? systemResolver,
      timeoutMs: deps.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS,
      // As many kept-alive sockets per endpoint as its lanes.
      agents: createAgentPool({ ...AGENT_POOL_SETTINGS, socketsPerEndpoint: gate.perEndpoint }),
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;

export function createWebhooksService(deps: WebhooksServiceDeps) {
  const { db, keyring, queue } = deps;
  const log = deps.logger.child({ component: 'webhooks' });
  const emitDeps: EmitDeps = { queue, keyring };
  const endpoints = createEndpointManagement({ db, keyring, policy: deps.addressPolicy });
  const attemptDeps = attemptDepsOf(deps, log);
  const reads = createLogAndReplays(deps, log, toDelivery);
  return {
    ...endpoints,
    ...createBatchEmit(emitDeps),

    /**
     * Emit an event inside the transaction of the change that causes it: the event (kept in the
     * portal's event log, subscribed endpoint or not) and one delivery per enabled endpoint
     * subscribed to `type`.
     *
     * @param tx the caller's transaction; the event commits or rolls back with it.
     */
    async emit<T extends EventType>(
      tx: repo.Tx,
      portalId: number,
      type: T,
      data: EventData[T],
    ): Promise<void> {
      const subscribed = await repo.subscribedEndpoints(tx, portalId, type);
      const endpointIds = subscribed.map((e) => e.id);
      await write(emitDeps, tx, portalId, type, data, endpointIds);
    },

    /**
     * Messaging's hook after a credit change: emits `credit.low` when the available credit
     * falls from at or above the portal's threshold to below it.
     *
     * @param change available credit before and after, in minor units of `currency`.
     */
    async creditChanged(
      tx: repo.Tx,
      portalId: number,
      change: { availableBefore: number; availableAfter: number; currency: string },
    ): Promise<void> {
      const threshold = await repo.creditLowThreshold(tx, portalId);
      if (threshold === null) return;
      if (change.availableBefore >= threshold && change.availableAfter < threshold) {
        await this.emit(tx, portalId, 'credit.low', {
          available: change.availableAfter,
          threshold,
          currency: change.currency,
        });
      }
    },

    /** The `credit.low` threshold in minor units, or null (no such events). */
    creditLowThreshold: (portalId: number) => repo.creditLowThreshold(db, portalId),

    /**
     * Set (or clear, with null) the `credit.low` threshold; audited.
     *
     * @throws AppError `invalid_request` for a negative or non-integer amount.
     */
    async setCreditLowThreshold(
      portalId: number,
      threshold: number | null,
      context: ChangeContext,
    ): Promise<void> {
      if (threshold !== null && (!Number.isSafeInteger(threshold) || threshold < 0)) {
        throw new AppError(
          'invalid_request',
          'The threshold is a whole number of minor units, 0 or more.',
        );
      }
      await db.transaction(async (tx) => {
        await repo.setCreditLowThreshold(tx, portalId, threshold);
        await recordAuditEvent(tx, {
          portalId,
          actor: context.actor,
          action: 'webhook_settings.changed',
          reason:
            threshold === null
              ? 'credit.low threshold cleared'
              : `credit.low threshold set to ${threshold} minor units`,
          requestId: context.requestId ?? null,
        });
      });
    },

    ...createManualSends(db, emitDeps),

    /** The portal's most recent deliveries (of one endpoint when given), newest first. */
    async recentDeliveries(
      portalId: number,
      options: { limit?: number; endpointId?: string } = {},
    ): Promise<WebhookDelivery[]> {
      const limit = Math.min(Math.max(options.limit ?? 50, 1), 500);
      const rows = await repo.recentDeliveries(db, portalId, limit, options.endpointId);
      return rows.map((r) => toDelivery(r.delivery, r.type));
    },

    ...reads,

    /** Start the queue, so events can be enqueued (main.ts; the CLI; tests). Idempotent. */
    start: () => queue.start(),
    /**
     * Start the queue when any endpoint exists, so a change made outside a server (the CLI on
     * its own storage) can queue the events it causes; without an endpoint no event is written
     * and the queue is left alone (a command stays quick).
     */
    async startIfEndpoints(): Promise<void> {
      if (await repo.anyEndpoint(db)) await queue.start();
    },
    /** Start this instance's delivery worker (main.ts; tests). */
    startWorker: () => queue.startWorker((job, context) => runAttempt(attemptDeps, job, context)),
    /** Stop it: the attempts under way are aborted and stay queued (retried after a restart). */
    stopWorker: async () => {
      await queue.stopWorker();
      // The kept-alive connections close with the worker (new ones are opened if it restarts).
      attemptDeps.send.agents?.close();
    },
  };
}
