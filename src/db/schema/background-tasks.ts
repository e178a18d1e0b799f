import { bigint, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The periodic background tasks (src/jobs/background-work.ts), one row each: when it runs next
 * and how its last run went. The row is also the claim: an instance runs a due task only when
 * its one `UPDATE … WHERE next_run_at <= now()` moved `next_run_at` on, so a task runs once per
 * period across every instance.
 */
export const backgroundTasks = pgTable('background_tasks', {
  /** The task's name in the registry, e.g. `tickets.auto-close`. */
  name: text('name').primaryKey(),
  /** Not before this instant; moved one period on by the instance that claims the run. */
  nextRunAt: timestamp('next_run_at', { withTimezone: true }).notNull().defaultNow(),
  lastStartedAt: timestamp('last_started_at', { withTimezone: true }),
  lastFinishedAt: timestamp('last_finished_at', { withTimezone: true }),
  /** The instance that claimed the last run. */
  lastInstance: text('last_instance'),
  /** What the last run did (a count of items), null after a failure. */
  lastCount: integer('last_count'),
  /** The last failure's error code or class, never its message (it may quote data). */
  lastError: text('last_error'),
  /** Runs that failed in a row; 0 after a success. */
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  runs: bigint('runs', { mode: 'number' }).notNull().default(0),
});
