/**
 * The verification cache: a bounded, in-process LRU from API token hash to principal, in front
 * of the database lookup of the token check.
 *
 * Correctness before speed. The cache is only *trusted* while this instance is listening for
 * token changes (see `token-change-listener.ts`); otherwise every lookup reads through to the
 * database. Invariants:
 *
 * 1. Only positive results are cached: an unknown (or regenerated) token hash is looked up in
 *    the database every time, so a newly created token works at once.
 * 2. Every invalidation (a token change, the listener lost or regained) bumps `generation`. A
 *    lookup stores its result only if the generation is the one it started with and the cache
 *    is trusted at both ends. So a database read that began before a change and finishes after
 *    the change's notification was handled cannot put the stale principal back.
 * 3. Anything cached before a notification is handled is dropped by it. Together with 2: once
 *    this instance has handled the notification of a committed change, it never answers from
 *    the state before that change.
 * 4. Entries also expire after `ttlMs` whatever happens: a bound on staleness should a change
 *    ever be made without its notification (by hand in SQL, say).
 * 5. Concurrent misses for one hash share one read, but never a read that began before the
 *    last invalidation.
 *
 * Cached principals are frozen: callers share them.
 *
 * @see docs/decisions/0002-api-tokens.md
 */
import { LRUCache } from 'lru-cache';
import type { KeyPrincipal, PrincipalLookup } from './principal.ts';

export interface PrincipalCacheOptions {
  /** Most entries kept; 0 turns the cache off (every lookup reads the database). */
  maxEntries: number;
  /** Longest an entry is kept, in milliseconds. */
  ttlMs: number;
  /** The database lookup behind the cache. */
  load: PrincipalLookup;
}

export interface PrincipalCacheStats {
  enabled: boolean;
  /** True while a token-change listener is connected; false means read-through. */
  trusted: boolean;
  size: number;
  hits: number;
  misses: number;
  invalidations: number;
}

export interface PrincipalCache {
  /** The token check's lookup: cached principal, else the database (and cache it). */
  lookup: PrincipalLookup;
  /**
   * The cached principal without I/O or a promise, when the cache is trusted and holds the
   * hash (counted as a hit); else undefined, and the caller uses `lookup`. The API's hot path.
   */
  cached(tokenHash: string): Readonly<KeyPrincipal> | undefined;
  /** Drop whatever is cached for the portal (its token changed). */
  invalidatePortal(portalId: number): void;
  /** Drop everything. */
  invalidateAll(): void;
  /** The listener is connected: from now on cache entries can be trusted. Drops everything. */
  trust(): void;
  /** The listener is gone: notifications may be missed, so read through. Drops everything. */
  distrust(): void;
  /** Whether an entry is cached for a token hash (for tests and the benchmark). */
  has(tokenHash: string): boolean;
  stats(): PrincipalCacheStats;
}

export function createPrincipalCache(options: PrincipalCacheOptions): PrincipalCache {
  const { load } = options;
  const enabled = options.maxEntries > 0;
  const lru = enabled
    ? new LRUCache<string, Readonly<KeyPrincipal>>({ max: options.maxEntries, ttl: options.ttlMs })
    : null;
  let generation = 0;
  const inflight = new Map<string, { generation: number; read: Promise<KeyPrincipal | null> }>();
  let trusted = false;
  let hits = 0;
  let misses = 0;
  let invalidations = 0;

  function dropAll(): void {
    generation++;
    lru?.clear();
  }

  return {
    cached(tokenHash) {
      if (!lru || !trusted) return undefined;
      const cached = lru.get(tokenHash);
      if (cached) hits++;
      return cached;
    },

    async lookup(tokenHash) {
      if (!lru || !trusted) return load(tokenHash);
      const cached = lru.get(tokenHash);
      if (cached) {
        hits++;
        return cached;
      }
      misses++;
      // Concurrent misses for one hash share one database read (a hot token after a change
      // would otherwise send every waiting request to the database at once) — but only a read
      // that began in the current generation, i.e. after the last invalidation.
      const pending = inflight.get(tokenHash);
      if (pending && pending.generation === generation) return pending.read;
      const startedAt = generation;
      const read = load(tokenHash).then((principal) => {
        // Invariant 2: nothing changed (and the listener stayed up) while we were reading.
        if (principal && trusted && generation === startedAt) {
          const frozen = Object.freeze({
            ...principal,
            scopes: Object.freeze([...principal.scopes]),
            allowedIps: principal.allowedIps && Object.freeze([...principal.allowedIps]),
          });
          lru.set(tokenHash, frozen);
          return frozen;
        }
        return principal;
      });
      inflight.set(tokenHash, { generation: startedAt, read });
      try {
        return await read;
      } finally {
        if (inflight.get(tokenHash)?.read === read) inflight.delete(tokenHash);
      }
    },

    invalidatePortal(portalId) {
      invalidations++;
      generation++;
      if (!lru) return;
      // A portal's few keys (and their previous secrets); a scan keeps no second index to get wrong.
      // O(entries), and token changes are rare next to lookups.
      const stale: string[] = [];
      for (const [hash, principal] of lru.entries()) {
        if (principal.portalId === portalId) stale.push(hash);
      }
      for (const hash of stale) lru.delete(hash);
    },

    invalidateAll() {
      invalidations++;
      dropAll();
    },

    trust() {
      dropAll();
      trusted = true;
    },

    distrust() {
      trusted = false;
      dropAll();
    },

    has(tokenHash) {
      return lru?.has(tokenHash) ?? false;
    },

    stats() {
      return { enabled, trusted, size: lru?.size ?? 0, hits, misses, invalidations };
    },
  };
}
