/**
 * A job as part of another statement: the `INSERT … SELECT` that pg-boss's `send(queue, data,
 * options)` runs, written so that a feature can insert a job and the rows it is about in one
 * statement (a data-modifying `WITH`), one round trip instead of one per row. The job row is the
 * one `send` writes for the same options (`test/jobs/job-insert.test.ts` compares them column by
 * column on both backends, so a pg-boss upgrade that changes its row fails there).
 *
 * A job inserted this way exists exactly when its statement commits, like one sent with
 * `JobQueue.inTransaction`. Its queue must exist (created by the feature's `start`): the insert
 * reads the queue's row, and the statement built around it should make its own rows depend on
 * that row (`queueRow`), so that a missing queue inserts nothing rather than rows without a job.
 *
 * @see https://github.com/timgit/pg-boss/blob/10.4.2/docs/readme.md ("send")
 * @see docs/decisions/0026-credit-escrow.md
 */
import { sql, type SQL } from 'drizzle-orm';

/** pg-boss's schema (its default, which `job-queue.ts` keeps). */
export const JOB_SCHEMA = 'pgboss';

/** The options of `send` this insert supports: those the features' queues set. */
export interface JobInsertOptions {
  retryLimit: number;
  /** Seconds; with `retryBackoff` at least 1 (pg-boss's rule). */
  retryDelayS: number;
  retryBackoff: boolean;
  expireInSeconds: number;
  deadLetter: string | null;
}

/**
 * `SELECT name, dead_letter, retention_minutes, policy FROM pgboss.queue WHERE name = queue`:
 * the queue's row, for a `WITH` entry named by the caller.
 */
export function queueRow(queue: string): SQL {
  return sql`select name, dead_letter, retention_minutes, policy
    from ${sql.identifier(JOB_SCHEMA)}.queue where name = ${queue}`;
}

/**
 * `INSERT INTO pgboss.job … SELECT … FROM <source>`: one job per row of `source`, which must
 * expose the queue's row as `q` (see `queueRow`), with `data` a jsonb expression over `source`.
 *
 * @param source a FROM clause, e.g. sql`message, queue q`.
 */
export function jobInsert(source: SQL, data: SQL, options: JobInsertOptions): SQL {
  const delay = options.retryBackoff ? Math.max(options.retryDelayS, 1) : options.retryDelayS;
  return sql`insert into ${sql.identifier(JOB_SCHEMA)}.job (id, name, data, priority,
      start_after, dead_letter, expire_in, keep_until, retry_limit, retry_delay, retry_backoff,
      policy)
    select gen_random_uuid(), q.name, ${data}, 0, now(),
      coalesce(${options.deadLetter}::text, q.dead_letter),
      ${options.expireInSeconds}::numeric * interval '1s',
      now() + cast(coalesce((q.retention_minutes * 60)::text, '14 days') as interval),
      ${options.retryLimit}::int, ${delay}::int, ${options.retryBackoff}::bool, q.policy
    from ${source}`;
}
