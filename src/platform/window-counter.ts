/**
 * Fixed-window hit counters shared across instances through Redis, counted locally between
 * synchronisations so that a hit costs a map lookup, not a Redis round trip.
 *
 * A key's window begins at its first hit and lasts `windowMs`; its shared count lives in Redis
 * under `{namespace}{key}`, expiring with the window, and each synchronisation tells an
 * instance when the shared window ends (a window another instance began).
 *
 * How a hit is counted: each instance keeps, per key, the shared total it last read from Redis
 * (`shared`) and the hits it has counted since (`pending`). A hit adds one to `pending` and is
 * decided on `shared + pending`. When the key's last synchronisation is older than `syncMs` (or
 * the key is new to this instance, or its window changed), the hit first waits for one: the
 * pending hits are added to Redis (one atomic script: `SET … PX NX` to begin the window, `INCRBY`,
 * `PTTL`) and `shared` becomes the total it answers. Pending hits of keys that receive no further hit are pushed by a timer every
 * `syncMs`. So a decision never rests on a shared count older than `syncMs`, and each key costs
 * at most one awaited round trip per `syncMs` per instance, however many hits it receives.
 *
 * The bound on overshoot: an instance admits hits the others have not yet seen for at most one
 * `syncMs`, so a window admits at most `limit + Σ over instances of the key's hits that instance
 * receives in one syncMs` (≤ instances × syncMs × per-instance rate), see
 * docs/decisions/0004-rate-limits.md. One instance alone (or without Redis) is exact.
 *
 * Redis failures fail open, as the limiter always did: the hit is decided on the local count
 * (so one instance's own limit still holds) and the pending hits are pushed at the next success.
 *
 * @see https://redis.io/docs/latest/commands/incrby/
 */
import type { Redis } from 'ioredis';

export interface WindowCounterOptions {
  /** Hits allowed per key per window. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs: number;
  /** Longest a decision may rest on an unsynchronised shared count, in milliseconds. */
  syncMs: number;
  /** Shared counts; absent: this process's counts only (exact for one instance). */
  redis?: Redis | undefined;
  /** Redis key prefix of this counter family, e.g. `portico:rate-limit:token:`. */
  namespace: string;
  /** Most keys remembered at once (the earliest first hit dropped first, its pending hits pushed). */
  maxKeys: number;
  /** Clock, in Unix milliseconds (tests move it). */
  now?: () => number;
}

/** One hit's outcome. */
export interface HitResult {
  /** Whether the hit is within the limit. */
  allowed: boolean;
  /** Hits left in the window after this one (0 when refused). */
  remaining: number;
  /** Whole seconds until the window ends, at least 1. */
  resetSeconds: number;
}

export interface WindowCounter {
  readonly limit: number;
  /** Count one hit against `key` and decide it. Never rejects (Redis failures fail open). */
  hit(key: string): HitResult | Promise<HitResult>;
  /** Push every pending hit to Redis now (shutdown, tests). */
  flush(): Promise<void>;
  /** Stop the timer; pending hits are pushed first. */
  close(): Promise<void>;
}

interface Entry {
  /** When the window ends (Unix ms): its first hit + windowMs, or as Redis last said. */
  endsAt: number;
  /** The window's total in Redis as last read (this instance's pushed hits included). */
  shared: number;
  /** Hits counted here and not yet pushed. */
  pending: number;
  /** When `shared` was last read (Unix ms); 0 before the first read. */
  syncedAt: number;
  /** The synchronisation in flight, if any (hits wait for it rather than start another). */
  syncing: Promise<void> | null;
}

/**
 * One synchronisation, atomic in Redis (a script runs alone, its clock frozen): start the
 * window if there is none (a key of 0 expiring `windowMs` later), add the pending hits, and
 * answer the total and the milliseconds left. A separate `INCRBY` could recreate a key that
 * expired a moment before, without any expiry: a count that would never end.
 */
const SYNC_SCRIPT = `
redis.call('SET', KEYS[1], 0, 'PX', ARGV[2], 'NX')
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
return { total, redis.call('PTTL', KEYS[1]) }
`;

export function createWindowCounter(options: WindowCounterOptions): WindowCounter {
  const { limit, windowMs, syncMs, redis, namespace, maxKeys } = options;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let timer: NodeJS.Timeout | null = null;

  const decide = (entry: Entry, at: number): HitResult => {
    const count = entry.shared + entry.pending;
    const resetSeconds = Math.max(1, Math.ceil((entry.endsAt - at) / 1000));
    return count <= limit
      ? { allowed: true, remaining: limit - count, resetSeconds }
      : { allowed: false, remaining: 0, resetSeconds };
  };

  /** Push `entry`'s pending hits and read the shared total and window end (one round trip). */
  const sync = (key: string, entry: Entry): Promise<void> => {
    if (entry.syncing) return entry.syncing;
    const pushed = entry.pending;
    entry.syncing = redis!
      .eval(SYNC_SCRIPT, 1, `${namespace}${key}`, pushed, windowMs)
      .then((reply) => {
        const [total, ttlMs] = Array.isArray(reply) ? (reply as unknown[]) : [];
        if (typeof total !== 'number' || typeof ttlMs !== 'number') {
          throw new Error('unexpected reply to the rate-limit script');
        }
        entry.pending -= pushed;
        entry.shared = total;
        if (ttlMs > 0) entry.endsAt = now() + ttlMs;
      })
      .catch(() => {
        // Fail open: keep deciding on the local count; the pending hits go at the next sync.
        // (ioredis reports the connection's errors on its `error` event, logged by redis.ts.)
      })
      .finally(() => {
        entry.syncedAt = now();
        entry.syncing = null;
      });
    return entry.syncing;
  };

  const flush = async (): Promise<void> => {
    const at = now();
    const waits: Promise<void>[] = [];
    for (const [key, entry] of entries) {
      // Hits of a window that has ended belong to no window any more: dropped with it.
      if (at >= entry.endsAt) entries.delete(key);
      else if (entry.pending > 0) waits.push(sync(key, entry));
    }
    await Promise.all(waits);
  };

  const startTimer = () => {
    if (timer || !redis) return;
    timer = setInterval(() => {
      void flush().then(() => {
        if (timer && entries.size === 0) {
          clearInterval(timer);
          timer = null;
        }
      });
    }, syncMs);
    timer.unref();
  };

  /** The key's entry for the window in progress (a new one when the last has ended). */
  const entryFor = (key: string, at: number): Entry => {
    let entry = entries.get(key);
    if (entry && at < entry.endsAt) return entry;
    entries.delete(key);
    entry = { endsAt: at + windowMs, shared: 0, pending: 0, syncedAt: 0, syncing: null };
    // Map order is the order of windows begun: the oldest goes first when full (a key dropped
    // while hot only costs one more synchronisation; its pending hits are pushed first).
    entries.set(key, entry);
    if (entries.size > maxKeys) {
      const [oldestKey, oldest] = entries.entries().next().value as [string, Entry];
      entries.delete(oldestKey);
      if (oldest.pending > 0 && redis) void sync(oldestKey, oldest);
    }
    return entry;
  };

  return {
    limit,
    hit(key) {
      const at = now();
      const entry = entryFor(key, at);
      entry.pending += 1;
      if (!redis) {
        // Alone, the local count is the count: nothing to push.
        entry.shared += entry.pending;
        entry.pending = 0;
        return decide(entry, at);
      }
      startTimer();
      if (at - entry.syncedAt < syncMs) return decide(entry, at);
      return sync(key, entry).then(() => decide(entry, now()));
    },
    flush,
    async close() {
      if (timer) clearInterval(timer);
      timer = null;
      if (redis) await flush();
    },
  };
}
