/**
 * Revoking the app's grant at the provider (`DELETE /{user-id}/permissions`) after Portico has
 * let go of a connection locally: on disconnect, and on a grant Portico refused because a
 * permission was declined. Without it the person's grant, and every token of it, stays alive at
 * the provider although Portico no longer holds the token.
 *
 * Invariants: this runs after the local cleanup committed and never delays or undoes it; a
 * failure is logged (never the token) and retried a bounded number of times, only when the
 * provider was unavailable; the token lives in this module's memory only until the last attempt
 * (it is already deleted from storage), and is lost — by design — if the process stops.
 *
 * @see https://developers.facebook.com/docs/facebook-login/guides/permissions/request-revoke#revoking
 * @see docs/partner-connection.md "Revocation"
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../platform/logger.ts';
import type { ProviderClient } from '../provider-client.ts';
import { isTransientProviderError, logProviderFailure, ProviderError } from '../provider-error.ts';

/** Waits before the 2nd, 3rd and 4th attempt, in milliseconds (about 36 s in all). */
export const GRANT_REVOCATION_RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000, 30_000];

/** A grant to revoke: the person's token (already deleted from storage) and Graph id. */
export interface GrantToRevoke {
  portalId: number;
  accessToken: string;
  /** Null when unknown: the call then names `me`. */
  providerUserId: string | null;
}

const logFailure = (log: Logger, err: unknown, portalId: number) =>
  logProviderFailure(log, 'grant revocation', err, portalId);

export interface GrantRevoker {
  /**
   * Start revoking; retries go on in the background. The promise (which never rejects) settles
   * when the first attempt has ended: a caller that must not let the person grant again before
   * the old grant is gone awaits it (Graph keeps one grant per app and person, so a revocation
   * landing after a new grant would end the new one).
   */
  revoke(grant: GrantToRevoke): Promise<void>;
  /** Wait until every started revocation has ended (succeeded or given up). */
  settled(): Promise<void>;
  /** Give up pending retries (shutdown); waits for attempts in flight to end. */
  stop(): Promise<void>;
}

/**
 * @param deps.client null when the provider is not configured (nothing to revoke).
 * @param deps.retryDelaysMs the waits between attempts (default `GRANT_REVOCATION_RETRY_DELAYS_MS`).
 */
export function createGrantRevoker(deps: {
  client: ProviderClient | null;
  log: Logger;
  retryDelaysMs?: readonly number[];
}): GrantRevoker {
  const { client, log } = deps;
  const delays = deps.retryDelaysMs ?? GRANT_REVOCATION_RETRY_DELAYS_MS;
  const running = new Set<Promise<void>>();
  let shutdown = new AbortController();

  async function attempt(
    grant: GrantToRevoke,
    signal: AbortSignal,
    firstEnded: () => void,
  ): Promise<void> {
    if (!client) return;
    for (let i = 0; ; i++) {
      try {
        await client.revokePermissions(grant.accessToken, grant.providerUserId, signal);
        log.info({ portalId: grant.portalId, attempts: i + 1 }, 'grant revoked at the provider');
        return;
      } catch (err) {
        if (err instanceof ProviderError && err.kind === 'dead_token') {
          // The token is already dead at the provider: so is the grant it belonged to.
          log.info({ portalId: grant.portalId }, 'grant revocation: the token was already dead');
          return;
        }
        logFailure(log, err, grant.portalId);
        firstEnded(); // the retries go on in the background
        const retryable = isTransientProviderError(err);
        const wait = delays[i];
        if (!retryable || wait === undefined || signal.aborted) {
          log.warn({ portalId: grant.portalId, attempts: i + 1 }, 'grant revocation given up');
          return;
        }
        try {
          await delay(wait, undefined, { signal });
        } catch {
          log.warn({ portalId: grant.portalId }, 'grant revocation given up: shutting down');
          return;
        }
      }
    }
  }

  return {
    revoke(grant) {
      let firstEnded = () => {};
      const first = new Promise<void>((resolve) => (firstEnded = resolve));
      const task: Promise<void> = attempt(grant, shutdown.signal, firstEnded)
        .catch((err: unknown) => logFailure(log, err, grant.portalId))
        .finally(() => {
          firstEnded();
          running.delete(task);
        });
      running.add(task);
      return first;
    },
    async settled() {
      while (running.size > 0) await Promise.all([...running]);
    },
    async stop() {
      shutdown.abort();
      await this.settled();
      shutdown = new AbortController();
    },
  };
}
