/**
 * Replays: the events of a range of the event log queued again to one endpoint, each as a new
 * delivery of the same event — same `webhook-id`, same payload, signed afresh — so a receiver
 * that deduplicates on `webhook-id` is safe. The range is a time range (`since`, `until`) or a
 * cursor range of the log (`after`, `upTo`); optionally only some types, and optionally only
 * the events that did not reach the endpoint (none of its deliveries succeeded or is still
 * being tried). The deliveries start `perSecond` a second, in the log's order; each then follows
 * the usual retry schedule. Progress is counted from the deliveries that carry the replay's id.
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#webhook-id
 * @see docs/how-to/catch-up-on-missed-events.md
 */
import { and, desc, eq, gte, inArray, lt, ne, sql } from 'drizzle-orm';
import { recordAuditEvent } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { webhookDeliveries, webhookEvents, webhookReplays } from '../db/schema/index.ts';
import { randomBase62 } from '../platform/crypto.ts';
import { AppError } from '../platform/errors.ts';
import {
  afterPosition,
  BELOW_HORIZON,
  decodeLogCursor,
  encodeLogCursor,
  LOG_ORDER,
  upToPosition,
} from './event-log.ts';
import { TEST_EVENT_TYPE } from './webhook-events.ts';
import type { ChangeContext } from './webhook-endpoints.ts';
import type { WebhookQueue } from './webhook-queue.ts';
import * as repo from './webhooks-repository.ts';

/** Events one replay queues at most; a larger range answers where to continue. */
export const REPLAY_MAX_EVENTS = 10_000;

/** What to replay: a time range or a cursor range, and filters. */
export interface ReplayRequest {
  /** ISO 8601: events created at or after this instant. */
  since?: string | undefined;
  /** ISO 8601: events created before this instant (default: now). With `since` only. */
  until?: string | undefined;
  /** A cursor of the event log: events after it. */
  after?: string | undefined;
  /** A cursor of the event log: events up to it, included (default: the latest). With `after`. */
  upTo?: string | undefined;
  /** Only these types; each must be one the endpoint subscribes to (default: all of those). */
  types?: readonly string[] | undefined;
  /** Only events that did not reach the endpoint: no delivery succeeded or is still pending. */
  failedOnly?: boolean | undefined;
}

/** A replay as the page and the API show it. */
export interface WebhookReplay {
  id: string;
  endpointId: string;
  /** The request as given, its defaults filled in (`types`, `failedOnly`, `until`). */
  criteria: {
    since?: string;
    until?: string;
    after?: string;
    upTo?: string;
    types: string[];
    failedOnly: boolean;
  };
  /** Events queued. */
  eventCount: number;
  /** The deliveries' states now (a delivery's retries keep it `pending`). */
  progress: { pending: number; succeeded: number; failed: number };
  /** `running` while a delivery is pending, then `finished`. */
  status: 'running' | 'finished';
  /**
   * When the range held more than `REPLAY_MAX_EVENTS` events: the cursor of the last one
   * queued; replay again with `after` set to it (and the same `types`, `failedOnly`). Else null.
   */
  continueAfter: string | null;
  createdAt: string;
}

const invalid = (field: string, message: string) =>
  new AppError('invalid_request', `The replay's ${field} ${message}.`, {
    details: [{ field: `body.${field}`, message }],
  });

function instant(value: string, field: string): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalid(field, 'is not an ISO 8601 date and time');
  return at;
}

/** The range's conditions on `webhook_events`, and the criteria as stored. */
function rangeOf(request: ReplayRequest, now: Date) {
  const timed = request.since !== undefined;
  if (timed === (request.after !== undefined)) {
    throw invalid('range', 'needs exactly one of since (a time) and after (a cursor)');
  }
  if (timed && request.upTo !== undefined) throw invalid('upTo', 'goes with after, not since');
  if (!timed && request.until !== undefined) throw invalid('until', 'goes with since, not after');
  if (timed) {
    const since = instant(request.since!, 'since');
    const until = request.until === undefined ? now : instant(request.until, 'until');
    if (until <= since) throw invalid('until', 'must be later than since');
    return {
      conditions: [gte(webhookEvents.createdAt, since), lt(webhookEvents.createdAt, until)],
      criteria: { since: since.toISOString(), until: until.toISOString() },
    };
  }
  const after = decodeLogCursor(request.after!, 'body.after');
  const upTo = request.upTo === undefined ? null : decodeLogCursor(request.upTo, 'body.upTo');
  return {
    conditions: [afterPosition(after), ...(upTo ? [upToPosition(upTo)] : [])],
    criteria: { after: request.after!, ...(request.upTo !== undefined && { upTo: request.upTo }) },
  };
}

/** The types to replay: the endpoint's, or those asked that it subscribes to. */
function typesOf(request: ReplayRequest, subscribed: readonly string[]): string[] {
  if (request.types === undefined || request.types.length === 0) return [...subscribed];
  const foreign = request.types.filter((t) => !subscribed.includes(t));
  if (foreign.length > 0) {
    throw invalid(
      'types',
      `names type(s) the endpoint does not subscribe to: ${foreign.join(', ')}; it subscribes to ${subscribed.join(', ')}`,
    );
  }
  return [...new Set(request.types)];
}

/** Deliveries of one replay by status. */
async function progressOf(db: repo.Tx | Database, replayIds: readonly string[]) {
  const rows =
    replayIds.length === 0
      ? []
      : await db
          .select({
            replayId: webhookDeliveries.replayId,
            status: webhookDeliveries.status,
            count: sql<number>`count(*)::int`,
          })
          .from(webhookDeliveries)
          .where(inArray(webhookDeliveries.replayId, [...replayIds]))
          .groupBy(webhookDeliveries.replayId, webhookDeliveries.status);
  const progress = new Map<string, WebhookReplay['progress']>();
  for (const id of replayIds) progress.set(id, { pending: 0, succeeded: 0, failed: 0 });
  for (const row of rows) progress.get(row.replayId!)![row.status] = row.count;
  return progress;
}

type ReplayRow = typeof webhookReplays.$inferSelect;

function toReplay(row: ReplayRow, progress: WebhookReplay['progress']): WebhookReplay {
  const { continueAfter, ...criteria } = row.criteria as WebhookReplay['criteria'] & {
    continueAfter?: string | null;
  };
  return {
    id: row.id,
    endpointId: row.endpointId,
    criteria,
    eventCount: row.eventCount,
    progress,
    status: progress.pending > 0 ? 'running' : 'finished',
    continueAfter: continueAfter ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export interface ReplayDeps {
  db: Database;
  queue: Pick<WebhookQueue, 'enqueueMany'>;
  /** Deliveries started per second (WEBHOOK_REPLAY_PER_SECOND). */
  perSecond: number;
  now?: () => Date;
}

/** `replay`: the events chosen, their deliveries and jobs, the replay row and its audit. */
async function queueReplay(
  deps: ReplayDeps,
  at: Date,
  ask: { portalId: number; endpointId: string; request: ReplayRequest; context: ChangeContext },
): Promise<WebhookReplay> {
  const { db } = deps;
  const { portalId, endpointId, request, context } = ask;
  const range = rangeOf(request, at);
  return db.transaction(async (tx) => {
    const endpoint = await repo.findEndpoint(tx, portalId, endpointId);
    if (!endpoint) throw new AppError('not_found', 'No webhook endpoint with this id.');
    if (!endpoint.enabled) {
      throw new AppError('conflict', 'The endpoint is disabled; enable it first.');
    }
    const types = typesOf(request, endpoint.eventTypes);
    const failedOnly = request.failedOnly === true;
    const reached = tx
      .select({ one: sql`1` })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.eventId, webhookEvents.id),
          eq(webhookDeliveries.endpointId, endpointId),
          inArray(webhookDeliveries.status, ['succeeded', 'pending']),
        ),
      );
    const events = await tx
      .select({
        id: webhookEvents.id,
        xid: webhookEvents.writerXid,
        position: webhookEvents.position,
      })
      .from(webhookEvents)
      .where(
        and(
          eq(webhookEvents.portalId, portalId),
          ne(webhookEvents.type, TEST_EVENT_TYPE),
          inArray(webhookEvents.type, types),
          BELOW_HORIZON,
          ...range.conditions,
          ...(failedOnly ? [sql`not exists (${reached})`] : []),
        ),
      )
      .orderBy(...LOG_ORDER)
      .limit(REPLAY_MAX_EVENTS + 1);
    const queued = events.slice(0, REPLAY_MAX_EVENTS);
    const last = queued.at(-1);
    const continueAfter =
      events.length > REPLAY_MAX_EVENTS && last
        ? encodeLogCursor({ xid: last.xid, position: last.position })
        : null;
    const id = `rpl_${randomBase62(16)}`;
    const criteria = { ...range.criteria, types, failedOnly };
    const [row] = await tx
      .insert(webhookReplays)
      .values({
        id,
        portalId,
        endpointId,
        criteria: { ...criteria, continueAfter },
        eventCount: queued.length,
      })
      .returning();
    const gapMs = 1000 / deps.perSecond;
    const deliveries = queued.map((event, i) => ({
      id: `dlv_${randomBase62(16)}`,
      portalId,
      endpointId,
      eventId: event.id,
      replayId: id,
      nextAttemptAt: new Date(at.getTime() + Math.floor(i * gapMs)),
    }));
    await repo.insertDeliveries(tx, deliveries);
    await deps.queue.enqueueMany(
      tx,
      deliveries.map((d) => ({
        job: { deliveryId: d.id, attempt: 1, portalId },
        startAfter: d.nextAttemptAt,
      })),
    );
    await recordAuditEvent(tx, {
      portalId,
      actor: context.actor,
      action: 'webhook_endpoint.replayed',
      reason:
        `Replay ${id} to ${endpointId}: ${queued.length} event(s)` +
        (failedOnly ? ', failed only' : '') +
        '.',
      requestId: context.requestId ?? null,
    });
    const pending = { pending: queued.length, succeeded: 0, failed: 0 };
    return toReplay(row!, pending);
  });
}

export function createReplays(deps: ReplayDeps) {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());
  return {
    /**
     * Queue the events of a range again to endpoint `endpointId`, paced; audited.
     *
     * @returns the replay (its progress all `pending`; `eventCount` 0 when nothing matched).
     * @throws AppError `not_found` (an unknown endpoint, or another portal's); `conflict` for a
     *   disabled endpoint; `invalid_request` for a bad range, cursor or type.
     */
    replay: (
      portalId: number,
      endpointId: string,
      request: ReplayRequest,
      context: ChangeContext,
    ) => queueReplay(deps, now(), { portalId, endpointId, request, context }),

    /** @throws AppError `not_found` for an unknown replay or endpoint, another portal's alike. */
    async getReplay(portalId: number, endpointId: string, replayId: string) {
      const [row] = await db
        .select()
        .from(webhookReplays)
        .where(
          and(
            eq(webhookReplays.portalId, portalId),
            eq(webhookReplays.endpointId, endpointId),
            eq(webhookReplays.id, replayId),
          ),
        );
      if (!row) throw new AppError('not_found', 'No replay with this id for this endpoint.');
      const progress = await progressOf(db, [row.id]);
      return toReplay(row, progress.get(row.id)!);
    },

    /** The portal's latest replays (of every endpoint), newest first, with their progress. */
    async recentReplays(portalId: number, limit = 10): Promise<WebhookReplay[]> {
      const rows = await db
        .select()
        .from(webhookReplays)
        .where(eq(webhookReplays.portalId, portalId))
        .orderBy(desc(webhookReplays.createdAt), desc(webhookReplays.id))
        .limit(limit);
      const progress = await progressOf(
        db,
        rows.map((r) => r.id),
      );
      return rows.map((r) => toReplay(r, progress.get(r.id)!));
    },
  };
}
