/**
 * The vocabulary of revocation shared by every path: who revokes (system actors) and why, in
 * plain words (these appear in the audit log and on /settings).
 *
 * @see ../../../shared/spec/external-api-and-partner-flow.md §3, §6
 */
import type { Actor } from '../audit/audit-log.ts';

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
}
