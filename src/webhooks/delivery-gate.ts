/**
 * Which attempts may run now, so that one tenant's endpoint never delays another tenant's
 * webhooks: an in-memory gate of this instance, asked by each attempt before it sends.
 *
 * - **Lanes**: at most `perEndpoint` attempts in flight to one endpoint and `perPortal` to one
 *   portal's endpoints. A further attempt waits for its turn (without holding one of the
 *   worker's slots) for at most `maxWaitMs`, `waitingPerPortal` of them per portal; beyond that it
 *   is postponed by `busyRetryMs`.
 * - **Circuit breaker per endpoint**: an attempt that ran into its timeout opens the endpoint's
 *   circuit for `openMs` (doubling with each further timed-out probe, up to `maxOpenMs`). While
 *   it is open, the endpoint's attempts are postponed to when it closes, without sending; then
 *   one attempt at a time probes it, and any answer (or a fast failure) closes it again.
 *
 * The state is this instance's: several instances each learn a hanging endpoint by one
 * timed-out attempt of their own.
 *
 * @see docs/decisions/0036-webhook-tenant-isolation.md
 * @see docs/webhooks.md "Timeouts, fairness and the circuit breaker"
 */
import type { Logger } from '../platform/logger.ts';

/** The gate's limits; times in milliseconds. */
export interface GateSettings {
  perEndpoint: number;
  perPortal: number;
  waitingPerPortal: number;
  maxWaitMs: number;
  busyRetryMs: number;
  openMs: number;
  maxOpenMs: number;
}

export const GATE_SETTINGS: GateSettings = {
  perEndpoint: 4,
  perPortal: 8,
  waitingPerPortal: 60,
  maxWaitMs: 10_000,
  busyRetryMs: 2_000,
  openMs: 30_000,
  maxOpenMs: 10 * 60_000,
};

/** How an attempt ended, as far as the breaker cares. */
export type AttemptResult = 'timeout' | 'other' | 'aborted';

/** The gate's answer: send now (then `release`), postpone to `until`, or give up (stopping). */
export type Admission =
  | { kind: 'send'; release(result: AttemptResult): void }
  | { kind: 'postpone'; until: Date; reason: 'circuit open' | 'endpoint busy' }
  | { kind: 'aborted' };

interface Circuit {
  /** Epoch ms until which no attempt is sent. */
  openUntil: number;
  /** The current open period, ms. */
  openMs: number;
}

interface Waiter {
  endpointId: string;
  /** Let it send (set by the gate, which counts it in). */
  admit(): void;
  postpone(until: number, reason: 'circuit open' | 'endpoint busy'): void;
  settle(admission: Admission): void;
}

/**
 * A waiting attempt: it ends when admitted or postponed by the gate, after `maxWaitMs`
 * (postponed: `endpoint busy`) or when `signal` aborts; `leave` takes it out of its line.
 */
function waitInLine(
  settings: GateSettings,
  now: () => number,
  endpointId: string,
  signal: AbortSignal,
  resolve: (admission: Admission) => void,
  leave: () => void,
): Waiter {
  const settle = (admission: Admission) => {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    resolve(admission);
  };
  const onAbort = () => {
    leave();
    settle({ kind: 'aborted' });
  };
  const timer = setTimeout(() => {
    leave();
    settle({
      kind: 'postpone',
      until: new Date(now() + settings.busyRetryMs),
      reason: 'endpoint busy',
    });
  }, settings.maxWaitMs);
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    endpointId,
    admit: () => {},
    postpone: (until, reason) => settle({ kind: 'postpone', until: new Date(until), reason }),
    settle,
  };
}

/** A circuit's change, for the log (ids and times only). */
export interface CircuitChange {
  endpointId: string;
  portalId: number;
  state: 'open' | 'closed';
  /** When open: how long, ms. */
  openMs?: number;
}

/**
 * @param onCircuit told when an endpoint's circuit opens or closes (the log line operators see).
 */
export function createDeliveryGate(
  settings: GateSettings = GATE_SETTINGS,
  onCircuit: (change: CircuitChange) => void = () => {},
  now: () => number = Date.now,
) {
  const perEndpoint = new Map<string, number>();
  const perPortal = new Map<number, number>();
  const waiting = new Map<number, Waiter[]>();
  const circuits = new Map<string, Circuit>();

  const count = <K>(map: Map<K, number>, key: K, by: number) => {
    const n = (map.get(key) ?? 0) + by;
    if (n > 0) map.set(key, n);
    else map.delete(key);
  };

  /** Whether an attempt to `endpointId` may be sent now; else when to postpone it to. */
  function verdict(
    portalId: number,
    endpointId: string,
  ): { send: true } | { send: false; until?: number } {
    const circuit = circuits.get(endpointId);
    const running = perEndpoint.get(endpointId) ?? 0;
    if (circuit) {
      if (circuit.openUntil > now()) return { send: false, until: circuit.openUntil };
      // Half-open: one probe at a time; the others come back after another open period.
      if (running > 0) return { send: false, until: now() + circuit.openMs };
    }
    if (running >= settings.perEndpoint) return { send: false };
    if ((perPortal.get(portalId) ?? 0) >= settings.perPortal) return { send: false };
    return { send: true };
  }

  function enter(portalId: number, endpointId: string): Admission {
    count(perEndpoint, endpointId, 1);
    count(perPortal, portalId, 1);
    let released = false;
    return {
      kind: 'send',
      release(result) {
        if (released) return;
        released = true;
        count(perEndpoint, endpointId, -1);
        count(perPortal, portalId, -1);
        settle(portalId, endpointId, result);
        wakeWaiters(portalId);
      },
    };
  }

  function settle(portalId: number, endpointId: string, result: AttemptResult): void {
    if (result === 'aborted') return;
    const circuit = circuits.get(endpointId);
    if (result === 'timeout') {
      const openMs = circuit ? Math.min(circuit.openMs * 2, settings.maxOpenMs) : settings.openMs;
      circuits.set(endpointId, { openUntil: now() + openMs, openMs });
      onCircuit({ endpointId, portalId, state: 'open', openMs });
    } else if (circuit) {
      circuits.delete(endpointId);
      onCircuit({ endpointId, portalId, state: 'closed' });
    }
  }

  /** Let in the portal's waiting attempts that may now run; postpone those a circuit stops. */
  function wakeWaiters(portalId: number): void {
    const queue = waiting.get(portalId);
    if (!queue) return;
    for (const waiter of [...queue]) {
      const v = verdict(portalId, waiter.endpointId);
      if (v.send) {
        queue.splice(queue.indexOf(waiter), 1);
        waiter.admit();
      } else if (v.until !== undefined) {
        queue.splice(queue.indexOf(waiter), 1);
        waiter.postpone(v.until, 'circuit open');
      }
    }
    if (queue.length === 0) waiting.delete(portalId);
  }

  return {
    /**
     * Ask to send an attempt to `endpointId` of `portalId`: at once when its lanes have room
     * and its circuit is closed; after waiting for its turn (at most `maxWaitMs`); or not now.
     *
     * @param signal aborted when the worker stops: a waiting attempt gives up at once.
     */
    acquire(portalId: number, endpointId: string, signal: AbortSignal): Promise<Admission> {
      if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
      const v = verdict(portalId, endpointId);
      if (v.send) return Promise.resolve(enter(portalId, endpointId));
      if (v.until !== undefined) {
        return Promise.resolve({
          kind: 'postpone',
          until: new Date(v.until),
          reason: 'circuit open',
        });
      }
      const queue = waiting.get(portalId) ?? [];
      if (queue.length >= settings.waitingPerPortal) {
        return Promise.resolve({
          kind: 'postpone',
          until: new Date(now() + settings.busyRetryMs),
          reason: 'endpoint busy',
        });
      }
      waiting.set(portalId, queue);
      return new Promise<Admission>((resolve) => {
        const waiter = waitInLine(settings, now, endpointId, signal, resolve, () => {
          const i = queue.indexOf(waiter);
          if (i >= 0) queue.splice(i, 1);
          if (queue.length === 0 && waiting.get(portalId) === queue) waiting.delete(portalId);
        });
        waiter.admit = () => waiter.settle(enter(portalId, endpointId));
        queue.push(waiter);
      });
    },
  };
}

export type DeliveryGate = ReturnType<typeof createDeliveryGate>;

/** The gate, with each circuit's opening and closing logged for operators (ids and times only). */
export function createLoggedGate(log: Logger, settings: GateSettings = GATE_SETTINGS) {
  return createDeliveryGate(settings, (change) =>
    change.state === 'open'
      ? log.warn(change, 'webhook endpoint not answering: circuit open, its deliveries wait')
      : log.info(change, 'webhook endpoint answering again: circuit closed'),
  );
}
