/**
 * Admission control in front of a request's database work: at most `concurrency` requests run
 * at once; up to `queue` more wait, first come first served, each for at most `waitMs`; any
 * other is refused at once. A refused request has done nothing yet, so the client may simply
 * retry it (the external API answers 503 `unavailable` with `Retry-After`).
 *
 * Why not the pool's own queue: a request reaches the pool only after its authentication, body
 * parsing and validation, and a send takes a connection several times; under a burst of
 * thousands, the ones that wait then time out (`DATABASE_CONNECT_TIMEOUT_MS`) or are refused
 * half-way, each after seconds of CPU spent by the others. Refusing at the door costs a few
 * microseconds and keeps the admitted requests' latency that of a loaded, not a drowning, server.
 *
 * Hand-written rather than p-limit or p-queue: neither bounds its waiting line nor gives up a
 * wait after a deadline, which are the two things this is for.
 *
 * @see docs/decisions/0061-back-pressure.md
 */

/** The bounds of an {@link Admission}. */
export interface AdmissionLimits {
  /** Requests running at once (≥ 1). */
  concurrency: number;
  /** Requests that may wait for a slot at once (≥ 0); one more is refused at once. */
  queue: number;
  /** Longest wait for a slot, in ms; then the waiting request is refused. */
  waitMs: number;
}

/** Why a request was not admitted. */
export type AdmissionRefusal = 'queue_full' | 'wait_timeout';

export interface Admission {
  /**
   * Ask for a slot. Exactly one of the callbacks is called, once: `admitted` with the slot's
   * `release` (call it when the request's work is over; later calls do nothing), at once when
   * a slot is free or when one frees within `waitMs`; `refused` otherwise (at once when
   * `queue` requests already wait).
   */
  enter(admitted: (release: () => void) => void, refused: (why: AdmissionRefusal) => void): void;
  /** Requests holding a slot now. */
  readonly active: number;
  /** Requests waiting for a slot now. */
  readonly waiting: number;
}

interface Waiter {
  admitted: (release: () => void) => void;
  timer: NodeJS.Timeout;
  /** Its place in the line, removed on timeout (the line skips it). */
  gone: boolean;
}

/**
 * @throws RangeError when `concurrency` < 1, `queue` < 0 or `waitMs` < 0.
 */
export function createAdmission(limits: AdmissionLimits): Admission {
  const { concurrency, queue, waitMs } = limits;
  if (!(concurrency >= 1) || !(queue >= 0) || !(waitMs >= 0))
    throw new RangeError('admission: concurrency ≥ 1, queue ≥ 0 and waitMs ≥ 0');
  let active = 0;
  let waiting = 0;
  // A first-in first-out line: an array read from `head`, compacted when half is consumed.
  // A slot already read is cleared (undefined) so the waiter it held can be collected.
  let line: (Waiter | undefined)[] = [];
  let head = 0;

  const slot = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      handOn();
    };
  };

  /** A slot freed: give it to the longest waiter still waiting, or free it. */
  const handOn = (): void => {
    while (head < line.length) {
      const next = line[head];
      line[head++] = undefined;
      if (head > 1024 && head * 2 > line.length) {
        line = line.slice(head);
        head = 0;
      }
      if (!next || next.gone) continue;
      next.gone = true;
      waiting--;
      clearTimeout(next.timer);
      next.admitted(slot());
      return;
    }
    active--;
  };

  return {
    enter(admitted, refused) {
      if (active < concurrency) {
        active++;
        admitted(slot());
        return;
      }
      if (waiting >= queue) {
        refused('queue_full');
        return;
      }
      const waiter: Waiter = {
        admitted,
        gone: false,
        timer: setTimeout(() => {
          waiter.gone = true;
          waiting--;
          // Slots held long: the line would keep the ones that gave up; keep it bounded.
          if (line.length - head > 2 * queue + 16) {
            line = line.slice(head).filter((w) => w !== undefined && !w.gone);
            head = 0;
          }
          refused('wait_timeout');
        }, waitMs),
      };
      waiting++;
      line.push(waiter);
    },
    get active() {
      return active;
    },
    get waiting() {
      return waiting;
    },
  };
}
