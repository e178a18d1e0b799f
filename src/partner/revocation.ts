/**
 * Revocation: the vocabulary shared by every path (who revokes, and why, in plain words: these
 * appear in the audit log and on /settings) and the one cleanup they all run.
 *
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow#deauth-callback
 * @see docs/partner-connection.md "Revocation"
 */
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import type { Logger } from '../platform/logger.ts';
import type { ConnectionsStore } from './connections-store.ts';
import type { InflightCalls } from './inflight-calls.ts';

/** The health checker and the provider client act as these system actors. */
export const HEALTH_CHECKER_ACTOR: Actor = { type: 'system', id: 'health-checker' };
export const PROVIDER_CLIENT_ACTOR: Actor = { type: 'system', id: 'provider-client' };

/** Revocation reasons, in plain words (they appear in the audit log and on /settings). */
export const REVOKE_REASONS = {
  userDisconnected: 'disconnected by a user in Portico',
  deauthorized: 'the app was removed in the provider account settings',
  dataDeletion: 'the person asked the provider to delete their data',
  tokenInvalid190: 'the provider reported the token invalid (error 190)',
  tokenInvalid: 'the provider reported the token invalid',
  tokenUnrefreshable: 'the token is expiring and could not be refreshed',
  tokenExpired: 'the token expired and could not be refreshed',
} as const;

export interface RevokeOptions {
  actor: Actor;
  /** Plain words, never a secret. */
  reason: string;
  requestId?: string | undefined;
  /** Also erase provider-derived data (provider user id, assets, permissions). */
  eraseProviderData?: boolean;
  /**
   * Revoke only if the stored token is still this one (`withAccessToken`'s `tokenVersion`):
   * for paths that found a token dead, so a reconnection meanwhile is left alone.
   */
  tokenVersion?: string | undefined;
  /**
   * Revoke only a connection made before this instant: for a provider callback signed then, so
   * a deauthorize signed before a reconnection never revokes it.
   */
  connectedBefore?: Date | undefined;
}

/**
 * The one cleanup every revocation path converges on.
 *
 * @returns `{ revoked: true }` when this call revoked the connection.
 */
export type RevokeConnection = (
  portalId: number,
  options: RevokeOptions,
) => Promise<{ revoked: boolean }>;

/**
 * Build the revocation cleanup: delete the ciphertext, mark the connection inactive, record
 * `connection.revoked` — one transaction — then abort the portal's outbound calls. Idempotent:
 * an inactive (or absent) connection changes nothing and writes no record; concurrent calls end
 * in exactly one revocation (the UPDATE's `status = 'active'` condition).
 *
 * @see docs/partner-connection.md "Revocation"
 */
export function createRevokeConnection(deps: {
  db: Database;
  store: ConnectionsStore;
  inflight: InflightCalls;
  log: Logger;
}): RevokeConnection {
  const { db, store, inflight, log } = deps;
  return async (portalId, options) => {
    const revoked = await db.transaction(async (tx) => {
      const changed = await store.markRevoked(tx, portalId, {
        reason: options.reason,
        eraseProviderData: options.eraseProviderData ?? false,
        tokenVersion: options.tokenVersion,
        connectedBefore: options.connectedBefore,
      });
      if (!changed) return false;
      await recordAuditEvent(tx, {
        portalId,
        actor: options.actor,
        action: 'connection.revoked',
        reason: options.reason,
        requestId: options.requestId ?? null,
      });
      return true;
    });
    if (revoked) {
      // After commit: no further polling or outbound call for this portal.
      inflight.abortPortal(portalId);
      log.info(
        { portalId, actor: `${options.actor.type}:${options.actor.id}` },
        'connection revoked',
      );
    }
    return { revoked };
  };
}
