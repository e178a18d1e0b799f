/**
 * Dependency faults (the database unreachable, a full disk, Redis down) said once per interval,
 * not once per refused request: during an outage every request gets a 503, and a stack per
 * request would flood the log and cost more than the refusal itself. The first fault of an
 * interval is logged at once (`warn`), so the outage's start is visible; the rest of the interval
 * is counted and said in one summary line when it ends, by fault and error code. No error
 * message is logged: a driver's message may quote a statement's parameters.
 *
 * Process-wide: every instance of a process shares one summary (one process, one log).
 *
 * @see docs/decisions/0035-process-fault-policy.md
 */

/** What a summary line is written through (pino's and Fastify's loggers fit). */
export interface FaultLog {
  warn(fields: object, message: string): void;
}

/** What failed: the database, the embedded database's disk, Redis, a job queue's round trip. */
export type FaultKind = 'storage' | 'redis' | 'job-queue';

/** Counts of one interval, per `kind` and then per error code (`unknown` without one). */
type Counts = Map<FaultKind, Map<string, number>>;

export interface FaultSummary {
  /** Count one fault of `kind` with error `code` (a SQLSTATE, an errno), logging as above. */
  note(kind: FaultKind, code: string | undefined, log: FaultLog): void;
  /** Write the pending summary now (tests; shutdown) and start a new interval. */
  flush(): void;
}

/**
 * @param intervalMs length of one interval, in ms (10 s by default).
 */
export function createFaultSummary(intervalMs = 10_000): FaultSummary {
  let counts: Counts = new Map();
  let log: FaultLog | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** Kinds whose first fault of this interval was said. */
  let said = new Set<FaultKind>();

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const pending = counts;
    counts = new Map();
    said = new Set();
    if (!log || pending.size === 0) return;
    for (const [kind, codes] of pending) {
      const total = [...codes.values()].reduce((sum, n) => sum + n, 0);
      log.warn(
        { fault: kind, count: total, codes: Object.fromEntries(codes), intervalMs },
        `${kind} unavailable: ${total} more failure(s) in the last ${Math.round(intervalMs / 1000)} s`,
      );
    }
  }

  return {
    note(kind, code, to) {
      log = to;
      if (!timer) {
        timer = setTimeout(flush, intervalMs);
        timer.unref();
      }
      if (!said.has(kind)) {
        // The first of an interval: said now; the rest counted until the interval ends.
        said.add(kind);
        to.warn({ fault: kind, code: code ?? 'unknown' }, `${kind} unavailable`);
        return;
      }
      const codes = counts.get(kind) ?? new Map<string, number>();
      codes.set(code ?? 'unknown', (codes.get(code ?? 'unknown') ?? 0) + 1);
      counts.set(kind, codes);
    },
    flush,
  };
}

/** The process's one summary. */
export const dependencyFaults: FaultSummary = createFaultSummary();
