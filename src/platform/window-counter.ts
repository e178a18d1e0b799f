/**
 * Fixed-window hit counters shared across instances through Redis, counted locally between
 * synchronisations so that a hit costs a map lookup, not a Redis round trip.
 *
 * Windows are aligned to the clock: window `n` of key `k` covers
 * `[n × windowMs, (n + 1) × windowMs)` (Unix time, milliseconds) on every instance, and its
 * shared count lives in Redis under `{namespace}{k}:{n}`, expiring with the window.
 *
 * How a hit is counted: each instance keeps, per key, the shared total it last read from Redis
 * (`shared`) and the hits it has counted since (`pending`). A hit adds one to `pending` and is
 * decided on `shared + pending`. When the key's last synchronisation is older than `syncMs` (or
 * the key is new to this instance, or its window changed), the hit first waits for one: the
 * pending hits are added to Redis (`INCRBY`, which answers the new total) and `shared` becomes
 * that total. Pending hits of keys that receive no further hit are pushed by a timer every
 * `syncMs`. So a decision never rests on a shared count older than `syncMs`, and each key costs
 * at most one awaited round trip per `syncMs` per instance, however many hits it receives.
 *
 * The bound on overshoot: an instance admits hits the others have not yet seen for at most one
 * `syncMs`, so a window admits at most `limit + Σ over instances of the key's hits that instance
 * receives in one syncMs` (≤ instances × syncMs × per-instance rate), see docs/decisions.md
 * "Rate limits: local counting, synchronised". One instance alone (or without Redis) is exact.
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
  window: number;
  /** The window's total in Redis as last read (this instance's pushed hits included). */
  shared: number;
  /** Hits counted here and not yet pushed. */
  pending: number;
  /** When `shared` was last read (Unix ms); 0 before the first read. */
  syncedAt: number;
  /** The synchronisation in flight, if any (hits wait for it rather than start another). */
  syncing: Promise<void> | null;
}

export function createWindowCounter(options: WindowCounterOptions): WindowCounter {
  const { limit, windowMs, syncMs, redis, namespace, maxKeys } = options;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let timer: NodeJS.Timeout | null = null;

  const decide = (entry: Entry, at: number): HitResult => {
    const count = entry.shared + entry.pending;
    const resetSeconds = Math.max(1, Math.ceil(((entry.window + 1) * windowMs - at) / 1000));
    return count <= limit
      ? { allowed: true, remaining: limit - count, resetSeconds }
      : { allowed: false, remaining: 0, resetSeconds };
  };

  /** Push `entry`'s pending hits and read the shared total (one pipelined round trip). */
  const sync = (key: string, entry: Entry): Promise<void> => {
    if (entry.syncing) return entry.syncing;
    const pushed = entry.pending;
    const window = entry.window;
    const redisKey = `${namespace}${key}:${window}`;
    const ttlMs = Math.max(1, (window + 1) * windowMs - now() + syncMs);
    entry.syncing = redis!
      .pipeline()
      .incrby(redisKey, pushed)
      .pexpire(redisKey, ttlMs)
      .exec()
      .then((results) => {
        const [err, total] = results?.[0] ?? [new Error('no reply'), null];
        if (err || typeof total !== 'number') throw err ?? new Error('unexpected INCRBY reply');
        if (entry.window !== window) return;
        entry.pending -= pushed;
        entry.shared = total;
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
    const waits: Promise<void>[] = [];
    for (const [key, entry] of entries) {
      if (entry.pending > 0) waits.push(sync(key, entry));
      else if (entry.window < Math.floor(now() / windowMs)) entries.delete(key);
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

  /** The key's entry for the current window (a new one when the window moved on). */
  const entryFor = (key: string, window: number): Entry => {
    let entry = entries.get(key);
    // Map order is the order of first hits in the current window: the oldest goes first when
    // full (a key dropped while hot only costs one more synchronisation).
    if (entry && entry.window === window) return entry;
    if (entry && entry.pending > 0 && redis) void sync(key, entry);
    entries.delete(key);
    entry = { window, shared: 0, pending: 0, syncedAt: 0, syncing: null };
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
      const entry = entryFor(key, Math.floor(at / windowMs));
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
