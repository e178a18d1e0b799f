/**
 * The partner connection service: the authorization URL, completing an authorization (code
 * exchange → long-lived exchange → inspection → permission check → encrypted storage + audit),
 * the connection summary, the one revocation cleanup every path converges on, provider
 * callbacks (deauthorize, data deletion), outbound calls, the token health check and key
 * rotation. Only this folder ever sees a decrypted provider token.
 *
 * @see ../../../shared/spec/external-api-and-partner-flow.md §3, §4.3, §4.4, §6, §7.2
 * @see ../../../shared/DESIGN.md "Provider code exchange", "Encryption at rest"
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { eq } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import { providerSettings, type Config, type ProviderSettings } from '../config.ts';
import type { Database } from '../db/client.ts';
import { dataDeletionRequests, users } from '../db/schema/index.ts';
import { randomBase62 } from '../platform/crypto.ts';
import type { Keyring } from '../platform/keyring.ts';
import { createConnectionsStore, type ConnectionsStore } from './connections-store.ts';
import { capabilitiesOf, missingPermissions } from './permissions.ts';
import { verifySignedRequest, type SignedRequestResult } from './signed-request.ts';
import { createHealthChecker, type WithProvider } from './health-checker.ts';
import { PROVIDER_CLIENT_ACTOR, REVOKE_REASONS, type RevokeOptions } from './revocation.ts';
import { createProviderClient, ProviderError, type ProviderClient } from './provider-client.ts';

export { ConnectionInactiveError } from './connections-store.ts';
export { ProviderError } from './provider-client.ts';
export {
  HEALTH_CHECKER_ACTOR,
  PROVIDER_CLIENT_ACTOR,
  REVOKE_REASONS,
  type RevokeOptions,
} from './revocation.ts';
import type { Logger } from '../platform/logger.ts';

export type CompleteAuthorizationResult =
  | { ok: true }
  | { ok: false; reason: 'permission'; missingCapabilities: string[] }
  | { ok: false; reason: 'config' | 'provider' | 'storage' };

export type ConnectionSummary =
  | {
      status: 'active';
      /** ISO 8601 UTC. */
      connectedAt: string;
      connectedBy: { userId: number; email: string } | null;
      /** Plain-words capabilities of the granted permissions. */
      capabilities: string[];
      assetIds: string[];
    }
  | { status: 'inactive'; revokedAt: string | null; revokeReason: string | null };

export interface DataDeletionStatus {
  confirmationCode: string;
  /** ISO 8601 UTC. */
  requestedAt: string;
  completedAt: string | null;
  connectionsDeleted: number;
  summary: string;
}

export type PartnerService = ReturnType<typeof createPartnerService>;

export interface PartnerServiceDeps {
  config: Config;
  db: Database;
  keyring: Keyring;
  logger: Logger;
  /** Identifies this instance in health-check leases (default host:pid:random). */
  instanceId?: string;
}

export function createPartnerService(deps: PartnerServiceDeps) {
  const { config, db, keyring } = deps;
  const log = deps.logger.child({ component: 'partner' });
  const settings: ProviderSettings | null = providerSettings(config);
  const client: ProviderClient | null = settings ? createProviderClient(settings) : null;
  const store: ConnectionsStore = createConnectionsStore({ db, keyring });
  const instanceId =
    deps.instanceId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

  /** In-flight outbound calls per portal, aborted the moment the connection is revoked. */
  const inflight = new Map<number, Set<AbortController>>();

  function stopOutbound(portalId: number): void {
    for (const c of inflight.get(portalId) ?? []) c.abort();
    inflight.delete(portalId);
  }

  /** Log a provider failure without anything secret: kind, Graph code, trace id. */
  function logProviderError(what: string, err: unknown, portalId: number): void {
    if (err instanceof ProviderError)
      log.warn(
        {
          portalId,
          kind: err.kind,
          graphCode: err.graphCode,
          graphSubcode: err.graphSubcode,
          fbtraceId: err.fbtraceId,
          httpStatus: err.httpStatus,
        },
        `${what}: ${err.message}`,
      );
    else
      // Not the error object: a driver error quotes its query's parameters.
      log.error(
        { portalId, error: err instanceof Error ? err.name : typeof err },
        `${what} failed`,
      );
  }

  async function revokeConnection(portalId: number, options: RevokeOptions) {
    const revoked = await db.transaction(async (tx) => {
      const changed = await store.markRevoked(tx, portalId, {
        reason: options.reason,
        eraseProviderData: options.eraseProviderData ?? false,
        tokenVersion: options.tokenVersion,
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
      stopOutbound(portalId);
      log.info(
        { portalId, actor: `${options.actor.type}:${options.actor.id}` },
        'connection revoked',
      );
    }
    return { revoked };
  }

  /**
   * Run an outbound provider call with the portal's token. Refused before any network I/O when
   * the connection is inactive; a Graph error 190 revokes the connection (actor system).
   */
  const withProvider: WithProvider = async (portalId, what, fn) => {
    if (!client) throw new ProviderError('other', 'The provider is not configured.');
    const controller = new AbortController();
    let version: string | undefined;
    let set = inflight.get(portalId);
    if (!set) inflight.set(portalId, (set = new Set()));
    set.add(controller);
    try {
      return await store.withAccessToken(portalId, (token, tokenVersion) => {
        version = tokenVersion;
        return fn(client, token, controller.signal, tokenVersion);
      });
    } catch (err) {
      if (err instanceof ProviderError && err.kind === 'dead_token') {
        await revokeConnection(portalId, {
          actor: PROVIDER_CLIENT_ACTOR,
          reason: `${REVOKE_REASONS.tokenInvalid190} during ${what}`,
          tokenVersion: version,
        });
      }
      throw err;
    } finally {
      set.delete(controller);
      if (set.size === 0 && inflight.get(portalId) === set) inflight.delete(portalId);
    }
  };

  const healthChecker = createHealthChecker({
    config,
    store,
    enabled: client !== null,
    instanceId,
    log,
    withProvider,
    revokeConnection,
    abortAll: () => {
      for (const portalId of [...inflight.keys()]) stopOutbound(portalId);
    },
    logProviderError,
  });

  const service = {
    /** Whether the provider settings are complete (app id and secret known). */
    get configured(): boolean {
      return settings !== null;
    },

    /**
     * The provider's authorization dialog URL for `state`:
     * `{AUTH_BASE}/{VERSION}/dialog/oauth?client_id&redirect_uri&state&response_type=code[&config_id]`.
     * Never carries the secret.
     *
     * @throws Error when the provider is not configured.
     * @see spec §4.3; RFC 6749 §4.1.1
     */
    authorizationUrl(state: string): string {
      if (!settings) throw new Error('The provider is not configured (PROVIDER_APP_ID).');
      const url = new URL(`${settings.authorizationBaseUrl}/${settings.apiVersion}/dialog/oauth`);
      url.searchParams.set('client_id', settings.appId);
      url.searchParams.set('redirect_uri', settings.redirectUri);
      url.searchParams.set('state', state);
      url.searchParams.set('response_type', 'code');
      if (settings.configId !== undefined) url.searchParams.set('config_id', settings.configId);
      return url.toString();
    },

    /**
     * Complete an authorization: exchange the code, exchange for a long-lived token, inspect it,
     * check the required permissions, then seal and store it keyed by portal (replacing any
     * previous connection) and audit `connection.created` in one transaction.
     *
     * Never throws for provider or storage failures; logs no secret.
     *
     * @returns `permission` with the missing capabilities in plain words (nothing stored);
     *   `config` on a redirect URI mismatch or missing provider settings; `provider` for any
     *   other provider failure; `storage` when the database write fails.
     * @see spec §4.4 steps 5–6, §7.2
     */
    async completeAuthorization(input: {
      portalId: number;
      userId: number;
      authorizationCode: string;
      requestId?: string;
    }): Promise<CompleteAuthorizationResult> {
      if (!settings || !client) return { ok: false, reason: 'config' };
      const { portalId } = input;
      let accessToken: string;
      let expiresIn: number | undefined;
      let info;
      try {
        const short = await client.exchangeCode(input.authorizationCode);
        const long = await client.exchangeForLongLived(short.accessToken);
        accessToken = long.accessToken;
        expiresIn = long.expiresIn;
        info = await client.inspectToken(accessToken);
      } catch (err) {
        logProviderError('authorization', err, portalId);
        if (err instanceof ProviderError && err.kind === 'redirect_uri_mismatch')
          return { ok: false, reason: 'config' };
        return { ok: false, reason: 'provider' };
      }
      if (!info.isValid || (info.appId !== undefined && info.appId !== settings.appId)) {
        log.warn({ portalId }, 'authorization: the provider reports the new token invalid');
        return { ok: false, reason: 'provider' };
      }
      const missing = missingPermissions(settings.requiredPermissions, info.scopes);
      if (missing.length > 0) {
        log.info({ portalId, missing: missing.length }, 'authorization: permissions declined');
        return { ok: false, reason: 'permission', missingCapabilities: capabilitiesOf(missing) };
      }
      const assetIds = [...new Set(info.granularScopes.flatMap((g) => g.targetIds))];
      const tokenExpiresAt = info.expiresAt
        ? new Date(info.expiresAt * 1000)
        : expiresIn
          ? new Date(Date.now() + expiresIn * 1000)
          : null;
      try {
        const previous = await store.find(portalId);
        const stored = await db.transaction(async (tx) => {
          const [user] = await tx
            .select({ id: users.id, portalId: users.portalId })
            .from(users)
            .where(eq(users.id, input.userId));
          if (user?.portalId !== portalId) return false;
          await store.save(tx, {
            portalId,
            userId: input.userId,
            accessToken,
            tokenExpiresAt,
            providerUserId: info.userId ?? null,
            assetIds,
            grantedPermissions: info.scopes,
          });
          await recordAuditEvent(tx, {
            portalId,
            actor: { type: 'user', id: String(input.userId) },
            action: 'connection.created',
            reason:
              previous?.status === 'active'
                ? 'connected to the provider, replacing the previous connection'
                : 'connected to the provider',
            requestId: input.requestId ?? null,
          });
          return true;
        });
        if (!stored) {
          log.error({ portalId }, 'authorization: the user does not belong to the portal');
          return { ok: false, reason: 'storage' };
        }
      } catch (err) {
        // Not the error object: a driver error quotes the query's parameters (the ciphertext).
        const code = (err as { code?: unknown; cause?: { code?: unknown } }).cause?.code;
        log.error({ portalId, code }, 'authorization: storing the connection failed');
        return { ok: false, reason: 'storage' };
      }
      stopOutbound(portalId); // calls made with a replaced token must not land afterwards
      log.info({ portalId }, 'connection created');
      return { ok: true };
    },

    /** The portal's connection for `/settings`; never any token material. */
    async connectionSummary(portalId: number): Promise<ConnectionSummary> {
      const row = await store.find(portalId);
      if (row?.status !== 'active')
        return {
          status: 'inactive',
          revokedAt: row?.revokedAt?.toISOString() ?? null,
          revokeReason: row?.revokeReason ?? null,
        };
      return {
        status: 'active',
        connectedAt: row.connectedAt.toISOString(),
        connectedBy: row.connectedBy,
        capabilities: capabilitiesOf(row.grantedPermissions),
        assetIds: row.assetIds,
      };
    },

    /**
     * The one cleanup every revocation path converges on: delete the ciphertext, mark the
     * connection inactive, record `connection.revoked` — one transaction — then stop polling
     * and outbound calls for the portal. Idempotent: an inactive (or absent) connection changes
     * nothing and writes no record; concurrent calls end in exactly one revocation.
     *
     * @returns `{ revoked: true }` when this call revoked it.
     * @see spec §3 (state table), §6
     */
    revokeConnection,

    /**
     * Provider deauthorize callback (verified signed_request): revoke every connection of the
     * provider user (actor provider).
     *
     * @returns how many connections were revoked (0 for an unknown user).
     */
    async deauthorize(providerUserId: string, requestId?: string): Promise<number> {
      let n = 0;
      for (const portalId of await store.portalIdsForProviderUser(providerUserId)) {
        const { revoked } = await revokeConnection(portalId, {
          actor: { type: 'provider', id: providerUserId },
          reason: REVOKE_REASONS.deauthorized,
          requestId,
        });
        if (revoked) n++;
      }
      return n;
    },

    /**
     * Provider data-deletion callback (verified signed_request): revoke (actor provider) and
     * erase the provider-derived data of every connection of the provider user, and record the
     * request with an alphanumeric confirmation code.
     *
     * @returns the confirmation code and the status page URL.
     */
    async requestDataDeletion(
      providerUserId: string,
      requestId?: string,
    ): Promise<{ confirmationCode: string; url: string }> {
      const portalIds = await store.portalIdsForProviderUser(providerUserId);
      const actor: Actor = { type: 'provider', id: providerUserId };
      for (const portalId of portalIds) {
        const { revoked } = await revokeConnection(portalId, {
          actor,
          reason: REVOKE_REASONS.dataDeletion,
          requestId,
          eraseProviderData: true,
        });
        if (!revoked) await store.eraseProviderData(db, portalId);
      }
      const confirmationCode = randomBase62(16);
      const summary =
        portalIds.length === 0
          ? 'Portico held no data from your provider account.'
          : `Deleted the stored access token and the provider account details (your provider user id, the ids of your business assets and the permissions you granted) of ${portalIds.length} connection(s).`;
      await db.transaction(async (tx) => {
        const now = new Date();
        await tx.insert(dataDeletionRequests).values({
          confirmationCode,
          providerUserId,
          connectionsDeleted: portalIds.length,
          summary,
          requestedAt: now,
          completedAt: now,
        });
        for (const portalId of portalIds)
          await recordAuditEvent(tx, {
            portalId,
            actor,
            action: 'data_deletion.requested',
            reason: 'provider-derived data deleted',
            requestId: requestId ?? null,
          });
      });
      return {
        confirmationCode,
        url: `${config.APP_BASE_URL}/data-deletion?code=${confirmationCode}`,
      };
    },

    /**
     * Verify a provider `signed_request` with the app secret (deauthorize and data-deletion
     * callbacks). An unconfigured provider verifies nothing.
     */
    verifySignedRequest(signedRequest: string): SignedRequestResult {
      if (!settings) return { ok: false, reason: 'signature' };
      return verifySignedRequest(signedRequest, settings.appSecret, {
        nowS: Math.floor(Date.now() / 1000),
        maxAgeS: config.PROVIDER_SIGNED_REQUEST_MAX_AGE_S,
      });
    },

    /** The status of a data deletion request, or null for an unknown code. */
    async dataDeletionStatus(confirmationCode: string): Promise<DataDeletionStatus | null> {
      const [row] = await db
        .select()
        .from(dataDeletionRequests)
        .where(eq(dataDeletionRequests.confirmationCode, confirmationCode));
      if (!row) return null;
      return {
        confirmationCode: row.confirmationCode,
        requestedAt: row.requestedAt.toISOString(),
        completedAt: row.completedAt?.toISOString() ?? null,
        connectionsDeleted: row.connectionsDeleted,
        summary: row.summary,
      };
    },

    /**
     * An outbound Graph read for the portal (`GET /{version}/me`): the provider account's id
     * and name. Refused before any network I/O for an inactive connection; error 190 revokes.
     *
     * @throws ConnectionInactiveError, ProviderError
     */
    async fetchProviderProfile(portalId: number): Promise<{ id: string; name: string }> {
      const body = await withProvider(portalId, 'profile read', (c, token, signal) =>
        c.graphGet(token, 'me?fields=id,name', signal),
      );
      return {
        id: typeof body.id === 'string' ? body.id : '',
        name: typeof body.name === 'string' ? body.name : '',
      };
    },

    /** How many outbound provider calls are in flight for the portal (0 after revocation). */
    inflightCalls(portalId: number): number {
      return inflight.get(portalId)?.size ?? 0;
    },

    /**
     * One health-check cycle: lease the due active connections (one instance at a time per
     * connection), inspect each token, refresh near expiry, revoke the dead.
     *
     * @returns the portal ids this instance checked.
     */
    checkConnections: healthChecker.runOnce,

    /**
     * Start the background health checker (main.ts): a cycle every min(interval, 60 s). No-op
     * when the interval is 0 or the provider is not configured.
     */
    startHealthChecker: healthChecker.start,

    /** Stop the health checker and abort every in-flight provider call; waits for the cycle. */
    stopHealthChecker: healthChecker.stop,

    /**
     * Re-encrypt every stored token under the active key and audit `encryption_key.rotated`.
     *
     * @returns how many tokens were re-encrypted, and the active key id.
     */
    async rotateKeys(actor: Actor): Promise<{ reencrypted: number; activeKeyId: string }> {
      const reencrypted = await store.resealAll();
      await recordAuditEvent(db, {
        portalId: null,
        actor,
        action: 'encryption_key.rotated',
        reason: `re-encrypted ${reencrypted} provider token(s) under key ${keyring.activeKeyId}`,
      });
      return { reencrypted, activeKeyId: keyring.activeKeyId };
    },
  };
  return service;
}
