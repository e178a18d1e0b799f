/**
 * The provider's statuses, accepted before they are applied: a webhook's statuses of one portal
 * are stored as one job of the `message.statuses` queue (one insert on the service's job queue,
 * `jobs/job-queue.ts`), the webhook is answered, and this instance applies the job at once in
 * the background (status-events.ts, as one set). The answer's time is the insert's, whatever
 * the number of statuses (docs/decisions/0040-status-batches.md). The jobs waiting are taken
 * together (up to 200 at a time) and each portal's applied as one set, in one transaction:
 * a provider that sends one status per webhook costs a few statements per set, not per status
 * (docs/decisions/0060-status-sets.md).
 *
 * - Exactly once: the jobs of a set are deleted in the transaction that applies their
 *   statuses, so they are applied and gone together, or neither. Should the set's transaction
 *   fail, the statuses are applied one transaction each and the jobs deleted after (applying a
 *   status again changes nothing).
 * - In order: one loop per instance takes the jobs oldest first (pg-boss fetches by creation
 *   time), and a portal's statuses are applied in that order. A job that failed (the database down) is retried by pg-boss with backoff,
 *   after newer ones: statuses only move a message forward, so a late one changes nothing.
 * - Nothing lost: a job whose instance stopped or died before applying it stays in the queue
 *   (an active one until it expires) and is taken by the sweep every few seconds, on any
 *   instance.
 * - A job carries ids, statuses, times and the provider's error codes; never the recipient's
 *   phone (the statuses' `recipient_id`, which applying does not read).
 *
 * @see https://github.com/timgit/pg-boss/blob/10.4.2/docs/readme.md ("send", "fetch", "deleteJob")
 * @see docs/messaging.md "Statuses"
 */
import { JOB_SCHEMA, type JobQueue, type JobTx } from '../../jobs/job-queue.ts';
import type { Logger } from '../../platform/logger.ts';
import { warnCaught } from '../../platform/process-faults.ts';
import type { MessageStatusEvent } from '../../partner/cloud-api/provider-webhook-events.ts';

/** The queue's name. */
export const STATUS_QUEUE = 'message.statuses';
/** Retries of a job the database refused (pg-boss backoff from `RETRY_DELAY_S`: some 2 hours). */
const RETRY_LIMIT = 12;
/** Seconds before a failed job's first retry, doubled each time. */
const RETRY_DELAY_S = 2;
/** Seconds a taken job may stay unapplied before another loop takes it (an instance died). */
const EXPIRE_S = 300;
/** Jobs taken at once: one webhook each, applied together per portal. */
const JOBS_PER_TAKE = 200;
/**
 * Characters of stored statuses applied in one transaction at most (some 10,000 statuses),
 * unless one job alone holds more.
 */
const SET_CHARS = 1_000_000;

/** What applying a status reads of it. */
export type StatusToApply = Pick<
  MessageStatusEvent,
  'wamid' | 'status' | 'timestamp' | 'bizOpaqueCallbackData' | 'errors' | 'pricing'
>;

/**
 * One status as a job stores it: wamid, status, time (ms since the epoch), Portico's id (or
 * null), the errors (or null), the provider's pricing (absent or null: none; jobs stored
 * before it was kept have five items).
 */
type StoredStatus = [
  wamid: string,
  status: MessageStatusEvent['status'],
  at: number,
  callback: string | null,
  errors: { code: number; title: string }[] | null,
  pricing?: NonNullable<MessageStatusEvent['pricing']> | null,
];

/**
 * A job's data: one webhook's statuses of one portal, in the order sent. `statuses` is the JSON
 * text of their `StoredStatus` tuples: one string the database stores as it is, rather than
 * thousands of objects it would take apart and build again.
 */
interface StatusJobData {
  portalId: number;
  statuses: string;
}

/** A job as taken from the queue. */
interface Job {
  id: string;
  data: StatusJobData;
}

/**
 * The jobs taken, as the sets they are applied in: each portal's jobs in the order taken
 * (oldest first), cut where a set's stored statuses would pass `SET_CHARS` (a job larger than
 * that alone is a set of its own).
 */
function groupsOf(taken: readonly Job[]): Job[][] {
  const byPortal = new Map<number, { jobs: Job[]; chars: number }[]>();
  for (const job of taken) {
    const sets = byPortal.get(job.data.portalId) ?? [];
    byPortal.set(job.data.portalId, sets);
    const chars = job.data.statuses.length;
    let last = sets.at(-1);
    if (!last || last.chars + chars > SET_CHARS) {
      last = { jobs: [], chars: 0 };
      sets.push(last);
    }
    last.jobs.push(job);
    last.chars += chars;
  }
  return [...byPortal.values()].flatMap((sets) => sets.map((set) => set.jobs));
}

function stored(e: StatusToApply): StoredStatus {
  return [
    e.wamid,
    e.status,
    e.timestamp.getTime(),
    e.bizOpaqueCallbackData ?? null,
    e.errors.length > 0 ? e.errors : null,
    e.pricing ?? null,
  ];
}

function restored([wamid, status, at, callback, errors, pricing]: StoredStatus): StatusToApply {
  return {
    wamid,
    status,
    timestamp: new Date(at),
    ...(callback !== null && { bizOpaqueCallbackData: callback }),
    errors: errors ?? [],
    ...(pricing && { pricing }),
  };
}

/**
 * Applies one job's statuses. `done` deletes the job: called with the transaction that applied
 * them (then both commit together), or without one after a fallback applied them in several.
 */
type ApplyStatuses = (
  portalId: number,
  statuses: readonly StatusToApply[],
  done: (tx?: JobTx) => Promise<void>,
) => Promise<void>;

export interface StatusQueue {
  /** Start the job queue and create `message.statuses` (idempotent). */
  start(): Promise<void>;
  /**
   * Store one webhook's statuses of `portalId` as one job, then apply it in the background on
   * this instance.
   *
   * @throws the database's error when the job could not be stored (the webhook is then not
   *   acknowledged, and the provider sends it again).
   */
  accept(portalId: number, statuses: readonly StatusToApply[]): Promise<void>;
  /** Take the jobs left by other instances or by a stop, every `sweepMs` (idempotent). */
  startSweep(): void;
  /** Resolves when this instance has no job in hand: every job it accepted was applied or failed. */
  idle(): Promise<void>;
  /** Stop the sweep and wait for the job in hand; jobs left wait for the next sweep anywhere. */
  stop(): Promise<void>;
}

export function createStatusQueue(deps: {
  jobs: JobQueue;
  apply: ApplyStatuses;
  logger: Logger;
  /** How often the sweep looks for jobs this instance did not accept (ms). */
  sweepMs: number;
}): StatusQueue {
  const { jobs, apply } = deps;
  const log = deps.logger.child({ component: 'status-queue' });
  let started: Promise<void> | null = null;
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  const start = () =>
    (started ??= (async () => {
      await jobs.start();
      await jobs.boss.createQueue(STATUS_QUEUE, {
        name: STATUS_QUEUE,
        policy: 'standard',
        retryLimit: RETRY_LIMIT,
        retryDelay: RETRY_DELAY_S,
        retryBackoff: true,
        expireInSeconds: EXPIRE_S,
      });
    })().catch((err: unknown) => {
      // A database blink at the first use is not remembered: the next accept tries again.
      started = null;
      throw err;
    }));

  /**
   * Apply the statuses of `group` (jobs of one portal, oldest first) as one set; a job whose
   * stored text does not parse is failed alone (retried, then kept by pg-boss as failed).
   */
  async function applyGroup(group: readonly Job[]): Promise<void> {
    const portalId = group[0]!.data.portalId;
    const ids: string[] = [];
    const statuses: StatusToApply[] = [];
    for (const job of group) {
      try {
        statuses.push(...(JSON.parse(job.data.statuses) as StoredStatus[]).map(restored));
        ids.push(job.id);
      } catch (err) {
        warnCaught(log, { portalId }, err, 'a status job could not be read; retried later');
        await jobs.boss.fail(STATUS_QUEUE, job.id);
      }
    }
    if (ids.length === 0) return;
    const done = async (tx?: JobTx) => {
      await jobs.boss.deleteJob(
        STATUS_QUEUE,
        ids,
        tx === undefined ? {} : { db: jobs.inTransaction(tx) },
      );
    };
    try {
      await apply(portalId, statuses, done);
    } catch (err) {
      warnCaught(
        log,
        { portalId, jobs: ids.length },
        err,
        'applying a status batch failed; retried later',
      );
      await jobs.boss.fail(STATUS_QUEUE, ids);
    }
  }

  /**
   * The jobs taken, oldest first: pg-boss returns them in no set order, and its job times are
   * read in milliseconds, so their order is read from the table (to the microsecond).
   */
  async function inOrder(taken: Job[]): Promise<Job[]> {
    if (taken.length < 2) return taken;
    const { rows } = await jobs.boss
      .getDb()
      .executeSql(
        `select id from ${JOB_SCHEMA}.job where name = $1 and id = any($2::uuid[]) order by created_on, id`,
        [STATUS_QUEUE, taken.map((j) => j.id)],
      );
    const rank = new Map((rows as { id: string }[]).map((r, i) => [r.id, i]));
    return [...taken].sort((x, y) => (rank.get(x.id) ?? 0) - (rank.get(y.id) ?? 0));
  }

  /** Apply the jobs waiting (up to `JOBS_PER_TAKE`); false when the queue had none. */
  async function takeSome(): Promise<boolean> {
    const taken = await jobs.boss.fetch<StatusJobData>(STATUS_QUEUE, {
      batchSize: JOBS_PER_TAKE,
    });
    if (taken.length === 0) return false;
    for (const group of groupsOf(await inOrder(taken))) await applyGroup(group);
    return true;
  }

  async function drain(): Promise<void> {
    // Begin after the current turn: the webhook that was just accepted is answered first (its
    // reply is written in this turn's callbacks), then the work starts.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (!stopped && (await takeSome()));
    } catch (err) {
      // The queue could not be read or a failure not recorded: the sweep tries again.
      warnCaught(log, {}, err, 'the status queue could not be read');
    }
  }

  /** Run the loop, or have the running one look again once it is done. */
  function kick(): void {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    // `drain` catches its own faults; the catch here keeps that true for whatever escapes it,
    // so no rejection is ever left unhandled when the database blinks.
    running = drain()
      .catch((err: unknown) => warnCaught(log, {}, err, 'the status queue stopped draining'))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          kick();
        }
      });
  }

  return {
    start,

    async accept(portalId, statuses) {
      if (statuses.length === 0) return;
      await start();
      const data: StatusJobData = { portalId, statuses: JSON.stringify(statuses.map(stored)) };
      const id = await jobs.boss.send(STATUS_QUEUE, data);
      if (id === null) throw new Error(`the queue ${STATUS_QUEUE} did not take the job`);
      kick();
    },

    startSweep() {
      if (timer || stopped) return;
      timer = setInterval(kick, deps.sweepMs);
      timer.unref();
      kick();
    },

    async idle() {
      while (running) await running;
    },

    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      while (running) await running;
    },
  };
}
