/**
 * The one registry of background work: every task that runs on a timer rather than in answer to
 * a request (closing solved tickets, windows closing and content retention, settlement, the
 * event log's retention, expiry of sessions and replay records, the token health checks) is a
 * named task with its period here, claimed through its row in `background_tasks` so that each
 * due run happens once across every instance, and visible to operators (`npm run cli -- tasks
 * list`: last run, next run, failures). Deferred work that belongs to one change (a message's
 * delivery, a webhook's retries) stays on the durable job queue (`job-queue.ts`), which
 * schedules each item's own retries; the registry names it (`DeferredWork`) with the reason it
 * is not periodic, so that `tasks list` shows every kind of background work.
 *
 * Claiming: one `UPDATE … SET next_run_at = now() + period WHERE name = … AND next_run_at <=
 * now()`; a second instance's update of the same row waits for the first to commit, re-checks
 * the condition on the new row and matches nothing. An instance that dies mid-run loses that
 * run; the next period runs as usual (every task is idempotent: it acts on what is due).
 *
 * @see docs/architecture.md "jobs/"
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { backgroundTasks } from '../db/schema/background-tasks.ts';
import type { Logger } from '../platform/logger.ts';

/** One periodic task. */
export interface BackgroundTask {
  /** Stable name shown to operators, `<feature>.<what>`: `tickets.auto-close`. */
  name: string;
  /** What it does, in one sentence (shown by `tasks list`). */
  description: string;
  /** Its period, in milliseconds (≥ 1,000). */
  everyMs: number;
  /**
   * One run: do what is due now. Returns how many items it acted on. A rejection is recorded
   * (its `code`, or its class name) and the task runs again next period.
   */
  run(): Promise<number>;
}

/**
 * Background work that is not a periodic task: deferred per-item work with its own schedule (a
 * job per message or delivery), or work that must run on every instance. Listed so that
 * operators see all of it in one place.
 */
export interface DeferredWork {
  /** Stable name, `<feature>.<what>` or the job queue's name: `webhook.deliver`. */
  name: string;
  /** Where it runs: `job queue`, `every instance`, `job queue maintenance`. */
  runsOn: string;
  /** What it does and why it is not a periodic task, in one sentence. */
  reason: string;
}

/** A task's state, as `tasks list` shows it. */
export interface BackgroundTaskStatus {
  name: string;
  description: string;
  everyMs: number;
  nextRunAt: string | null;
  lastStartedAt: string | null;
  lastFinishedAt: string | null;
  lastInstance: string | null;
  /** Items the last successful run acted on; null after a failure or before the first run. */
  lastCount: number | null;
  lastError: string | null;
  consecutiveFailures: number;
  runs: number;
}

export interface BackgroundWork {
  /** The registered tasks, in registration order. */
  readonly tasks: readonly BackgroundTask[];
  /** The background work that is not periodic, in registration order. */
  readonly deferred: readonly DeferredWork[];
  /** Start this instance's timer (idempotent): every `tickMs` it claims and runs due tasks. */
  start(): void;
  /** Stop the timer and wait for the runs in progress. */
  stop(): Promise<void>;
  /**
   * Claim and run the due tasks once, now (the timer's tick).
   *
   * @returns the names of the tasks this call ran.
   */
  tick(): Promise<string[]>;
  /**
   * Run one task now, whether due or not, and record it (operators, tests).
   *
   * @throws Error when no task has that name; rethrows the task's own failure after recording it.
   */
  runNow(name: string): Promise<number>;
  /** Every registered task with its recorded state. */
  list(): Promise<BackgroundTaskStatus[]>;
}

const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;
const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());

/** How a failure is recorded: its stable code, else its class; never its message. */
function errorName(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  return err instanceof Error ? err.name : 'Error';
}

/**
 * @param deps.tickMs how often this instance looks for due tasks, in milliseconds (default: the
 *   shortest period, at most 5,000; a task runs at most this late).
 * @param deps.instanceId this instance's name, recorded with each run it claims.
 */
export function createBackgroundWork(deps: {
  db: Database;
  logger: Logger;
  tasks: readonly BackgroundTask[];
  deferred?: readonly DeferredWork[];
  instanceId: string;
  tickMs?: number;
}): BackgroundWork {
  const log = deps.logger.child({ component: 'background-work' });
  const byName = new Map(deps.tasks.map((t) => [t.name, t]));
  if (byName.size !== deps.tasks.length) throw new Error('two background tasks share a name');
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;
  let registered: Promise<void> | null = null;

  /** The rows of every task exist (first run due at once). */
  const register = () =>
    (registered ??= deps.db
      .insert(backgroundTasks)
      .values(deps.tasks.map((t) => ({ name: t.name })))
      .onConflictDoNothing()
      .then(() => undefined)
      .catch((err: unknown) => {
        registered = null;
        throw err;
      }));

  async function record(name: string, outcome: { count: number } | { error: string }) {
    const failed = 'error' in outcome;
    await deps.db.execute(sql`
      update ${backgroundTasks} set last_finished_at = now(),
        last_count = ${failed ? null : outcome.count},
        last_error = ${failed ? outcome.error : null},
        consecutive_failures = ${failed ? sql`consecutive_failures + 1` : 0},
        runs = runs + 1
      where name = ${name}`);
  }

  async function execute(task: BackgroundTask): Promise<number> {
    try {
      const count = await task.run();
      await record(task.name, { count });
      if (count > 0) log.info({ task: task.name, count }, 'background task ran');
      return count;
    } catch (err) {
      log.warn({ task: task.name, error: errorName(err) }, 'background task failed');
      await record(task.name, { error: errorName(err) }).catch(() => undefined);
      throw err;
    }
  }

  async function tick(): Promise<string[]> {
    await register();
    const periods = JSON.stringify(deps.tasks.map((t) => ({ name: t.name, every_ms: t.everyMs })));
    const claimed = rowsOf<{ name: string }>(
      await deps.db.execute(sql`
        update ${backgroundTasks} b
        set next_run_at = now() + make_interval(secs => p.every_ms / 1000.0),
          last_started_at = now(), last_instance = ${deps.instanceId}
        from jsonb_to_recordset(${periods}::jsonb) as p(name text, every_ms int)
        where b.name = p.name and b.next_run_at <= now()
        returning b.name`),
    ).map((r) => r.name);
    for (const name of claimed) await execute(byName.get(name)!).catch(() => undefined);
    return claimed;
  }

  return {
    tasks: deps.tasks,
    deferred: deps.deferred ?? [],
    tick,
    start() {
      if (timer || deps.tasks.length === 0) return;
      timer = setInterval(
        () => {
          if (running) return;
          running = tick()
            .catch((err: unknown) => log.warn({ error: errorName(err) }, 'background tick failed'))
            .finally(() => (running = null));
        },
        deps.tickMs ?? Math.min(5_000, ...deps.tasks.map((t) => t.everyMs)),
      );
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
    async runNow(name) {
      const task = byName.get(name);
      if (!task) throw new Error(`no background task ${name}`);
      await register();
      await deps.db.execute(sql`
        update ${backgroundTasks} set last_started_at = now(), last_instance = ${deps.instanceId}
        where name = ${name}`);
      return execute(task);
    },
    async list() {
      await register();
      const rows = await deps.db.select().from(backgroundTasks);
      const state = new Map(rows.map((r) => [r.name, r]));
      return deps.tasks.map((t) => {
        const r = state.get(t.name);
        return {
          name: t.name,
          description: t.description,
          everyMs: t.everyMs,
          nextRunAt: iso(r?.nextRunAt ?? null),
          lastStartedAt: iso(r?.lastStartedAt ?? null),
          lastFinishedAt: iso(r?.lastFinishedAt ?? null),
          lastInstance: r?.lastInstance ?? null,
          lastCount: r?.lastCount ?? null,
          lastError: r?.lastError ?? null,
          consecutiveFailures: r?.consecutiveFailures ?? 0,
          runs: r?.runs ?? 0,
        };
      });
    },
  };
}
