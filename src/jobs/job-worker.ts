/**
 * A worker on one pg-boss queue that awaits every round trip it makes. pg-boss 10's own
 * `work()` calls `complete()` and `fail()` without awaiting them, so a database failure at that
 * moment (a pool timeout, a connection the server ended, a full disk) is an unhandled rejection;
 * pg-boss 11 and later need Node 22. This loop uses pg-boss's public `fetch`, `complete` and
 * `fail` instead, each awaited and its failure handled:
 *
 * - a fetch that fails is a dependency fault (one summary line per interval), and the worker
 *   waits one polling interval before trying again;
 * - the batch's outcome (complete the jobs the handler finished, fail the ones it hands back for
 *   a retry, or all of them when it throws) is written in two statements; when that fails, it
 *   is tried again every polling interval until it is written or the worker stops. A job whose
 *   outcome was never written stays `active` until it expires (its queue's `expireInSeconds`)
 *   and is taken again, which the handlers tolerate (a message holding its wamid is not sent
 *   again).
 *
 * @see https://github.com/timgit/pg-boss/blob/10.4.2/docs/readme.md ("fetch", "complete", "fail")
 * @see docs/decisions/0035-process-fault-policy.md
 */
import { setTimeout as delay } from 'node:timers/promises';
import type PgBoss from 'pg-boss';
import { databaseErrorCode } from '../platform/database-errors.ts';
import { dependencyFaults } from '../platform/fault-summary.ts';
import type { Logger } from '../platform/logger.ts';

/** How a worker takes jobs. */
export interface JobWorkerOptions {
  /** Jobs one fetch takes. */
  batchSize: number;
  /** Seconds between fetches when the queue was empty, or after a failure. */
  pollingIntervalS: number;
}

/**
 * Handles one fetched batch. Returns the ids of the jobs to fail (pg-boss retries them within
 * their retry limit); every other job completes. A throw fails the whole batch.
 */
export type JobHandler<T> = (
  jobs: PgBoss.JobWithMetadata<T>[],
) => Promise<{ retry?: readonly string[] } | void>;

export interface JobWorker {
  /** Stop fetching; resolves when the batch in hand has finished and its outcome is written. */
  stop(): Promise<void>;
}

/** Start a worker on `name` (see the module's comment). */
export function startJobWorker<T>(deps: {
  boss: PgBoss;
  name: string;
  options: JobWorkerOptions;
  handler: JobHandler<T>;
  logger: Logger;
}): JobWorker {
  const { boss, name, options, handler } = deps;
  const log = deps.logger.child({ component: 'job-worker', queue: name });
  const controller = new AbortController();
  const intervalMs = Math.max(500, options.pollingIntervalS * 1000);

  /** Wait what is left of one polling interval begun at `since` (ms), as pg-boss's loop does. */
  const pause = async (since = Date.now()) => {
    const left = intervalMs - (Date.now() - since);
    if (left > 100) await delay(left, undefined, { signal: controller.signal }).catch(() => {});
  };

  /** Write the batch's outcome, retrying while the database fails and the worker runs. */
  async function settle(completed: string[], failed: string[]): Promise<void> {
    while (completed.length > 0 || failed.length > 0) {
      try {
        if (completed.length > 0) {
          await boss.complete(name, completed);
          completed = [];
        }
        if (failed.length > 0) {
          await boss.fail(name, failed);
          failed = [];
        }
      } catch (err) {
        dependencyFaults.note('job-queue', databaseErrorCode(err), log);
        // Stopping: the jobs expire and are taken again (see the module's comment).
        if (controller.signal.aborted) return;
        await pause();
      }
    }
  }

  async function runBatch(jobs: PgBoss.JobWithMetadata<T>[]): Promise<void> {
    let retry: ReadonlySet<string>;
    try {
      retry = new Set((await handler(jobs))?.retry ?? []);
    } catch (err) {
      log.error(
        { jobs: jobs.length, error: err instanceof Error ? err.name : typeof err },
        'a job batch failed; its jobs will be retried',
      );
      retry = new Set(jobs.map((j) => j.id));
    }
    await settle(
      jobs.filter((j) => !retry.has(j.id)).map((j) => j.id),
      jobs.filter((j) => retry.has(j.id)).map((j) => j.id),
    );
  }

  async function loop(): Promise<void> {
    while (!controller.signal.aborted) {
      const started = Date.now();
      let jobs: PgBoss.JobWithMetadata<T>[];
      try {
        jobs = await boss.fetch<T>(name, { batchSize: options.batchSize, includeMetadata: true });
      } catch (err) {
        dependencyFaults.note('job-queue', databaseErrorCode(err), log);
        await pause(started);
        continue;
      }
      if (jobs.length === 0) {
        await pause(started);
        continue;
      }
      await runBatch(jobs);
    }
  }

  // Each step of the loop catches its own faults; should anything else escape, it is logged
  // here and the worker ends, rather than rejecting with nobody awaiting until stop().
  const running = loop().catch((err: unknown) => log.error({ err }, 'the job worker stopped'));
  return {
    async stop() {
      controller.abort();
      await running;
    },
  };
}
