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
import type { KeyPrincipal, PrincipalLookup } from './principal.ts';
import { createKeyUsage, type KeyUsage } from './key-usage.ts';
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
  /** The token check's lookup: cached principal, else the database. */
  lookup: PrincipalLookup;
  /** Usage per key, *last used* and refusal audits, written in batches (`key-usage.ts`). */
  usage: KeyUsage;
  /** The trusted cache's principal for a hash, synchronously, or undefined (then `lookup`). */
  cached: (tokenHash: string) => Readonly<KeyPrincipal> | undefined;
  /** The cache in front of the lookup (tests and the benchmark read its stats). */
  cache: PrincipalCache;
  /**
   * This instance changed a key of the portal: drop its entries before the changing call
   * returns (the old secret fails here on the very next request), not at the notification.
   */
  dropPortal: (portalId: number) => void;
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
  const usage = createKeyUsage({ db: storage.db, logger });
  return {
    lookup: (tokenHash) => cache.lookup(tokenHash),
    usage,
    cached: (tokenHash) => cache.cached(tokenHash),
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
