/**
 * The API token's *last used* time (`api_tokens.last_used_at`), kept off the token check's
 * critical path: after a successful check, `noteUse` decides in memory whether this instance
 * wrote that token's time in the last minute; if not, it fires one UPDATE and returns at once
 * (never awaited by the request). So a token costs at most one write a minute per instance, and
 * the check itself does no I/O for it.
 *
 * Invariants: the row is found by the token's hash, so a use of a just-regenerated token never
 * marks its successor; the UPDATE only moves the time forward by at least a minute, so instances
 * racing each other write once; a failed write is logged (no token, no hash) and forgotten.
 *
 * @see docs/decisions/0002-api-tokens.md
 */
import { and, eq, isNull, lt, or } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { apiTokens } from '../db/schema/index.ts';
import type { Logger } from '../platform/logger.ts';

/** The resolution of *last used*, in milliseconds: one write a minute per token at most. */
export const LAST_USED_RESOLUTION_MS = 60_000;
/** Tokens remembered before the memory is cleared (a clear costs one extra write per token). */
const MAX_REMEMBERED = 10_000;

export interface TokenUsage {
  /** Record that the token with this hash (SHA-256 hex) was just used; returns at once. */
  noteUse(tokenHash: string): void;
  /** Resolves when every write started so far has ended (tests, shutdown). */
  settled(): Promise<void>;
}

export function createTokenUsage(deps: {
  db: Database;
  logger: Logger;
  now?: () => number;
}): TokenUsage {
  const { db, logger } = deps;
  const now = deps.now ?? Date.now;
  /** Token hash → when this instance last wrote its time (ms since the epoch). */
  const written = new Map<string, number>();
  const pending = new Set<Promise<void>>();

  function write(tokenHash: string, at: Date): void {
    const threshold = new Date(at.getTime() - LAST_USED_RESOLUTION_MS);
    const done = db
      .update(apiTokens)
      .set({ lastUsedAt: at })
      .where(
        and(
          eq(apiTokens.tokenHash, tokenHash),
          or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, threshold)),
        ),
      )
      .then(
        () => undefined,
        (err: unknown) => {
          logger.warn(
            { error: err instanceof Error ? err.name : typeof err },
            'could not record when the API token was last used',
          );
        },
      )
      .finally(() => pending.delete(done));
    pending.add(done);
  }

  return {
    noteUse(tokenHash) {
      const t = now();
      const last = written.get(tokenHash);
      if (last !== undefined && t - last < LAST_USED_RESOLUTION_MS) return;
      if (written.size >= MAX_REMEMBERED) written.clear();
      written.set(tokenHash, t);
      write(tokenHash, new Date(t));
    },
    async settled() {
      await Promise.all([...pending]);
    },
  };
}
