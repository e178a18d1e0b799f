/**
 * The durable delivery queue: one pg-boss queue (`message.send`) on the service's one job queue
 * (`jobs/job-queue.ts`, in the service's own database, PGlite or PostgreSQL). A job is inserted
 * by the statement that inserts its message and credit reservation (`jobInsert`, pg-boss's
 * `send` row written by `jobs/job-insert.ts`), so a queued message always has its job and a job
 * whose statement rolled back never exists.
 *
 * At least once: a job whose worker died (an instance killed) expires after
 * `MESSAGING_JOB_EXPIRE_S` and is taken again; a retryable provider failure is retried with
 * exponential backoff up to `MESSAGING_RETRY_LIMIT` times (pg-boss `retryLimit`, `retryDelay`,
 * `retryBackoff`). A job that runs out of attempts without an outcome (its worker died each
 * time, or the database kept failing) is moved by pg-boss to the dead-letter queue
 * (`message.send.dead`), whose worker fails the message and releases its credit: a queued
 * message always ends, never waits forever with its credit held.
 *
 * @see https://github.com/timgit/pg-boss/blob/10.4.2/docs/readme.md
 * @see docs/messaging.md "The queue"
 */
import type { SQL } from 'drizzle-orm';
import { jobInsert, queueRow, type JobInsertOptions } from '../../jobs/job-insert.ts';
import type { JobQueue } from '../../jobs/job-queue.ts';

/** The queue's name. */
export const SEND_QUEUE = 'message.send';
/** Where pg-boss moves a send job that has used up its attempts. */
const DEAD_LETTER_QUEUE = 'message.send.dead';

/** What a delivery job carries: ids only, never a phone or a message body. */
export interface SendJobData {
  messageId: string;
  portalId: number;
}

/** A job as the worker sees it. */
export interface SendJob {
  id: string;
  data: SendJobData;
  /** Attempts already made before this one (0 on the first). */
  retryCount: number;
  retryLimit: number;
}

export interface DeliveryQueueSettings {
  retryLimit: number;
  /** Seconds before the first retry; doubled each time (pg-boss backoff). */
  retryDelayS: number;
  /** Seconds a job may stay active before it is taken again. */
  expireS: number;
  /** Jobs one fetch takes. */
  batchSize: number;
  /** Seconds between fetches when the queue was empty (pg-boss minimum 0.5). */
  pollingIntervalS: number;
}

interface DeliveryQueue {
  /** Start the job queue and create this queue (idempotent). Needed before any job insert. */
  start(): Promise<void>;
  /** The queue's row (`jobs/job-insert.ts` `queueRow`), for a statement's `WITH` entry `q`. */
  queueRow(): SQL;
  /**
   * A delivery job's insert for a statement of the caller's: one job per row of `source`
   * (which exposes the queue's row as `q`), with `data` (a `SendJobData` as jsonb).
   */
  jobInsert(source: SQL, data: SQL): SQL;
  /**
   * Start taking jobs: `handle` gets each fetched batch and says, per job, whether to retry it
   * (it is failed in pg-boss, which retries it later) — every other job completes.
   */
  work(handle: (jobs: SendJob[]) => Promise<{ retry: SendJob[] }>): Promise<void>;
  /**
   * Start taking dead-lettered jobs (see the module's comment): `handle` gets their data; a
   * throw retries the batch (pg-boss's retries, then the job is kept as failed).
   */
  workDeadLetters(handle: (jobs: SendJobData[]) => Promise<void>): Promise<void>;
  /**
   * Stop taking jobs on this instance. The batches in hand finish before the job queue stops
   * (`JobQueue.stop`, which waits for them). Idempotent.
   */
  stopWorkers(): Promise<void>;
  /** Jobs waiting (created or retry), for tests and the benchmark. */
  waiting(): Promise<number>;
}

/**
 * The statements of a delivery job for a statement of the caller's (`queueRow`, `jobInsert`):
 * the row `send` would write with this queue's options (`jobs/job-insert.ts`).
 */
export function deliveryJobStatements(
  settings: Pick<DeliveryQueueSettings, 'retryLimit' | 'retryDelayS' | 'expireS'>,
): Pick<DeliveryQueue, 'queueRow' | 'jobInsert'> {
  const options: JobInsertOptions = {
    retryLimit: settings.retryLimit,
    retryDelayS: settings.retryDelayS,
    retryBackoff: true,
    expireInSeconds: settings.expireS,
    deadLetter: DEAD_LETTER_QUEUE,
  };
  return {
    queueRow: () => queueRow(SEND_QUEUE),
    jobInsert: (source, data) => jobInsert(source, data, options),
  };
}

export function createDeliveryQueue(deps: {
  jobs: JobQueue;
  settings: DeliveryQueueSettings;
}): DeliveryQueue {
  const { jobs, settings } = deps;
  const { boss } = jobs;
  let started: Promise<void> | null = null;
  const retryOptions = {
    retryLimit: settings.retryLimit,
    retryDelay: settings.retryDelayS,
    retryBackoff: true,
  };
  const sendOptions = {
    ...retryOptions,
    expireInSeconds: settings.expireS,
    // On the job too, so jobs of a queue created before the dead-letter queue existed get it.
    deadLetter: DEAD_LETTER_QUEUE,
  };

  return {
    start() {
      started ??= (async () => {
        await jobs.start();
        // Before the send queue: its jobs reference this one. Creating is idempotent.
        await boss.createQueue(DEAD_LETTER_QUEUE, {
          name: DEAD_LETTER_QUEUE,
          policy: 'standard',
          ...retryOptions,
        });
        await boss.createQueue(SEND_QUEUE, {
          name: SEND_QUEUE,
          policy: 'standard',
          ...sendOptions,
        });
      })();
      return started;
    },

    ...deliveryJobStatements(settings),

    async work(handle) {
      jobs.work<SendJobData>(
        SEND_QUEUE,
        { batchSize: settings.batchSize, pollingIntervalS: settings.pollingIntervalS },
        async (fetched) => {
          const { retry } = await handle(
            fetched.map((j) => ({
              id: j.id,
              data: j.data,
              retryCount: j.retryCount,
              retryLimit: j.retryLimit,
            })),
          );
          return { retry: retry.map((j) => j.id) };
        },
      );
    },

    async workDeadLetters(handle) {
      jobs.work<SendJobData>(
        DEAD_LETTER_QUEUE,
        { batchSize: settings.batchSize, pollingIntervalS: settings.pollingIntervalS },
        (fetched) => handle(fetched.map((j) => j.data)),
      );
    },

    async stopWorkers() {
      await Promise.all([jobs.offWork(SEND_QUEUE), jobs.offWork(DEAD_LETTER_QUEUE)]);
    },

    async waiting() {
      return boss.getQueueSize(SEND_QUEUE);
    },
  };
}
