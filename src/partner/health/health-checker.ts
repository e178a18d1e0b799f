/**
 * The token health checker (revocation path 3): polls each active connection's token with
 * `debug_token` every PROVIDER_HEALTH_CHECK_INTERVAL_MS, refreshes a token near expiry with the
 * long-lived exchange, and revokes (actor system) a token the provider reports invalid or that
 * cannot be refreshed.
 *
 * Several Portico instances on one PostgreSQL: each cycle leases the due connections with
 * `FOR UPDATE SKIP LOCKED` and a lease column (connections-store `leaseDue`), so a connection is
 * checked by one instance at a time, and a crashed instance's lease expires.
 *
 * @see https://developers.facebook.com/docs/graph-api/reference/debug_token
 * @see docs/partner-connection.md "Revocation" (path 3)
 */
import type { Config } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import type { BackgroundTask } from '../../jobs/background-work.ts';
import type { Logger } from '../../platform/logger.ts';
import { finishConnectionCheck, leaseDueConnections } from './connection-leases.ts';
import { ConnectionInactiveError, type ConnectionsStore } from '../connections-store.ts';
import type { InflightCalls } from '../inflight-calls.ts';
import type { WithProvider } from '../outbound-calls.ts';
import { tokenExpiry } from '../provider-client.ts';
import { isTransientProviderError, logProviderFailure, ProviderError } from '../provider-error.ts';
import {
  HEALTH_CHECKER_ACTOR,
  type RevocationReason,
  type RevokeConnection,
} from '../revocation/revocation.ts';

export interface HealthCheckerDeps {
  config: Config;
  db: Database;
  store: ConnectionsStore;
  /** False when the provider is not configured: the checker does nothing. */
  enabled: boolean;
  /** This instance's name in leases. */
  instanceId: string;
  log: Logger;
  /** Runs a provider call with the portal's token (refused for an inactive connection). */
  withProvider: WithProvider;
  revokeConnection: RevokeConnection;
  /** Aborted on stop. */
  inflight: InflightCalls;
}

export type HealthChecker = ReturnType<typeof createHealthChecker>;

export function createHealthChecker(deps: HealthCheckerDeps) {
  const { config, store, withProvider, revokeConnection, instanceId } = deps;

  /** One health check of one leased connection. */
  async function checkConnection(portalId: number): Promise<'ok' | 'refreshed' | 'revoked'> {
    let outcome:
      { revoke: RevocationReason; detail?: string; tokenVersion: string } | 'ok' | 'refreshed';
    try {
      outcome = await withProvider(
        portalId,
        'health check',
        async (c, token, signal, tokenVersion) => {
          const info = await c.inspectToken(token, signal);
          if (!info.isValid)
            return {
              revoke: 'dead_token' as const,
              ...(info.errorCode === 190 && { detail: '(error 190)' }),
              tokenVersion,
            };
          const expiresAtMs = info.expiresAt ? info.expiresAt * 1000 : undefined;
          if (
            expiresAtMs === undefined ||
            expiresAtMs - Date.now() > config.PROVIDER_TOKEN_REFRESH_WINDOW_S * 1000
          )
            return 'ok' as const;
          try {
            const fresh = await c.exchangeForLongLived(token, signal);
            const fresher = await c.inspectToken(fresh.accessToken, signal);
            const expiresAt = tokenExpiry(fresher, fresh.expiresIn);
            await store.replaceToken(portalId, tokenVersion, fresh.accessToken, expiresAt);
            return 'refreshed' as const;
          } catch (err) {
            if (isTransientProviderError(err)) throw err; // unavailable or throttled: next cycle
            return { revoke: 'token_expired' as const, tokenVersion };
          }
        },
      );
    } catch (err) {
      if (err instanceof ConnectionInactiveError) return 'revoked';
      if (err instanceof ProviderError && err.kind === 'dead_token') return 'revoked';
      throw err;
    }
    if (typeof outcome === 'object') {
      await revokeConnection(portalId, {
        actor: HEALTH_CHECKER_ACTOR,
        reason: outcome.revoke,
        detail: outcome.detail,
        tokenVersion: outcome.tokenVersion,
      });
      return 'revoked';
    }
    return outcome;
  }

  /** One cycle; returns the portal ids this instance leased and checked. */
  async function runOnce(options: { limit?: number } = {}): Promise<number[]> {
    if (!deps.enabled) return [];
    const ids = await leaseDueConnections(deps.db, {
      owner: instanceId,
      leaseMs: config.PROVIDER_HEALTH_CHECK_LEASE_MS,
      dueBefore: new Date(Date.now() - config.PROVIDER_HEALTH_CHECK_INTERVAL_MS),
      limit: options.limit ?? 50,
    });
    for (const portalId of ids) {
      try {
        await checkConnection(portalId);
      } catch (err) {
        logProviderFailure(deps.log, 'health check', err, portalId);
      } finally {
        await finishConnectionCheck(deps.db, portalId, instanceId).catch(() => {});
      }
    }
    return ids;
  }

  return {
    runOnce,

    /**
     * The background task (jobs/background-work.ts) that runs a cycle every min(interval, 60 s);
     * null when the provider is not configured or the interval is 0.
     */
    task:
      deps.enabled && config.PROVIDER_HEALTH_CHECK_INTERVAL_MS > 0
        ? ({
            name: 'partner.health-check',
            description:
              "inspect each active connection's token; refresh near expiry, revoke the dead",
            everyMs: Math.max(1_000, Math.min(config.PROVIDER_HEALTH_CHECK_INTERVAL_MS, 60_000)),
            run: async () => (await runOnce()).length,
          } satisfies BackgroundTask)
        : null,

    /** Abort the in-flight provider calls (shutdown: a cycle in progress ends at once). */
    abort: (): void => deps.inflight.abortAll(),
  };
}
