/**
 * Completing an authorization, once its response is validated: code exchange → long-lived
 * exchange → inspection (`debug_token`) → permission check → seal and store the token keyed by
 * portal (replacing any previous connection) with the `connection.created` audit record, in one
 * transaction → onboarding (subscribe the app to each WABA, register each number).
 *
 * Invariants: the authorization code and the tokens go nowhere but the provider client and the
 * keyring (not logged, not returned); a declined permission stores nothing; the user must
 * belong to the portal the connection is stored for.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.1.3 (access token request)
 * @see https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived
 * @see docs/architecture.md "An authorization code, from the callback to the stored ciphertext"
 */
import { isActiveUserOfPortal } from '../../accounts/accounts-repository.ts';
import { recordAuditEvent } from '../../audit/audit-log.ts';
import type { ProviderSettings } from '../../config.ts';
import type { Database } from '../../db/client.ts';
import { databaseErrorCode } from '../../platform/database-errors.ts';
import type { Logger } from '../../platform/logger.ts';
import type { CompleteAuthorizationResult } from './authorization-outcome.ts';
import type { ValidatedAuthorizationCode } from './authorization-response.ts';
import type { ConnectionsStore } from '../connections-store.ts';
import type { InflightCalls } from '../inflight-calls.ts';
import { capabilitiesOf, missingPermissions } from './permissions.ts';
import { tokenExpiry, type ProviderClient, type TokenInspection } from '../provider-client.ts';
import { logProviderFailure, ProviderError } from '../provider-error.ts';
import type { GrantRevoker } from '../revocation/provider-grant-revocation.ts';
import { isGrantShared } from '../revocation/shared-grants.ts';
import { assetsByPermission } from '../cloud-api/waba-routing.ts';

export interface CompleteAuthorizationInput {
  portalId: number;
  userId: number;
  /** From `validateAuthorizationResponse`: only a code whose state matched gets here. */
  authorizationCode: ValidatedAuthorizationCode;
  /** The PKCE code verifier kept for the state of this response; absent without PKCE. */
  codeVerifier?: string | undefined;
  requestId?: string;
}

export interface AuthorizationCompleterDeps {
  /** Null when the provider is not configured (every attempt ends in `config`). */
  provider: { settings: ProviderSettings; client: ProviderClient } | null;
  db: Database;
  store: ConnectionsStore;
  inflight: InflightCalls;
  /** Revokes at the provider a grant Portico refuses (a declined permission). */
  grants: GrantRevoker;
  log: Logger;
  /** Other features' steps of a connection (webhooks'), run in its transaction. */
  connectedSteps?: readonly ConnectedStep[];
  /**
   * The onboarding of the new connection (subscribe, register; onboarding/number-onboarding.ts),
   * run once it is stored. Never throws: its failures are kept per number.
   */
  onboard?: (portalId: number) => Promise<unknown>;
}

/**
 * One step another feature adds to a new connection (given at composition in services.ts;
 * partner/ imports no other feature): it runs inside the transaction that stores the
 * connection, so what it writes (webhooks: the `connection.connected` event) commits with it.
 */
export type ConnectedStep = (
  tx: Parameters<Parameters<Database['transaction']>[0]>[0],
  connection: { portalId: number; connectedAt: Date },
) => Promise<void>;

/**
 * Build `completeAuthorization`. It never throws for provider or storage failures and logs no
 * secret.
 *
 * @returns a function answering `permission` with the missing capabilities in plain words
 *   (nothing stored); `config` on a redirect URI mismatch or missing provider settings;
 *   `provider` for any other provider failure; `storage` when the database write fails.
 */
export function createAuthorizationCompleter(deps: AuthorizationCompleterDeps) {
  const { db, store, inflight, log } = deps;
  return async function completeAuthorization(
    input: CompleteAuthorizationInput,
  ): Promise<CompleteAuthorizationResult> {
    if (!deps.provider) return { ok: false, reason: 'config' };
    const { settings, client } = deps.provider;
    const { portalId } = input;
    let grant: { accessToken: string; expiresAt: Date | null; info: TokenInspection };
    try {
      const short = await client.exchangeCode(input.authorizationCode, input.codeVerifier);
      const long = await client.exchangeForLongLived(short.accessToken);
      const info = await client.inspectToken(long.accessToken);
      grant = { accessToken: long.accessToken, expiresAt: tokenExpiry(info, long.expiresIn), info };
    } catch (err) {
      logProviderFailure(log, 'authorization', err, portalId);
      if (err instanceof ProviderError && err.kind === 'redirect_uri_mismatch')
        return { ok: false, reason: 'config' };
      return { ok: false, reason: 'provider' };
    }
    const { info } = grant;
    if (!info.isValid || (info.appId !== undefined && info.appId !== settings.appId)) {
      log.warn({ portalId }, 'authorization: the provider reports the new token invalid');
      return { ok: false, reason: 'provider' };
    }
    const missing = missingPermissions(settings.requiredPermissions, info.scopes);
    if (missing.length > 0) {
      log.info({ portalId, missing: missing.length }, 'authorization: permissions declined');
      await revokeRefusedGrant(deps, portalId, grant.accessToken, info.userId ?? null);
      const missingCapabilities = capabilitiesOf(missing);
      await recordDeclined(deps, input, missingCapabilities);
      return { ok: false, reason: 'permission', missingCapabilities };
    }
    try {
      const previous = await store.find(portalId);
      const stored = await db.transaction(async (tx) => {
        if (!(await isActiveUserOfPortal(tx, input.userId, portalId))) return false;
        await store.save(tx, {
          portalId,
          userId: input.userId,
          accessToken: grant.accessToken,
          tokenExpiresAt: grant.expiresAt,
          providerUserId: info.userId ?? null,
          assetIds: [...new Set(info.granularScopes.flatMap((g) => g.targetIds))],
          grantedAssets: assetsByPermission(info.granularScopes),
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
        const connectedAt = new Date();
        for (const step of deps.connectedSteps ?? []) await step(tx, { portalId, connectedAt });
        return true;
      });
      if (!stored) {
        log.error({ portalId }, 'authorization: the user does not belong to the portal');
        return { ok: false, reason: 'storage' };
      }
    } catch (err) {
      // Not the error object: a driver error quotes the query's parameters (the ciphertext).
      log.error(
        { portalId, code: databaseErrorCode(err) },
        'authorization: storing the connection failed',
      );
      return { ok: false, reason: 'storage' };
    }
    inflight.abortPortal(portalId); // calls made with a replaced token must not land afterwards
    log.info({ portalId }, 'connection created');
    // The business cannot send or receive until its WABAs are subscribed and numbers registered.
    await deps.onboard?.(portalId);
    return { ok: true };
  };
}

/**
 * A grant Portico refuses is revoked at the provider (in the background), unless an active
 * connection — of this portal or another — belongs to the same person: the provider's grant
 * is per app and person, and revoking it would end that connection too. A failure to check
 * only skips the revocation (logged).
 */
async function revokeRefusedGrant(
  deps: Pick<AuthorizationCompleterDeps, 'db' | 'grants' | 'log'>,
  portalId: number,
  accessToken: string,
  providerUserId: string | null,
): Promise<void> {
  try {
    if (providerUserId && (await isGrantShared(deps.db, providerUserId, null))) {
      deps.log.info({ portalId }, 'refused grant kept at the provider: a connection uses it');
      return;
    }
  } catch (err) {
    deps.log.warn({ portalId, code: databaseErrorCode(err) }, 'refused grant: check failed');
    return;
  }
  // Awaited: the person may grant again at once, and a revocation landing after that would end
  // the new grant.
  await deps.grants.revoke({ portalId, accessToken, providerUserId });
}

/**
 * The `connection.declined` audit record of an attempt whose permissions were not all granted
 * (nothing was stored). A failure to write it is logged, not thrown: the person still gets the
 * page that says what was missing.
 */
async function recordDeclined(
  deps: Pick<AuthorizationCompleterDeps, 'db' | 'log'>,
  input: CompleteAuthorizationInput,
  missingCapabilities: readonly string[],
): Promise<void> {
  try {
    await recordAuditEvent(deps.db, {
      portalId: input.portalId,
      actor: { type: 'user', id: String(input.userId) },
      action: 'connection.declined',
      reason: `not connected: the access to ${missingCapabilities.join('; ')} was not given`,
      requestId: input.requestId ?? null,
    });
  } catch (err) {
    deps.log.warn(
      { portalId: input.portalId, code: databaseErrorCode(err) },
      'could not record the declined authorization',
    );
  }
}

/** An authorization attempt the signed-in user cancelled at the provider. */
export interface CancelledAttempt {
  portalId: number;
  userId: number;
  requestId?: string | undefined;
}

/**
 * Record an authorization the signed-in user cancelled at the provider (its state matched the
 * session's), as `connection.cancelled`: the audit log shows attempts that connected nothing.
 * Declined permissions are recorded by `completeAuthorization` (`connection.declined`).
 */
export async function recordCancelledAttempt(
  db: Pick<Database, 'insert'>,
  input: CancelledAttempt,
): Promise<void> {
  await recordAuditEvent(db, {
    portalId: input.portalId,
    actor: { type: 'user', id: String(input.userId) },
    action: 'connection.cancelled',
    reason: 'cancelled at the provider; nothing was connected',
    requestId: input.requestId ?? null,
  });
}
