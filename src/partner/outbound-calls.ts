/**
 * Outbound provider calls made with a portal's token: the one path by which Portico acts at the
 * provider on a customer's behalf. Two entries: `withProvider` (inside partner/: the health
 * check, profile reads) hands its callback the token; `withCloudApi` (for other features:
 * messaging) hands its callback the Cloud API calls made for the token, never the token.
 *
 * Invariants: the decrypted token exists only inside `withProvider`'s callback; a call for an
 * inactive connection is refused before any network I/O; every call of a portal is aborted the
 * moment its connection is revoked or replaced, but a send, which a revocation waits for; a Graph error 190 revokes the connection (actor
 * system), but only if the stored token is still the one that failed.
 *
 * @see https://developers.facebook.com/docs/graph-api/guides/error-handling (code 190)
 * @see docs/partner-connection.md "Outbound calls"
 */
import type { CloudApi } from './cloud-api/cloud-api.ts';
import type { ConnectionsStore } from './connections-store.ts';
import type { InflightCalls } from './inflight-calls.ts';
import type { ProviderClient } from './provider-client.ts';
import { ProviderError } from './provider-error.ts';
import { PROVIDER_CLIENT_ACTOR, type RevokeConnection } from './revocation/revocation.ts';

/**
 * Run `fn` with the portal's decrypted provider token, an abort signal that revocation fires,
 * and the token's version (see `ConnectionsStore.openAccessToken`).
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
  kind?: CallKind,
) => Promise<T>;

/**
 * `send` for a call the provider may act on (a message send): a revocation waits for it to end
 * (bounded by the provider timeout) instead of aborting it, so what `fn` records of the
 * provider's answer (the wamid) is recorded before the revocation's cleanup. `read` otherwise.
 */
export type CallKind = 'read' | 'send';

/**
 * `withProvider` for callers outside partner/: `fn` gets the Cloud API calls made for the
 * portal's token and the call's abort signal, so the token itself never leaves partner/. Same
 * refusals: inactive connection before any I/O, 190 revokes, revocation aborts.
 *
 * @throws ConnectionInactiveError, ProviderError
 */
export type WithCloudApi = <T>(
  portalId: number,
  what: string,
  fn: (cloud: CloudApi, signal: AbortSignal) => Promise<T>,
  kind?: CallKind,
) => Promise<T>;

/**
 * The two entries over the portal's stored token.
 *
 * @param deps.client null when the provider is not configured: every call then fails with a
 *   `ProviderError` of kind `other`.
 */
export function createOutboundCalls(deps: {
  client: ProviderClient | null;
  store: ConnectionsStore;
  inflight: InflightCalls;
  revokeConnection: RevokeConnection;
}): { withProvider: WithProvider; withCloudApi: WithCloudApi } {
  const { client, store, inflight, revokeConnection } = deps;
  const withProvider: WithProvider = async (portalId, what, fn, kind = 'read') => {
    if (!client) throw new ProviderError('other', 'The provider is not configured.');
    const call = inflight.start(portalId, kind);
    let version: string | undefined;
    try {
      const { accessToken, tokenVersion } = await store.openAccessToken(portalId);
      version = tokenVersion;
      return await fn(client, accessToken, call.signal, tokenVersion);
    } catch (err) {
      if (err instanceof ProviderError && err.kind === 'dead_token') {
        call.release(); // ended: the revocation must not wait for this very call
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
  const withCloudApi: WithCloudApi = (portalId, what, fn, kind) =>
    withProvider(portalId, what, (c, token, signal) => fn(c.cloud(token, signal), signal), kind);
  return { withProvider, withCloudApi };
}
