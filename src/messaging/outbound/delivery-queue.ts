/**
 * The durable delivery queue: the message row is its own delivery job. The statement that
 * queues a message (message-insert.ts) sets its `delivery_due_at` to now; the worker of any
 * instance claims the due messages in batches and holds each under a lease:
 *
 * - **Claim**: one statement takes up to `batchSize` messages whose `delivery_due_at` has passed,
 *   soonest first, with `FOR UPDATE SKIP LOCKED` (two instances never take the same rows), sets
 *   `delivery_due_at` to the end of the lease (`expireS` from now) and counts the attempt in
 *   `delivery_attempts`; it returns the whole rows, so the worker reads nothing more to send them.
 * - **Lease**: a worker killed while it holds a message never clears it: when the lease ends the
 *   message is due again and another instance takes it (the attempt protocol of
 *   docs/decisions/0034-delivery-idempotency.md then keeps the provider from being called twice).
 * - **Done** (sent, failed, held, no longer queued): one statement clears `delivery_due_at` of
 *   the batch's messages. **Retry** (a throttled or failed call): one statement sets it to
 *   `retryDelayS × 2^(attempt − 1)` from now (exponential backoff, as pg-boss's was), while
 *   attempts remain (`retryLimit` retries after the first attempt). Both only touch a message
 *   still under this worker's lease (its `delivery_attempts` unchanged).
 * - **Out of attempts**: a message claimed for the `retryLimit + 2`-th time (each earlier lease
 *   ended without an outcome: its worker died, or the database failed under it) is handed to
 *   `exhausted`, which fails it and releases its credit, instead of being sent: a queued message
 *   always ends, never waits forever with its credit held.
 * - **Wake-up**: `wake()` (called by the send path after its statement committed) makes an idle
 *   worker claim at once; while a claim returns messages the worker claims again as soon as it
 *   has room, so nothing caps the rate but the work; an idle worker also looks every
 *   `pollingIntervalS` (messages queued by another instance, retries coming due, leases ending).
 *
 * @see docs/messaging.md "The queue"
 * @see docs/decisions/0059-message-row-queue.md
 * @see https://www.postgresql.org/docs/current/sql-select.html#SQL-FOR-UPDATE-SHARE
 */
import { and, asc, count, eq, inArray, isNotNull, isNull, lte, sql } from 'drizzle-orm';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '../../db/client.ts';
import { messages } from '../../db/schema/messages.ts';
import type { Logger } from '../../platform/logger.ts';
import { asOutbound, type Db, type MessageRow } from '../store/messages-repository.ts';

/** The settings of the queue, from the configuration (`MESSAGING_*`). */
export interface DeliveryQueueSettings {
  /** Retries after the first attempt (`MESSAGING_RETRY_LIMIT`). */
  retryLimit: number;
  /** Seconds before the first retry; doubled each time (`MESSAGING_RETRY_DELAY_S`). */
  retryDelayS: number;
  /** Seconds a worker's lease on a message lasts (`MESSAGING_JOB_EXPIRE_S`). */
  expireS: number;
  /** Messages one claim takes at most (`MESSAGING_WORKER_BATCH`). */
  batchSize: number;
  /** Seconds between claims while the queue is empty. */
  pollingIntervalS: number;
}

/** A claimed message as the worker sees it. */
export interface SendJob {
  /** The message row as the claim returned it (its lease taken). */
  row: MessageRow;
  /** Attempts already made before this one (0 on the first). */
  retryCount: number;
  retryLimit: number;
}

/** What the worker says of a batch: the messages to retry later (every other one is done). */
export type BatchHandler = (jobs: SendJob[]) => Promise<{ retry: SendJob[] }>;

/** Batches a worker handles at once: while one waits on pacing, the next is claimed. */
const BATCHES_IN_FLIGHT = 4;
/** Longest wait after a failed claim or completion before trying again, in ms. */
const ERROR_BACKOFF_MAX_MS = 5_000;

export interface DeliveryQueue {
  /**
   * Start claiming on this instance: `handle` gets each claimed batch; `exhausted` gets the
   * messages out of attempts (it must end them: fail them and release their credit). Idempotent.
   */
  work(handle: BatchHandler, exhausted: (messages: { messageId: string }[]) => Promise<void>): void;
  /** Messages were queued: claim now rather than at the next poll. Cheap; call freely. */
  wake(): void;
  /**
   * Stop claiming on this instance and wait for the batches in hand (the worker's `abort`
   * ends their pacing waits: those messages are retried). Idempotent.
   */
  stopWorkers(): Promise<void>;
  /** Messages due or held under a lease (tests, the benchmark). */
  waiting(): Promise<number>;
}

/**
 * Claim up to `limit` due messages for `leaseS` seconds (see the module comment).
 *
 * @returns the claimed rows, `deliveryAttempts` already counting this claim.
 */
export async function claimDueMessages(
  db: Database,
  limit: number,
  leaseS: number,
): Promise<MessageRow[]> {
  const due = db
    .select({ id: messages.id })
    .from(messages)
    .where(and(isNotNull(messages.deliveryDueAt), lte(messages.deliveryDueAt, sql`now()`)))
    .orderBy(asc(messages.deliveryDueAt))
    .limit(limit)
    .for('update', { skipLocked: true });
  const rows = await db
    .update(messages)
    .set({
      deliveryDueAt: sql`now() + make_interval(secs => ${leaseS})`,
      deliveryAttempts: sql`${messages.deliveryAttempts} + 1`,
    })
    .where(inArray(messages.id, due))
    .returning();
  return asOutbound(rows);
}

/** `(id, attempts)` pairs as a `VALUES` list, for the statements that end or defer leases. */
function leasesOf(rows: readonly Pick<MessageRow, 'id' | 'deliveryAttempts'>[], extra?: number[]) {
  return sql.join(
    rows.map(
      (r, i) =>
        sql`(${r.id}::text, ${r.deliveryAttempts}::int${extra ? sql`, ${extra[i]}::float8` : sql``})`,
    ),
    sql`, `,
  );
}

/** The worker is done with these messages: no longer due (only under the lease it holds). */
export async function completeDeliveries(
  db: Database,
  rows: readonly Pick<MessageRow, 'id' | 'deliveryAttempts'>[],
): Promise<void> {
  if (rows.length === 0) return;
  await db.execute(sql`update ${messages} m set delivery_due_at = null
    from (values ${leasesOf(rows)}) as d(id, attempts)
    where m.id = d.id and m.delivery_attempts = d.attempts`);
}

/** Due again after each one's backoff (only under the lease this worker holds), in seconds. */
async function deferDeliveries(
  db: Database,
  rows: readonly Pick<MessageRow, 'id' | 'deliveryAttempts'>[],
  retryDelayS: number,
): Promise<void> {
  if (rows.length === 0) return;
  const delays = rows.map((r) => retryDelayS * 2 ** Math.max(0, r.deliveryAttempts - 1));
  await db.execute(sql`update ${messages} m
    set delivery_due_at = now() + make_interval(secs => d.delay)
    from (values ${leasesOf(rows, delays)}) as d(id, attempts, delay)
    where m.id = d.id and m.delivery_attempts = d.attempts`);
}

/**
 * `beginSendAttempt` for several messages in one statement (the delivery worker's batch).
 *
 * @returns the ids whose attempt was committed; the others must not be sent.
 */
export async function beginSendAttempts(
  db: Db,
  ids: readonly string[],
  at: Date,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .update(messages)
    .set({ sendAttemptedAt: at })
    .where(
      and(
        inArray(messages.id, [...ids]),
        eq(messages.status, 'queued'),
        isNull(messages.providerMessageId),
        isNull(messages.sendAttemptedAt),
      ),
    )
    .returning({ id: messages.id });
  return new Set(rows.map((r) => r.id));
}

/** `recordProviderMessageId` for several messages in one statement (wamids as the provider gave them). */
export async function recordProviderMessageIds(
  db: Db,
  accepted: readonly { id: string; wamid: string }[],
): Promise<void> {
  if (accepted.length === 0) return;
  const values = sql.join(
    accepted.map((a) => sql`(${a.id}::text, ${a.wamid}::text)`),
    sql`, `,
  );
  await db.execute(sql`update ${messages} m set provider_message_id = d.wamid
    from (values ${values}) as d(id, wamid)
    where m.id = d.id and m.direction = 'outbound' and m.provider_message_id is null`);
}

export function createDeliveryQueue(deps: {
  db: Database;
  settings: DeliveryQueueSettings;
  logger: Logger;
}): DeliveryQueue {
  const { db, settings } = deps;
  const log = deps.logger.child({ component: 'delivery-queue' });
  let running: Promise<void> | null = null;
  let stopping = false;
  /** Resolves the current idle wait (a wake-up, a finished batch, or stop). */
  let nudge: (() => void) | null = null;
  /** Set by `wake` while the loop is busy: claim again before idling. */
  let woken = false;
  const inFlight = new Set<Promise<void>>();

  const poke = () => {
    woken = true;
    nudge?.();
  };

  /** Wait for a poke or `ms`, whichever comes first. */
  async function idle(ms: number): Promise<void> {
    if (woken || stopping) return;
    const ac = new AbortController();
    await Promise.race([
      new Promise<void>((resolve) => (nudge = resolve)),
      sleep(ms, undefined, { signal: ac.signal }).catch(() => undefined),
    ]);
    ac.abort();
    nudge = null;
  }

  async function runBatch(
    claimed: MessageRow[],
    handle: BatchHandler,
    exhausted: (messages: { messageId: string }[]) => Promise<void>,
  ): Promise<void> {
    const out = claimed.filter((r) => r.deliveryAttempts > settings.retryLimit + 1);
    const jobs = claimed
      .filter((r) => r.deliveryAttempts <= settings.retryLimit + 1)
      .map((row) => ({
        row,
        retryCount: row.deliveryAttempts - 1,
        retryLimit: settings.retryLimit,
      }));
    if (out.length > 0) {
      // Ended before the lease is let go: a failure leaves them to the next lease.
      await exhausted(out.map((r) => ({ messageId: r.id })));
      await completeDeliveries(db, out);
    }
    if (jobs.length === 0) return;
    const { retry } = await handle(jobs);
    const again = new Set(retry.map((j) => j.row.id));
    await Promise.all([
      completeDeliveries(
        db,
        jobs.filter((j) => !again.has(j.row.id)).map((j) => j.row),
      ),
      deferDeliveries(
        db,
        retry.map((j) => j.row),
        settings.retryDelayS,
      ),
    ]);
  }

  async function loop(
    handle: BatchHandler,
    exhausted: (messages: { messageId: string }[]) => Promise<void>,
  ) {
    let failures = 0;
    while (!stopping) {
      if (inFlight.size >= BATCHES_IN_FLIGHT) {
        await Promise.race(inFlight);
        continue;
      }
      woken = false;
      let claimed: MessageRow[];
      try {
        claimed = await claimDueMessages(db, settings.batchSize, settings.expireS);
        failures = 0;
      } catch (err) {
        failures++;
        log.warn(
          { error: err instanceof Error ? err.name : typeof err },
          'claiming due messages failed; trying again',
        );
        await idle(Math.min(ERROR_BACKOFF_MAX_MS, 100 * 2 ** failures));
        continue;
      }
      if (claimed.length === 0) {
        await idle(settings.pollingIntervalS * 1000);
        continue;
      }
      const batch = runBatch(claimed, handle, exhausted)
        .catch((err: unknown) =>
          // Their leases end and another claim takes them again (an attempt counted).
          log.error(
            { error: err instanceof Error ? err.name : typeof err, messages: claimed.length },
            'a delivery batch could not be completed; its messages are taken again later',
          ),
        )
        .finally(() => {
          inFlight.delete(batch);
          nudge?.();
        });
      inFlight.add(batch);
    }
    await Promise.all(inFlight);
  }

  return {
    work(handle, exhausted) {
      if (running || stopping) return;
      running = loop(handle, exhausted);
    },
    wake: poke,
    async stopWorkers() {
      stopping = true;
      nudge?.();
      await running;
    },
    async waiting() {
      const [row] = await db
        .select({ n: count() })
        .from(messages)
        .where(isNotNull(messages.deliveryDueAt));
      return Number(row?.n ?? 0);
    },
  };
}
