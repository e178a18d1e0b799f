/**
 * Revocation: the vocabulary shared by every path (who revokes, and why: a reason code, in plain
 * words in the audit log and on /settings) and the one cleanup they all run.
 *
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow#deauth-callback
 * @see docs/partner-connection.md "Revocation"
 */
import { recordAuditEvent, type Actor } from '../../audit/audit-log.ts';
import type { Database } from '../../db/client.ts';
import type { Logger } from '../../platform/logger.ts';
import type { ConnectionsStore } from '../connections-store.ts';
import type { InflightCalls } from '../inflight-calls.ts';
import type { GrantRevoker, GrantToRevoke } from './provider-grant-revocation.ts';

/** The health checker and the provider client act as these system actors. */
export const HEALTH_CHECKER_ACTOR: Actor = { type: 'system', id: 'health-checker' };
export const PROVIDER_CLIENT_ACTOR: Actor = { type: 'system', id: 'provider-client' };

/**
 * Why a connection was revoked, as a code: what the revocation's steps read (the webhooks'
 * `connection.revoked` carries it as `reason`) and what the words below are made from.
 *
 * - `disconnect`: a user disconnected in Portico (the settings page).
 * - `deauthorize`: the person removed the app in their provider account settings.
 * - `data_deletion`: the person asked the provider to delete their data.
 * - `partner_removed`: the business removed Portico from its WhatsApp Business Account
 *   (`account_update` webhook, `PARTNER_REMOVED`).
 * - `dead_token`: the provider reported the token invalid (a call's Graph error 190, or the
 *   health check's `debug_token`).
 * - `token_expired`: the health check found the token expired, or about to, and could not
 *   refresh it.
 *
 * @see docs/partner-connection.md "Revocation"
 * @see docs/webhooks.md "Event catalogue"
 */
export const REVOCATION_REASONS = [
  'disconnect',
  'deauthorize',
  'data_deletion',
  'partner_removed',
  'dead_token',
  'token_expired',
] as const;
export type RevocationReason = (typeof REVOCATION_REASONS)[number];

/** Each reason in plain words: the one place the audit log and /settings take them from. */
const REVOCATION_WORDS: Record<RevocationReason, string> = {
  disconnect: 'disconnected by a user in Portico',
  deauthorize: 'the app was removed in the provider account settings',
  data_deletion: 'the person asked the provider to delete their data',
  partner_removed:
    'the business removed Portico from its WhatsApp Business Account at the provider',
  dead_token: 'the provider reported the token invalid',
  token_expired: 'the token expired, or was about to, and could not be refreshed',
};

/**
 * A revocation's plain words (the audit record's `reason` and the connection's
 * `revoke_reason`, shown on /settings): the reason's words, then `detail` when given.
 *
 * @example revocationWords('dead_token', '(error 190) during send message')
 *   // 'the provider reported the token invalid (error 190) during send message'
 */
export function revocationWords(reason: RevocationReason, detail?: string): string {
  const words = REVOCATION_WORDS[reason];
  return detail ? `${words} ${detail}` : words;
}

export interface RevokeOptions {
  actor: Actor;
  reason: RevocationReason;
  /**
   * Plain words added after the reason's in the audit log and on /settings (which call found
   * the token dead, the provider's error code); never a secret.
   */
  detail?: string | undefined;
  requestId?: string | undefined;
  /** Also erase provider-derived data (provider user id, assets, permissions). */
  eraseProviderData?: boolean;
  /**
   * Revoke only if the stored token is still this one (`openAccessToken`'s `tokenVersion`):
   * for paths that found a token dead, so a reconnection meanwhile is left alone.
   */
  tokenVersion?: string | undefined;
  /**
   * Revoke only a connection made before this instant: for a provider callback signed then, so
   * a deauthorize signed before a reconnection never revokes it.
   */
  connectedBefore?: Date | undefined;
  /**
   * Also revoke the app's grant at the provider (`DELETE /{user-id}/permissions`), after the
   * local cleanup committed: for a user's disconnect. Not for paths where the provider already
   * ended the grant (deauthorize, data deletion) or the token is dead. Skipped when another
   * portal's active connection shares the grant.
   */
  revokeAtProvider?: boolean;
}

/** A transaction of the revocation cleanup (the store's and the audit's). */
export type RevocationTx = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * One step another feature adds to the revocation cleanup (given at composition in
 * services.ts; partner/ imports no other feature). It runs inside the cleanup's transaction,
 * after the connection is marked inactive and only when this call revoked it, so it runs once
 * per revocation whatever the path; a step that throws rolls the whole revocation back.
 * Messaging fails the portal's queued messages and releases their credit here.
 */
export type RevocationStep = (
  tx: RevocationTx,
  revocation: { portalId: number; reason: RevocationReason },
) => Promise<void>;

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
 * Build the revocation cleanup: wait for the portal's sends in flight (at most
 * `sendsTimeoutMs`), then delete the ciphertext, mark the connection inactive, record
 * `connection.revoked` — one transaction — then abort the portal's outbound calls and, when
 * asked, revoke the grant at the provider in the background. Idempotent:
 * an inactive (or absent) connection changes nothing and writes no record; concurrent calls end
 * in exactly one revocation (the UPDATE's `status = 'active'` condition).
 *
 * @see docs/partner-connection.md "Revocation"
 */
export function createRevokeConnection(deps: {
  db: Database;
  store: ConnectionsStore;
  inflight: InflightCalls;
  grants: GrantRevoker;
  log: Logger;
  /** Other features' cleanup, run in the revocation's transaction (see `RevocationStep`). */
  steps?: readonly RevocationStep[];
  /** How long to wait for the portal's sends in flight (the provider timeout), in ms. */
  sendsTimeoutMs: number;
}): RevokeConnection {
  const { db, store, inflight, grants, log, steps = [], sendsTimeoutMs } = deps;
  return async (portalId, options) => {
    // A send already made may have been accepted: it is waited for (its wamid recorded) so
    // the steps below do not fail and release a message the person receives.
    await inflight.settleSends(portalId, sendsTimeoutMs);
    // The token is read (and decrypted) inside the cleanup's transaction, under the row lock,
    // because the cleanup deletes it: the only way to revoke the grant afterwards. It stays in
    // partner/ and in memory only.
    let grant: GrantToRevoke | null = null;
    const words = revocationWords(options.reason, options.detail);
    const revoked = await db.transaction(async (tx) => {
      const held = options.revokeAtProvider ? await store.grantToRevoke(tx, portalId) : null;
      const changed = await store.markRevoked(tx, portalId, {
        reason: words,
        eraseProviderData: options.eraseProviderData ?? false,
        tokenVersion: options.tokenVersion,
        connectedBefore: options.connectedBefore,
      });
      if (!changed) return false;
      grant = held && { portalId, ...held };
      for (const step of steps) await step(tx, { portalId, reason: options.reason });
      await recordAuditEvent(tx, {
        portalId,
        actor: options.actor,
        action: 'connection.revoked',
        reason: words,
        requestId: options.requestId ?? null,
      });
      return true;
    });
    if (revoked) {
      // After commit: no further polling or outbound call for this portal.
      inflight.abortPortal(portalId);
      // Then, in the background, the grant at the provider: never delays the local cleanup.
      if (grant) void grants.revoke(grant);
      log.info(
        { portalId, actor: `${options.actor.type}:${options.actor.id}` },
        'connection revoked',
      );
    }
    return { revoked };
  };
}
