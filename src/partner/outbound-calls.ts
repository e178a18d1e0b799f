/**
 * Outbound provider calls made with a portal's token: the one path by which Portico acts at the
 * provider on a customer's behalf (today the health check and profile reads; messaging calls
 * the provider through here too).
 *
 * Invariants: the decrypted token exists only inside `withProvider`'s callback; a call for an
 * inactive connection is refused before any network I/O; every call of a portal is aborted the
 * moment its connection is revoked or replaced; a Graph error 190 revokes the connection (actor
 * system), but only if the stored token is still the one that failed.
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling (code 190)
 * @see docs/partner-connection.md "Outbound calls"
 */
import type { ConnectionsStore } from './connections-store.ts';
import type { InflightCalls } from './inflight-calls.ts';
import type { ProviderClient } from './provider-client.ts';
import { ProviderError } from './provider-error.ts';
import { PROVIDER_CLIENT_ACTOR, type RevokeConnection } from './revocation/revocation.ts';

/**
 * Run `fn` with the portal's decrypted provider token, an abort signal that revocation fires,
 * and the token's version (see `ConnectionsStore.withAccessToken`).
 *
 * @throws ConnectionInactiveError before any I/O when the connection is not active.
 * @throws ProviderError from the call; `dead_token` has revoked the connection already.
 */
export type WithProvider = <T>(
  portalId: number,
  what: string,
  fn: (
    client: ProviderClient,
    accessToken: string,
    signal: AbortSignal,
    tokenVersion: string,
  ) => Promise<T>,
) => Promise<T>;

/**
 * `withProvider` over the portal's stored token.
 *
 * @param deps.client null when the provider is not configured: every call then fails with a
 *   `ProviderError` of kind `other`.
 */
export function createWithProvider(deps: {
  client: ProviderClient | null;
  store: ConnectionsStore;
  inflight: InflightCalls;
  revokeConnection: RevokeConnection;
}): WithProvider {
  const { client, store, inflight, revokeConnection } = deps;
  return async (portalId, what, fn) => {
    if (!client) throw new ProviderError('other', 'The provider is not configured.');
    const call = inflight.start(portalId);
    let version: string | undefined;
    try {
      return await store.withAccessToken(portalId, (token, tokenVersion) => {
        version = tokenVersion;
        return fn(client, token, call.signal, tokenVersion);
      });
    } catch (err) {
      if (err instanceof ProviderError && err.kind === 'dead_token') {
        await revokeConnection(portalId, {
          actor: PROVIDER_CLIENT_ACTOR,
          reason: 'dead_token',
          detail: `(error 190) during ${what}`,
          tokenVersion: version,
        });
      }
      throw err;
    } finally {
      call.release();
    }
  };
}
