/**
 * The event log as a service: its reads (`GET /events`) and its retention sweep, which deletes
 * events older than `EVENTS_RETENTION_DAYS` with their deliveries (the `webhooks.event-retention`
 * background task runs it every `EVENT_SWEEP_INTERVAL_MS`, once across instances:
 * src/background-tasks.ts); with the replays and the delivery history over it, for the webhooks
 * service.
 *
 * @see docs/webhooks.md "The event log"
 */
import type { Database } from '../db/client.ts';
import type { Logger } from '../platform/logger.ts';
import { deliveryCursor, deliveryHistory, type HistoryQuery } from './delivery-history.ts';
import type { Config } from '../config.ts';
import type { DeliveryRow } from './webhooks-repository.ts';
import type { WebhookQueue } from './webhook-queue.ts';
import { createReplays } from './webhook-replay.ts';
import type { EventKeyring } from './event-payload.ts';
import {
  decodeLogCursor,
  expireEvents,
  LOG_START,
  readEventLog,
  type LoggedEvent,
} from './event-log.ts';

/** Time between two retention sweeps, in milliseconds (5 minutes). */
export const EVENT_SWEEP_INTERVAL_MS = 5 * 60_000;

const DAY_MS = 24 * 3_600_000;

/** A page of the log as `GET /events` asks for it. */
export interface EventLogRequest {
  /** A cursor from an earlier page (`nextCursor` or an event's `cursor`); absent: the start. */
  since?: string | undefined;
  types?: readonly string[] | undefined;
  /** 1–1000. */
  limit: number;
}

export function createEventLog(deps: {
  db: Database;
  keyring: EventKeyring;
  log: Logger;
  /** Days events are kept. */
  retentionDays: number;
}) {
  const { db } = deps;
  const sweepEvents = (now = new Date()) =>
    expireEvents(db, new Date(now.getTime() - deps.retentionDays * DAY_MS));
  return {
    /**
     * The portal's events after `request.since`, in the log's order.
     *
     * @throws AppError `invalid_request` for a cursor this service did not produce.
     */
    readEvents(
      portalId: number,
      request: EventLogRequest,
    ): Promise<{ items: LoggedEvent[]; nextCursor: string; hasMore: boolean }> {
      const after =
        request.since === undefined
          ? LOG_START
          : decodeLogCursor(request.since, 'querystring.since');
      return readEventLog(db, deps.keyring, portalId, {
        after,
        types: request.types,
        limit: request.limit,
      });
    },

    /** Delete the events past the retention period (at `now`). @returns how many. */
    sweepEvents,
  };
}

/**
 * The event log, replays and the delivery history, as parts of the webhooks service.
 *
 * @param toDelivery the service's shape of a delivery row.
 */
export function createLogAndReplays<Delivery>(
  deps: {
    db: Database;
    keyring: EventKeyring;
    queue: Pick<WebhookQueue, 'enqueueMany'>;
    settings?: Pick<Config, 'EVENTS_RETENTION_DAYS' | 'WEBHOOK_REPLAY_PER_SECOND'> | undefined;
  },
  log: Logger,
  toDelivery: (row: DeliveryRow, eventType: string) => Delivery,
) {
  const { db, keyring, queue, settings } = deps;
  return {
    /**
     * One endpoint's delivery history, newest first, a page at a time.
     *
     * @throws AppError `not_found` for an unknown endpoint; `invalid_request` for a bad cursor.
     */
    async deliveryHistory(
      portalId: number,
      endpointId: string,
      query: HistoryQuery,
    ): Promise<{ items: Delivery[]; nextCursor: string | null }> {
      const page = await deliveryHistory(db, portalId, endpointId, query);
      return deliveryCursor.page(page, (r) => toDelivery(r.delivery, r.type));
    },
    /**
     * The portal's deliveries to every endpoint, newest first, a page at a time (the webhooks
     * page's history beyond the latest).
     *
     * @throws AppError `invalid_request` for a bad cursor.
     */
    async portalDeliveries(
      portalId: number,
      query: HistoryQuery,
    ): Promise<{ items: Delivery[]; nextCursor: string | null }> {
      const page = await deliveryHistory(db, portalId, null, query);
      return deliveryCursor.page(page, (r) => toDelivery(r.delivery, r.type));
    },
    ...createReplays({ db, queue, perSecond: settings?.WEBHOOK_REPLAY_PER_SECOND ?? 10 }),
    ...createEventLog({ db, keyring, log, retentionDays: settings?.EVENTS_RETENTION_DAYS ?? 30 }),
  };
}
