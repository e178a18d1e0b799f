/**
 * API token verification, in one home: token hash → cache → database lookup, and the
 * invalidation that keeps the cache honest (this instance's own changes at once, every other
 * instance's through PostgreSQL's LISTEN/NOTIFY).
 *
 * - `principal-cache.ts`: the bounded LRU, trusted only while listening;
 * - `token-change-channel.ts`: the notification sent inside the changing transaction;
 * - `token-change-listener.ts`: the listening session (PGlite in-process, or a dedicated
 *   PostgreSQL connection with heartbeat and backoff).
 *
 * @see docs/architecture.md "An API token, from the header to the principal"
 */
import type { Storage } from '../db/client.ts';
import type { Logger } from '../platform/logger.ts';
import { createPrincipalLookup } from './accounts-repository.ts';
import { createPrincipalCache, type PrincipalCache } from './principal-cache.ts';
import type { Principal, PrincipalLookup } from './principal.ts';
import { createTokenUsage, type TokenUsage } from './token-usage.ts';
import {
  startTokenChangeListener,
  type ListenerTiming,
  type TokenChangeListener,
} from './token-change-listener.ts';

export interface TokenVerificationSettings {
  /** Most cached principals; 0 turns the cache off. */
  TOKEN_CACHE_SIZE: number;
  /** Longest a cached principal is kept, in milliseconds. */
  TOKEN_CACHE_TTL_MS: number;
  /** PostgreSQL URL of the listening session when it must differ from the storage's. */
  DATABASE_LISTEN_URL?: string | undefined;
}

export interface TokenVerification {
  /**
   * The token check's lookup: cached principal, else the database. A found token's *last
   * used* time is noted after the lookup and off its path (`token-usage.ts`).
   */
  lookup: PrincipalLookup;
  /** The *last used* recorder (tests wait for its writes). */
  usage: TokenUsage;
  /** The trusted cache's principal for a hash, synchronously, or undefined (then `lookup`). */
  cached: (tokenHash: string) => Readonly<Principal> | undefined;
  /** The cache in front of the lookup (tests and the benchmark read its stats). */
  cache: PrincipalCache;
  /** This instance changed the portal's token: drop its entry now, not at the notification. */
  dropPortal(portalId: number): void;
  /**
   * Start listening for token changes; until it listens (and whenever it stops) the cache is
   * distrusted, i.e. every lookup reads the database. Resolves after the first attempt.
   */
  listen(timing?: Partial<ListenerTiming>): Promise<TokenChangeListener>;
}

export function createTokenVerification(deps: {
  storage: Storage;
  settings: TokenVerificationSettings;
  logger: Logger;
}): TokenVerification {
  const { storage, settings, logger } = deps;
  const cache = createPrincipalCache({
    maxEntries: settings.TOKEN_CACHE_SIZE,
    ttlMs: settings.TOKEN_CACHE_TTL_MS,
    load: createPrincipalLookup(storage.db),
  });
  const usage = createTokenUsage({ db: storage.db, logger });
  const noted = (tokenHash: string) => (principal: Awaited<ReturnType<PrincipalLookup>>) => {
    if (principal) usage.noteUse(tokenHash);
    return principal;
  };
  return {
    lookup: (tokenHash) => cache.lookup(tokenHash).then(noted(tokenHash)),
    usage,
    cached: (tokenHash) => {
      const principal = cache.cached(tokenHash);
      if (principal) usage.noteUse(tokenHash);
      return principal;
    },
    cache,
    dropPortal: (portalId) => cache.invalidatePortal(portalId),
    async listen(timing) {
      const listener = startTokenChangeListener({
        storage,
        cache,
        logger,
        listenUrl: settings.DATABASE_LISTEN_URL,
        ...(timing ? { timing } : {}),
      });
      await listener.ready;
      return listener;
    },
  };
}
