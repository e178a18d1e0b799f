/**
 * The webhooks' use of the service's one durable job queue (`jobs/job-queue.ts`, pg-boss,
 * shared with messaging): one queue, `webhook.deliver`, whose job is one attempt of one
 * delivery. A job is inserted through the caller's transaction (`JobQueue.inTransaction`), so
 * an event is queued exactly when the change that causes it commits. The retry schedule is ours (the
 * Standard Webhooks one, which pg-boss's exponential backoff cannot express): each failed
 * attempt queues the next as a new job with `startAfter`. pg-boss's own retries only cover a
 * worker that died or threw mid-attempt.
 *
 * @see https://github.com/timgit/pg-boss/blob/10.4.2/docs/readme.md
 * @see docs/webhooks.md "Delivery and retries"
 */
import { setMaxListeners } from 'node:events';
import DataLoader from 'dataloader';
import type PgBoss from 'pg-boss';
import { JOB_SCHEMA, type JobQueue } from '../jobs/job-queue.ts';
import { databaseErrorCode } from '../platform/database-errors.ts';
import { dependencyFaults } from '../platform/fault-summary.ts';
import type { Logger } from '../platform/logger.ts';
import { GATE_SETTINGS } from './delivery-gate.ts';
import type { Tx } from './webhooks-repository.ts';

export const DELIVERY_QUEUE = 'webhook.deliver';

/** One attempt of one delivery. `attempt` is 1-based; a job whose attempt already ran is a no-op. */
export interface DeliveryJob {
  deliveryId: string;
  attempt: number;
  /** The delivery's portal: the worker takes due jobs in turns across portals. */
  portalId: number;
}

/** What an attempt is given besides its job. */
export interface AttemptContext {
  /** Aborted when the worker stops: the attempt ends at once and leaves its delivery queued. */
  signal: AbortSignal;
  /**
   * Await `wait` without holding one of the worker's slots (an attempt waiting for its
   * endpoint's turn), so the worker takes other jobs meanwhile.
   */
  park<T>(wait: Promise<T>): Promise<T>;
}

/** The queue as the webhooks service sees it. */
export interface WebhookQueue {
  /** Start the shared queue and create `webhook.deliver` (idempotent); before any `enqueue`. */
  start(): Promise<void>;
  /** Queue one attempt inside `tx` (committed or rolled back with it). */
  enqueue(tx: Tx, job: DeliveryJob, startAfter?: Date): Promise<void>;
  /**
   * Queue many first attempts inside `tx` in one statement, each from its own time (`startAfter`)
   * or at once.
   */
  enqueueMany(tx: Tx, jobs: readonly { job: DeliveryJob; startAfter?: Date }[]): Promise<void>;
  /** Run `handler` for every due job on this instance until `stop`. */
  startWorker(handler: (job: DeliveryJob, context: AttemptContext) => Promise<void>): Promise<void>;
  /**
   * Stop this instance's worker: abort the attempts under way (each leaves its delivery queued
   * for the next instance) and wait for them to wrap up.
   */
  stopWorker(): Promise<void>;
}

/**
 * Worker options: how often an idle worker polls, how many attempts run at once, and how many
 * jobs of one portal it holds.
 */
export interface WorkerSettings {
  /** Seconds between polls of an idle worker. */
  pollingIntervalSeconds: number;
  /**
   * Attempts sending at once on this instance. Each is a slot of its own: a free slot takes the
   * next due job at once, whatever its neighbours are waiting for.
   */
  concurrency: number;
  /**
   * Jobs of one portal in hand at once on this instance (sending, waiting for their turn, or
   * being put off); the rest of its backlog stays queued, not fetched. What the delivery gate
   * takes of one endpoint without putting any off (its lanes and its waiting line): a job
   * fetched beyond it would only be put off again, a transaction each, in front of other
   * portals' attempts.
   */
  perPortal: number;
}

export const WORKER_SETTINGS: WorkerSettings = {
  pollingIntervalSeconds: 0.5,
  concurrency: 128,
  perPortal: GATE_SETTINGS.perEndpoint + GATE_SETTINGS.waitingPerPortal,
};

/** Completed jobs within this many ms of the first are marked so in one statement. */
export const COMPLETE_WINDOW_MS = 5;

/**
 * pg-boss's `fetch` (mark up to `$2` due jobs of queue `$1` active and return them, skipping
 * those another worker holds), but in turns across portals rather than oldest first: each due
 * job's turn is its rank among its portal's due jobs (by priority, then age), and the jobs are
 * taken by turn, then priority, then age. A portal with a thousand due jobs (a batch of events,
 * or the attempts its endpoint's circuit put off, all due at the same moment) therefore takes
 * one job of a fetch per portal with due jobs before its second, and never stands before
 * another portal's next delivery. `$3` (a JSON object, portal id → count) caps what a portal
 * already in hand may take, `$4` what any other may; a job without a portal is a group of its
 * own. The ranking reads every due job of
 * the queue, each poll: a sort of the backlog, no index.
 *
 * @see https://github.com/timgit/pg-boss/blob/10.4.2/src/plans.js (fetchNextJob)
 */
const FETCH_IN_TURNS = `
  WITH due AS (
    SELECT id, priority, created_on, coalesce(data->>'portalId', id::text) AS portal,
      row_number() OVER (
        PARTITION BY coalesce(data->>'portalId', id::text)
        ORDER BY priority DESC, created_on, id
      ) AS turn
    FROM ${JOB_SCHEMA}.job
    WHERE name = $1 AND state < 'active' AND start_after < now()
  ), next AS (
    SELECT j.id
    FROM ${JOB_SCHEMA}.job j JOIN due ON due.id = j.id
      LEFT JOIN jsonb_each_text($3::jsonb) AS cap(portal, room) ON cap.portal = due.portal
    WHERE j.name = $1 AND j.state < 'active' AND due.turn <= coalesce(cap.room::int, $4)
    ORDER BY due.turn, due.priority DESC, due.created_on, due.id
    LIMIT $2
    FOR UPDATE OF j SKIP LOCKED
  )
  UPDATE ${JOB_SCHEMA}.job j SET
    state = 'active',
    started_on = now(),
    retry_count = CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1 ELSE j.retry_count END
  FROM next
  WHERE j.name = $1 AND j.id = next.id
  RETURNING j.id, j.name, j.data, EXTRACT(epoch FROM j.expire_in) AS "expireInSeconds"`;

/**
 * Up to `batchSize` due delivery jobs, marked active, in turns across portals, at most
 * `room.get(p)` of portal `p` and `perPortal` of a portal not in `room`.
 */
async function fetchInTurns(
  boss: PgBoss,
  batchSize: number,
  room: ReadonlyMap<number, number>,
  perPortal: number,
): Promise<PgBoss.Job<DeliveryJob>[]> {
  const { rows } = await boss
    .getDb()
    .executeSql(FETCH_IN_TURNS, [
      DELIVERY_QUEUE,
      batchSize,
      JSON.stringify(Object.fromEntries(room)),
      perPortal,
    ]);
  return rows as PgBoss.Job<DeliveryJob>[];
}

/**
 * The worker: a loop that fetches as many due jobs as it has free slots, in turns across
 * portals and at most `perPortal` of one portal in hand, and runs each on its own, completing
 * (or failing) each job when its attempt ends — never waiting for a batch's slowest attempt.
 * pg-boss's `work` would hand out batches, oldest first, and wait for the whole batch.
 *
 * While there is work it never waits out the polling interval: a fetch that filled every free
 * slot is followed by the next at once; a fetch that took fewer (the queue had no more due jobs
 * this worker may take) waits for the interval, or until a quarter of the slots is free again
 * (when all were taken) or a portal that had its whole room is down to half of it. Completed
 * jobs are marked in one statement per few milliseconds (`COMPLETE_WINDOW_MS`).
 */
function startDeliveryWorker(
  boss: PgBoss,
  settings: WorkerSettings,
  handler: (job: DeliveryJob, context: AttemptContext) => Promise<void>,
  log: Logger,
) {
  const stopping = new AbortController();
  // Every attempt in flight (up to the worker's slots) listens on this one signal, and removes
  // its listener when it ends: more than Node's default of 10 at once is expected, not a leak.
  setMaxListeners(0, stopping.signal);
  const running = new Set<Promise<void>>();
  let busy = 0;
  /** Jobs in hand per portal (fetched, not yet settled). */
  const inHand = new Map<number, number>();
  const roomLeft = () =>
    new Map([...inHand].map(([portalId, n]) => [portalId, Math.max(0, settings.perPortal - n)]));
  // Woken early when a slot frees while every slot was taken; else it polls at its interval.
  let full = false;
  let wake: (() => void) | null = null;
  const nap = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => wake?.(), ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });
  // Woken when enough slots are free for a fetch worth its statement (a quarter of them).
  const refill = Math.max(1, Math.floor(settings.concurrency / 4));
  const slotFreed = () => {
    if (full && settings.concurrency - busy >= refill) wake?.();
  };
  const completions = new DataLoader<string, true>(
    async (ids) => {
      await boss.complete(DELIVERY_QUEUE, [...ids]);
      return ids.map(() => true as const);
    },
    {
      cache: false,
      maxBatchSize: 500,
      batchScheduleFn: (flush) => setTimeout(flush, COMPLETE_WINDOW_MS),
    },
  );
  const context: AttemptContext = {
    signal: stopping.signal,
    async park(wait) {
      busy--;
      slotFreed();
      try {
        return await wait;
      } finally {
        busy++;
      }
    },
  };
  const settle = async (job: PgBoss.Job<DeliveryJob>, ok: boolean) => {
    try {
      if (ok) await completions.load(job.id);
      else await boss.fail(DELIVERY_QUEUE, job.id);
    } catch (err) {
      // The job stays active and expires; pg-boss then hands it out again (a no-op if recorded).
      log.error({ jobId: job.id, error: (err as Error).message }, 'webhook job not settled');
    }
  };
  const run = async (job: PgBoss.Job<DeliveryJob>) => {
    let ok = true;
    try {
      await handler(job.data, context);
    } catch (err) {
      ok = false;
      log.error({ jobId: job.id, error: (err as Error).message }, 'webhook attempt failed');
    } finally {
      busy--;
      slotFreed();
    }
    await settle(job, ok);
    const { portalId } = job.data;
    const held = inHand.get(portalId) ?? 0;
    if (held <= 1) inHand.delete(portalId);
    else inHand.set(portalId, held - 1);
    // A portal that had all its room, down to half of it: its next due jobs are fetched now,
    // not at the next poll.
    if (held - 1 === Math.floor(settings.perPortal / 2)) wake?.();
  };
  const loop = (async () => {
    const idleMs = settings.pollingIntervalSeconds * 1000;
    while (!stopping.signal.aborted) {
      const free = settings.concurrency - busy;
      full = free <= 0;
      if (full) {
        await nap(idleMs);
        continue;
      }
      let jobs: PgBoss.Job<DeliveryJob>[] = [];
      try {
        jobs = await fetchInTurns(boss, free, roomLeft(), settings.perPortal);
      } catch (err) {
        // The database unreachable: said once per interval, and the next poll tries again.
        dependencyFaults.note('job-queue', databaseErrorCode(err), log);
      }
      // Jobs fetched as the worker stops run too: they see the abort and stay queued.
      for (const job of jobs) {
        busy++;
        inHand.set(job.data.portalId, (inHand.get(job.data.portalId) ?? 0) + 1);
        const p = run(job);
        running.add(p);
        // `run` records its own faults; this catch keeps a fault that escapes it (a log
        // failing) from ending the process as an unhandled rejection.
        void p
          .catch((err: unknown) =>
            log.error(
              { jobId: job.id, error: err instanceof Error ? err.name : typeof err },
              'webhook job not settled',
            ),
          )
          .finally(() => running.delete(p));
      }
      // Every free slot filled: there may be more due jobs, taken at once.
      if (jobs.length < free) await nap(idleMs);
    }
  })();
  return async () => {
    stopping.abort();
    wake?.();
    await loop;
    await Promise.allSettled([...running]);
  };
}

/**
 * Bind the webhooks to the service's job queue; `start` starts it (idempotent) and creates
 * `webhook.deliver`.
 *
 * @param attemptTimeoutMs one attempt's deadline: the job expires well after it, so a worker
 *   that died mid-attempt is retried by pg-boss, not one that is merely slow.
 */
export function pgBossWebhookQueue(
  jobs: JobQueue,
  attemptTimeoutMs: number,
  log: Logger,
  worker: WorkerSettings = WORKER_SETTINGS,
): WebhookQueue {
  const { boss } = jobs;
  let created: Promise<void> | null = null;
  let ready = false;
  const start = () =>
    (created ??= jobs
      .start()
      .then(() => boss.createQueue(DELIVERY_QUEUE))
      .then(() => {
        ready = true;
      }));
  const options = {
    retryLimit: 5,
    retryDelay: 30,
    retryBackoff: true,
    expireInSeconds: Math.ceil(attemptTimeoutMs / 1000) + 60,
  } satisfies PgBoss.SendOptions;
  let stop: (() => Promise<void>) | null = null;
  return {
    start,
    async enqueue(tx, job, startAfter) {
      // Never start pg-boss from inside a transaction: on PGlite (one connection) its schema
      // set-up would wait for the transaction that waits for it.
      if (!ready) throw new Error('The job queue is not started (webhooks.start()).');
      await boss.send(DELIVERY_QUEUE, job, {
        ...options,
        ...(startAfter && { startAfter }),
        db: jobs.inTransaction(tx),
      });
    },
    async enqueueMany(tx, items) {
      if (items.length === 0) return;
      if (!ready) throw new Error('The job queue is not started (webhooks.start()).');
      await boss.insert(
        items.map(({ job, startAfter }) => ({
          name: DELIVERY_QUEUE,
          data: job,
          ...(startAfter && { startAfter }),
          ...options,
        })),
        { db: jobs.inTransaction(tx) },
      );
    },
    async startWorker(handler) {
      await start();
      stop ??= startDeliveryWorker(boss, worker, handler, log);
    },
    async stopWorker() {
      const stopping = stop;
      stop = null;
      await stopping?.();
    },
  };
}
