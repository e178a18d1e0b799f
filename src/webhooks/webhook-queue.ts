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
import type PgBoss from 'pg-boss';
import type { JobQueue } from '../jobs/job-queue.ts';
import type { Logger } from '../platform/logger.ts';
import type { Tx } from './webhooks-repository.ts';

export const DELIVERY_QUEUE = 'webhook.deliver';

/** One attempt of one delivery. `attempt` is 1-based; a job whose attempt already ran is a no-op. */
export interface DeliveryJob {
  deliveryId: string;
  attempt: number;
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

/** Worker options: how often an idle worker polls, and how many attempts run at once. */
export interface WorkerSettings {
  /** Seconds between polls of an idle worker. */
  pollingIntervalSeconds: number;
  /**
   * Attempts sending at once on this instance. Each is a slot of its own: a free slot takes the
   * next due job at once, whatever its neighbours are waiting for.
   */
  concurrency: number;
}

export const WORKER_SETTINGS: WorkerSettings = { pollingIntervalSeconds: 0.5, concurrency: 16 };

/**
 * The worker: a loop that fetches as many due jobs as it has free slots and runs each on its
 * own, completing (or failing) each job when its attempt ends — never waiting for a batch's
 * slowest attempt. pg-boss's `work` would hand out batches and wait for the whole batch.
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
  const slotFreed = () => {
    if (full) wake?.();
  };
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
      if (ok) await boss.complete(DELIVERY_QUEUE, job.id);
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
        jobs = await boss.fetch<DeliveryJob>(DELIVERY_QUEUE, { batchSize: free });
      } catch (err) {
        log.error({ error: (err as Error).message }, 'webhook jobs not fetched');
      }
      // Jobs fetched as the worker stops run too: they see the abort and stay queued.
      for (const job of jobs) {
        busy++;
        const p = run(job);
        running.add(p);
        void p.finally(() => running.delete(p));
      }
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
