/**
 * The service's one durable job queue: one pg-boss instance over the service's own database
 * (PGlite or PostgreSQL, through `job-queue-db.ts`), one pg-boss schema, one maintenance. The
 * features create their own queues on it — messaging's `message.statuses`, the webhooks'
 * `webhook.deliver` — and send their jobs through the transaction of the change they are about
 * (`inTransaction`), so a job exists exactly when that change committed.
 *
 * `services.ts` creates it once and owns its life cycle: started before any feature's queue,
 * stopped after every feature's workers and before storage closes.
 *
 * @see https://github.com/timgit/pg-boss/blob/10.4.2/docs/readme.md
 * @see docs/architecture.md "jobs/"
 */
import PgBoss from 'pg-boss';
import type { Database, Storage } from '../db/client.ts';
import type { Logger } from '../platform/logger.ts';
import { storageJobDb, transactionJobDb } from './job-queue-db.ts';
import {
  startJobWorker,
  type JobHandler,
  type JobWorker,
  type JobWorkerOptions,
} from './job-worker.ts';

/** pg-boss's schema (its default), for the features' own reads of its `job` table. */
export const JOB_SCHEMA = 'pgboss';

/** A Drizzle transaction a job can be sent through. */
export type JobTx = Parameters<Parameters<Database['transaction']>[0]>[0];

export interface JobQueue {
  /** The pg-boss instance the features create their queues on and send to. Use after `start`. */
  readonly boss: PgBoss;
  /** Start pg-boss: install or upgrade its schema, begin maintenance. Idempotent. */
  start(): Promise<void>;
  /**
   * pg-boss's per-call `db` bound to `tx`: a job sent with it commits or rolls back with the
   * transaction.
   */
  inTransaction(tx: JobTx): PgBoss.Db;
  /**
   * Take jobs of the queue `name` (created by its feature) with `handler`; every round trip is
   * awaited and a database failure never escapes (`job-worker.ts`). Use instead of pg-boss's
   * `work`, which leaves its `complete`/`fail` un-awaited. One worker per queue and instance.
   */
  work<T>(name: string, options: JobWorkerOptions, handler: JobHandler<T>): void;
  /** Stop the queue's worker: resolves when its batch in hand is done. Idempotent. */
  offWork(name: string): Promise<void>;
  /**
   * Stop pg-boss: stop the workers still taking jobs (each finishes its batch), wait (up to
   * 30 s) for pg-boss's own handlers, then stop polling and maintenance. After every feature's workers stopped, before storage closes. Idempotent; a
   * queue never started has nothing to stop.
   */
  stop(): Promise<void>;
}

/**
 * @param deps.maintenanceIntervalS seconds between pg-boss's maintenance runs (which expire
 *   the jobs of workers that died, so they are taken again).
 */
export function createJobQueue(deps: {
  storage: Storage;
  logger: Logger;
  maintenanceIntervalS: number;
}): JobQueue {
  const log = deps.logger.child({ component: 'job-queue' });
  const boss = new PgBoss({
    db: storageJobDb(deps.storage),
    schema: JOB_SCHEMA,
    schedule: false,
    supervise: true,
    maintenanceIntervalSeconds: deps.maintenanceIntervalS,
    monitorStateIntervalSeconds: 60,
  });
  // An 'error' event without a listener would end the process.
  boss.on('error', (err: Error) => log.error({ error: err.message }, 'job queue error'));
  let started: Promise<void> | null = null;
  let stopped = false;
  const workers = new Map<string, JobWorker>();
  const offWork = async (name: string) => {
    const worker = workers.get(name);
    workers.delete(name);
    await worker?.stop();
  };
  return {
    boss,
    start() {
      started ??= boss.start().then(() => undefined);
      return started;
    },
    inTransaction: (tx) => transactionJobDb(tx),
    work(name, options, handler) {
      if (workers.has(name)) throw new Error(`the queue ${name} already has a worker`);
      workers.set(name, startJobWorker({ boss, name, options, handler, logger: deps.logger }));
    },
    offWork,
    async stop() {
      await Promise.all([...workers.keys()].map(offWork));
      if (stopped || !started) return;
      stopped = true;
      await started.catch(() => undefined);
      await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
    },
  };
}
