/**
 * One attempt of one delivery, as the queue's worker runs it: read the delivery, sign, send
 * through the address guard, then record the outcome and — in the same transaction — queue the
 * next attempt on the schedule, or end the delivery. No lock is held during the HTTP call (an
 * attempt may take the whole timeout); the outcome is written only if this attempt is still the
 * delivery's next one, so a duplicate job records nothing (it may still have sent: at least once).
 *
 * Concurrent attempts share statements (`createAttemptBatches`): the deliveries of the attempts a
 * fetch started are read in one statement, and the successes that arrive within a few
 * milliseconds of each other are written in one. A failure, and a success at an endpoint that
 * was failing, is written in a transaction of its own (it may queue the next attempt, clear or
 * set the endpoint's failing time, or disable it).
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#delivery-behavior
 * @see docs/webhooks.md "Delivery and retries"
 */
import DataLoader from 'dataloader';
import { and, eq } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { webhookDeliveries } from '../db/schema/index.ts';
import { DecryptionError, type Keyring } from '../platform/keyring.ts';
import type { Logger } from '../platform/logger.ts';
import { openEventPayload } from './event-payload.ts';
import { secretsOf } from './webhook-endpoints.ts';
import type { AttemptResult, DeliveryGate } from './delivery-gate.ts';
import type { AttemptContext, DeliveryJob, WebhookQueue } from './webhook-queue.ts';
import { sendWebhook, type AttemptOutcome, type SendSettings } from './webhook-sender.ts';
import { signDelivery } from './webhook-signing.ts';
import * as repo from './webhooks-repository.ts';

/**
 * The Standard Webhooks retry schedule: entry n is the wait before attempt n + 1 (the first,
 * 0, is the immediate first attempt), in milliseconds. Eight attempts in all.
 */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** An endpoint failing for this long without one success is disabled (5 days), in ms. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3_600_000;

export const WEBHOOKS_ACTOR: Actor = { type: 'system', id: 'webhooks' };

export interface AttemptDeps {
  db: Database;
  keyring: Keyring;
  queue: Pick<WebhookQueue, 'enqueue'>;
  send: SendSettings;
  retryScheduleMs: readonly number[];
  /** This instance's lanes and circuit breakers. */
  gate: DeliveryGate;
  /** Shared statements of concurrent attempts (`createAttemptBatches`). */
  batches: AttemptBatches;
  log: Logger;
}

type Loaded = NonNullable<Awaited<ReturnType<typeof repo.loadDeliveryForAttempt>>>;

/** Successes that arrive within this many ms of the first are written in one statement. */
export const RECORD_WINDOW_MS = 5;

/** Statements shared by concurrent attempts (most: 200 rows each). */
export interface AttemptBatches {
  /** The delivery with its endpoint and event, or undefined when it is gone. */
  load(deliveryId: string): Promise<Loaded | undefined>;
  /** Record a 2xx; false when another run recorded this attempt first. */
  recordSucceeded(item: repo.Succeeded): Promise<boolean>;
  /**
   * Put attempt `job.attempt` off until `until`, unsent and not counted: its delivery's next
   * attempt time moves and the same attempt is queued again for then; false when it is no
   * longer the delivery's next.
   */
  postpone(job: DeliveryJob, until: Date): Promise<boolean>;
}

/**
 * Batch the attempts' reads (those started in one tick), their successes and their postponements
 * (those within `RECORD_WINDOW_MS`: an endpoint's waiting line put off at once by its circuit or
 * its wait's end) with DataLoader, uncached: each call is answered from its batch's statements,
 * and a batch that fails rejects each of its calls (their jobs are retried).
 *
 * @see https://github.com/graphql/dataloader#batching
 */
export function createAttemptBatches(
  db: Database,
  queue: Pick<WebhookQueue, 'enqueueMany'>,
): AttemptBatches {
  const windowed = {
    cache: false,
    maxBatchSize: 200,
    batchScheduleFn: (flush: () => void) => setTimeout(flush, RECORD_WINDOW_MS),
  };
  const loads = new DataLoader<string, Loaded | undefined>(
    async (ids) => {
      const rows = await repo.loadDeliveriesForAttempt(db, ids);
      const byId = new Map(rows.map((r) => [r.delivery.id, r]));
      return ids.map((id) => byId.get(id));
    },
    { cache: false, maxBatchSize: 200 },
  );
  const successes = new DataLoader<repo.Succeeded, boolean>(async (items) => {
    const recorded = new Set(await repo.recordSucceeded(db, items));
    return items.map((i) => recorded.has(i.deliveryId));
  }, windowed);
  const postponements = new DataLoader<{ job: DeliveryJob; until: Date }, boolean>(
    (items) =>
      db.transaction(async (tx) => {
        const moved = new Set(
          await repo.postponeDeliveries(
            tx,
            items.map(({ job, until }) => ({
              deliveryId: job.deliveryId,
              attempt: job.attempt,
              until,
            })),
          ),
        );
        await queue.enqueueMany(
          tx,
          items
            .filter(({ job }) => moved.has(job.deliveryId))
            .map(({ job, until }) => ({ job, startAfter: until })),
        );
        return items.map(({ job }) => moved.has(job.deliveryId));
      }),
    windowed,
  );
  return {
    load: (deliveryId) => loads.load(deliveryId),
    recordSucceeded: (item) => successes.load(item),
    postpone: (job, until) => postponements.load({ job, until }),
  };
}

/**
 * The wait before the attempt after `attempt`, in ms, or null when the schedule is over: the
 * schedule's wait, or longer when the endpoint asked for it with `Retry-After` — but never
 * longer than the schedule's longest wait (10 h in production).
 */
export function nextDelayMs(
  schedule: readonly number[],
  attempt: number,
  outcome: Pick<AttemptOutcome, 'retryAfterMs'>,
): number | null {
  const planned = schedule[attempt];
  if (planned === undefined) return null;
  const asked = Math.min(outcome.retryAfterMs ?? 0, Math.max(...schedule));
  return Math.max(planned, asked);
}

/** Disable the endpoint, audited — once: a concurrent attempt that also disables it finds it done. */
async function disableEndpoint(tx: repo.Tx, loaded: Loaded, reason: string): Promise<void> {
  const { endpoint } = loaded;
  const row = await repo.disableEndpoint(tx, endpoint.portalId, endpoint.id, reason);
  if (!row) return;
  await recordAuditEvent(tx, {
    portalId: endpoint.portalId,
    actor: WEBHOOKS_ACTOR,
    action: 'webhook_endpoint.disabled',
    reason: `Endpoint ${endpoint.id} disabled: ${reason}.`,
  });
}

/** The delivery's row while `job` is its next attempt (pending, the attempts before it made). */
const isNextAttempt = (job: DeliveryJob) =>
  and(
    eq(webhookDeliveries.id, job.deliveryId),
    eq(webhookDeliveries.status, 'pending'),
    eq(webhookDeliveries.attempts, job.attempt - 1),
  );

/** Record `outcome` of attempt `job.attempt`; false when another run recorded it first. */
async function recordOutcome(
  deps: AttemptDeps,
  loaded: Loaded,
  job: DeliveryJob,
  outcome: AttemptOutcome,
): Promise<boolean> {
  const now = new Date();
  const { endpoint } = loaded;
  return deps.db.transaction(async (tx) => {
    const ok = outcome.error === null;
    const gone = outcome.statusCode === 410;
    const failingSince = ok ? null : (endpoint.failingSince ?? now);
    const tooLong = !ok && now.getTime() - failingSince!.getTime() >= DISABLE_AFTER_FAILING_MS;
    const delay =
      ok || gone || tooLong ? null : nextDelayMs(deps.retryScheduleMs, job.attempt, outcome);
    const next = delay === null ? null : new Date(now.getTime() + delay);
    const updated = await tx
      .update(webhookDeliveries)
      .set({
        attempts: job.attempt,
        status: ok ? 'succeeded' : next ? 'pending' : 'failed',
        lastStatusCode: outcome.statusCode,
        lastError: ok
          ? null
          : next || gone || tooLong
            ? outcome.error
            : `${outcome.error}; retries exhausted`,
        lastLatencyMs: outcome.latencyMs,
        lastAttemptAt: now,
        nextAttemptAt: next,
      })
      .where(isNextAttempt(job))
      .returning({ id: webhookDeliveries.id });
    if (updated.length === 0) return false;
    if ((failingSince?.getTime() ?? null) !== (endpoint.failingSince?.getTime() ?? null)) {
      await repo.updateEndpoint(tx, endpoint.portalId, endpoint.id, { failingSince });
    }
    if (gone) await disableEndpoint(tx, loaded, 'the endpoint answered 410 Gone');
    else if (tooLong) {
      await disableEndpoint(
        tx,
        loaded,
        `every delivery failed since ${failingSince!.toISOString()} (5 days)`,
      );
    }
    if (next)
      await deps.queue.enqueue(
        tx,
        { deliveryId: job.deliveryId, attempt: job.attempt + 1, portalId: endpoint.portalId },
        next,
      );
    return true;
  });
}

/** What the breaker makes of an outcome. */
const resultOf = (outcome: AttemptOutcome): AttemptResult =>
  outcome.error === 'timeout' ? 'timeout' : outcome.error === 'aborted' ? 'aborted' : 'other';

/**
 * Run one attempt: sent when the endpoint's lanes and circuit let it (see `delivery-gate.ts`),
 * else put off; a worker stopping aborts it, and it stays queued. Throws only when the database
 * fails (pg-boss then retries the job).
 */
export async function runAttempt(
  deps: AttemptDeps,
  job: DeliveryJob,
  context: AttemptContext,
): Promise<void> {
  const loaded = await deps.batches.load(job.deliveryId);
  if (!loaded) return;
  const { delivery, endpoint, event } = loaded;
  if (delivery.status !== 'pending' || delivery.attempts >= job.attempt) return;
  if (!endpoint.enabled) {
    await repo.updateDelivery(deps.db, delivery.id, {
      status: 'failed',
      lastError: 'endpoint disabled',
      nextAttemptAt: null,
    });
    return;
  }
  // Decrypted before the endpoint's turn, so a lane holds only the signing and the exchange.
  const opened = await open(deps, loaded);
  if (!opened) return;
  const admission = await context.park(
    deps.gate.acquire(endpoint.portalId, endpoint.id, context.signal),
  );
  if (admission.kind !== 'send') {
    const until = admission.kind === 'postpone' ? admission.until : new Date();
    await deps.batches.postpone(job, until);
    if (admission.kind === 'postpone') {
      deps.log.debug(
        { endpointId: endpoint.id, deliveryId: delivery.id, reason: admission.reason, until },
        'webhook attempt postponed',
      );
    }
    return;
  }
  let outcome: AttemptOutcome | null = null;
  try {
    const headers = signDelivery(event.id, new Date(), opened.body, opened.secrets);
    outcome = await sendWebhook(
      endpoint.url,
      opened.body,
      headers,
      deps.send,
      context.signal,
      endpoint.id,
    );
  } finally {
    // A lane is the HTTP exchange: it frees as soon as the answer is in, before the outcome is
    // written, so the endpoint's next attempt is sent meanwhile.
    admission.release(outcome ? resultOf(outcome) : 'other');
  }
  if (!outcome) return;
  if (resultOf(outcome) === 'aborted') {
    // The worker is stopping: the same attempt again, as soon as an instance runs.
    await deps.batches.postpone(job, new Date());
    return;
  }
  const recorded =
    outcome.error === null && outcome.statusCode !== null && endpoint.failingSince === null
      ? await deps.batches.recordSucceeded({
          deliveryId: delivery.id,
          attempt: job.attempt,
          statusCode: outcome.statusCode,
          latencyMs: outcome.latencyMs,
          at: new Date(),
        })
      : await recordOutcome(deps, loaded, job, outcome);
  // Ids, codes and times only: never the payload, the URL's query or the answer.
  deps.log.info(
    {
      portalId: endpoint.portalId,
      endpointId: endpoint.id,
      deliveryId: delivery.id,
      eventType: event.type,
      attempt: job.attempt,
      statusCode: outcome.statusCode,
      error: outcome.error,
      latencyMs: outcome.latencyMs,
      recorded,
    },
    'webhook attempt',
  );
}

/**
 * The delivery's body and signing secrets, decrypted; null (the delivery ended as failed) when
 * its secret or its data cannot be decrypted.
 */
async function open(
  deps: AttemptDeps,
  { delivery, endpoint, event }: Loaded,
): Promise<{ body: string; secrets: string[] } | null> {
  let secrets: string[];
  try {
    secrets = secretsOf(endpoint, deps.keyring);
  } catch (err) {
    if (!(err instanceof DecryptionError)) throw err;
    // A key removed from the keyring too early: retrying cannot help, and the admin must know.
    await repo.updateDelivery(deps.db, delivery.id, {
      status: 'failed',
      lastError: 'signing secret cannot be decrypted (rotate the secret)',
      nextAttemptAt: null,
    });
    deps.log.error(
      { endpointId: endpoint.id, deliveryId: delivery.id },
      'webhook secret unreadable',
    );
    return null;
  }
  let body: string;
  try {
    body = JSON.stringify(openEventPayload(deps.keyring, event.portalId, event.id, event.payload));
  } catch (err) {
    if (!(err instanceof DecryptionError)) throw err;
    // Its key removed from the keyring: retrying cannot help.
    await repo.updateDelivery(deps.db, delivery.id, {
      status: 'failed',
      lastError: 'event data cannot be decrypted',
      nextAttemptAt: null,
    });
    deps.log.error({ eventId: event.id, deliveryId: delivery.id }, 'webhook event unreadable');
    return null;
  }
  return { body, secrets };
}
