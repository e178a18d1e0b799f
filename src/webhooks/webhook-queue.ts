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
import type PgBoss from 'pg-boss';
import type { JobQueue } from '../jobs/job-queue.ts';
import type { Tx } from './webhooks-repository.ts';

export const DELIVERY_QUEUE = 'webhook.deliver';

/** One attempt of one delivery. `attempt` is 1-based; a job whose attempt already ran is a no-op. */
export interface DeliveryJob {
  deliveryId: string;
  attempt: number;
}

/** The queue as the webhooks service sees it. */
export interface WebhookQueue {
  /** Start the shared queue and create `webhook.deliver` (idempotent); before any `enqueue`. */
  start(): Promise<void>;
  /** Queue one attempt inside `tx` (committed or rolled back with it). */
  enqueue(tx: Tx, job: DeliveryJob, startAfter?: Date): Promise<void>;
  /** Queue many first attempts inside `tx` in one statement, each from its own time. */
  enqueueMany(tx: Tx, jobs: readonly { job: DeliveryJob; startAfter: Date }[]): Promise<void>;
  /** Run `handler` for every due job on this instance until `stop`. */
  startWorker(handler: (job: DeliveryJob) => Promise<void>): Promise<void>;
  /** Stop this instance's worker (waits for the running attempt). */
  stopWorker(): Promise<void>;
}

/** Worker options: how often an idle worker polls, and how many attempts run at once. */
export interface WorkerSettings {
  /** Seconds between polls of an idle worker (pg-boss's minimum is 0.5). */
  pollingIntervalSeconds: number;
  /** Jobs fetched (and attempted concurrently) per poll. */
  batchSize: number;
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
  worker: WorkerSettings = { pollingIntervalSeconds: 0.5, batchSize: 5 },
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
  let workerId: string | null = null;
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
      if (!ready) throw new Error('The job queue is not started (webhooks.start()).');
      if (items.length === 0) return;
      await boss.insert(
        items.map(({ job, startAfter }) => ({
          name: DELIVERY_QUEUE,
          data: job,
          startAfter,
          ...options,
        })),
        { db: jobs.inTransaction(tx) },
      );
    },
    async startWorker(handler) {
      await start();
      workerId = await boss.work<DeliveryJob>(DELIVERY_QUEUE, worker, async (jobs) => {
        // One failing attempt must not fail its batch-mates: each settles on its own.
        const results = await Promise.allSettled(jobs.map((j) => handler(j.data)));
        const failed = results.find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
      });
    },
    async stopWorker() {
      if (workerId === null) return;
      workerId = null;
      await boss.offWork(DELIVERY_QUEUE);
    },
  };
}
