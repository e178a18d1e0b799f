/**
 * The partner connection service: the composition of this folder's modules into the one object
 * the routes, the CLI and `main.ts` use. Each concern lives in its own module:
 *
 * - `authorization-response.ts` validates the callback; `complete-authorization.ts` exchanges,
 *   inspects, checks permissions and stores;
 * - `revocation.ts` is the one cleanup every revocation path runs;
 * - `outbound-calls.ts` is the path of every call made with a portal's token;
 * - `data-deletion.ts` answers the provider's deauthorize and data-deletion callbacks;
 * - `health-checker.ts` polls tokens (revocation path 3).
 *
 * Only this folder ever sees a decrypted provider token.
 *
 * @see docs/partner-connection.md
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Actor } from '../audit/audit-log.ts';
import { providerSettings, type Config } from '../config.ts';
import type { Database } from '../db/client.ts';
import type { Keyring } from '../platform/keyring.ts';
import type { Logger } from '../platform/logger.ts';
import {
  authorizationRequest,
  authorizationRequestUrl,
  type AuthorizationRequest,
} from './oauth/authorization-request.ts';
import {
  createAuthorizationCompleter,
  recordCancelledAttempt,
  type CancelledAttempt,
  type ConnectedStep,
} from './oauth/complete-authorization.ts';
import { summarizeConnection, type ConnectionSummary } from './connection-summary.ts';
import { createConnectionsStore } from './connections-store.ts';
import { createProviderPersonCallbacks } from './callbacks/data-deletion.ts';
import { createHealthChecker } from './health/health-checker.ts';
import { InflightCalls } from './inflight-calls.ts';
import { checkKeys, rotateKeys } from './key-rotation.ts';
import { createOutboundCalls } from './outbound-calls.ts';
import { createProviderClient } from './provider-client.ts';
import { providerDisplayName } from './provider-name.ts';
import { createGrantRevoker } from './revocation/provider-grant-revocation.ts';
import { createProviderWebhooks } from './cloud-api/provider-webhooks.ts';
import { createRevokeConnection, type RevocationStep } from './revocation/revocation.ts';
import { verifySignedRequest, type SignedRequestResult } from './callbacks/signed-request.ts';
import { createWabaRouting } from './cloud-api/waba-routing.ts';
import { createNumberOnboarding } from './onboarding/number-onboarding.ts';

export type PartnerService = ReturnType<typeof createPartnerService>;

interface PartnerServiceDeps {
  config: Config;
  db: Database;
  keyring: Keyring;
  logger: Logger;
  /** Identifies this instance in health-check leases (default host:pid:random). */
  instanceId?: string;
  /** Waits between attempts to revoke a grant at the provider (tests shorten them), in ms. */
  grantRevocationRetryDelaysMs?: readonly number[];
  /** Other features' steps of the revocation cleanup (messaging's), run in its transaction. */
  revocationSteps?: readonly RevocationStep[];
  /** Other features' steps of a new connection (webhooks'), run in its transaction. */
  connectedSteps?: readonly ConnectedStep[];
}

/** The modules of this folder, wired once over the storage and the provider settings. */
function createInternals(deps: PartnerServiceDeps) {
  const { config, db, keyring } = deps;
  const log = deps.logger.child({ component: 'partner' });
  const settings = providerSettings(config);
  const provider = settings ? { settings, client: createProviderClient(settings) } : null;
  const store = createConnectionsStore({ db, keyring });
  const inflight = new InflightCalls();
  const grants = createGrantRevoker({
    client: provider?.client ?? null,
    log,
    ...(deps.grantRevocationRetryDelaysMs && { retryDelaysMs: deps.grantRevocationRetryDelaysMs }),
  });
  const revokeConnection = createRevokeConnection({
    db,
    store,
    inflight,
    grants,
    log,
    sendsTimeoutMs: config.PROVIDER_TIMEOUT_MS,
    ...(deps.revocationSteps && { steps: deps.revocationSteps }),
  });
  const { withProvider, withCloudApi } = createOutboundCalls({
    client: provider?.client ?? null,
    store,
    inflight,
    revokeConnection,
  });
  const onboarding = createNumberOnboarding({
    db,
    keyring,
    withProvider,
    appId: settings?.appId ?? null,
    log,
  });
  const healthChecker = createHealthChecker({
    config,
    db,
    store,
    enabled: provider !== null,
    instanceId: deps.instanceId ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    log,
    withProvider,
    revokeConnection,
    inflight,
  });
  return {
    log,
    settings,
    provider,
    store,
    inflight,
    grants,
    revokeConnection,
    withProvider,
    withCloudApi,
    healthChecker,
    onboarding,
  };
}

/** The WhatsApp Cloud API side of the service: WABA routing, webhooks, outbound calls. */
function whatsAppParts(db: Database, internals: ReturnType<typeof createInternals>) {
  const { settings, revokeConnection, withCloudApi, log, onboarding } = internals;
  const routing = createWabaRouting(db);
  return {
    /**
     * Onboard the portal's active connection: subscribe Portico's app to each WABA and register
     * each number not registered yet (onboarding/number-onboarding.ts). Never throws.
     */
    onboardConnection: (portalId: number) => onboarding.onboard(portalId),
    /** Each number's onboarding state of the portal, by phone number id (no provider call). */
    onboardingStates: (portalId: number) => onboarding.states(portalId),
    /**
     * `account_update` with `PARTNER_ADDED`: the business shared the WABA with Portico's app.
     * Onboards that WABA of every active connection covering it, in the background (the
     * webhook is answered at once); a connection not made yet is onboarded when it is.
     *
     * @returns the portal ids whose onboarding started.
     */
    async partnerAdded(wabaId: string): Promise<number[]> {
      const portals = await routing.activePortalsOfWaba(wabaId);
      for (const portalId of portals) void onboarding.onboard(portalId, wabaId);
      if (portals.length > 0) log.info({ portals: portals.length }, 'PARTNER_ADDED: onboarding');
      return portals;
    },
    /**
     * The WABA ids of the portal's active connection (assets granted with
     * `whatsapp_business_messaging` or `_management`); [] when not connected.
     */
    wabaIdsOf: routing.wabaIdsOf,
    /** The portal whose active connection covers the WABA, or null (webhook routing). */
    portalOfWaba: routing.portalOfWaba,
    ...createProviderWebhooks({ settings, routing, revokeConnection, log }),
    /**
     * Run `fn` with the Cloud API calls made for the portal's token, never the token (the
     * service hands out no token; outbound-calls.ts). @throws ConnectionInactiveError,
     * ProviderError
     */
    withCloudApi,
  };
}

export function createPartnerService(deps: PartnerServiceDeps) {
  const { config, db, keyring } = deps;
  const internals = createInternals(deps);
  const { log, settings, provider, store, inflight, grants } = internals;
  const { revokeConnection, withProvider, healthChecker } = internals;
  return {
    ...whatsAppParts(db, internals),
    ...createProviderPersonCallbacks({
      db,
      store,
      revokeConnection,
      appBaseUrl: config.APP_BASE_URL,
      signedRequestMaxAgeS: config.PROVIDER_SIGNED_REQUEST_MAX_AGE_S,
    }),
    completeAuthorization: createAuthorizationCompleter({
      provider,
      db,
      store,
      inflight,
      grants,
      log,
      ...(deps.connectedSteps && { connectedSteps: deps.connectedSteps }),
      onboard: (portalId) => internals.onboarding.onboard(portalId),
    }),
    revokeConnection,

    /** Whether the provider settings are complete (app id and secret known). */
    configured: provider !== null,

    /**
     * The provider's authorization dialog URL for `state`.
     *
     * @throws Error when the provider is not configured.
     */
    authorizationUrl(state: string): string {
      if (!settings) throw new Error('The provider is not configured (PROVIDER_APP_ID).');
      return authorizationRequestUrl(settings, state);
    },

    /** {@link authorizationRequest} for `state`; throws when the provider is not configured. */
    authorizationRequest(state: string): AuthorizationRequest {
      if (!settings) throw new Error('The provider is not configured (PROVIDER_APP_ID).');
      return authorizationRequest(settings, state);
    },

    /** The provider as the pages name it (PROVIDER_DISPLAY_NAME, else Meta / Sandbox provider). */
    providerName: providerDisplayName(config),

    /** The portal's connection for `/settings`; never any token material. */
    connectionSummary: async (portalId: number): Promise<ConnectionSummary> =>
      summarizeConnection(await store.find(portalId), settings?.requiredPermissions ?? []),

    /** Audit `connection.cancelled` for an attempt cancelled at the provider (see there). */
    recordCancelledAttempt: (input: CancelledAttempt) => recordCancelledAttempt(db, input),

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
    inflightCalls: (portalId: number): number => inflight.count(portalId),

    /**
     * One health-check cycle: lease the due active connections (one instance at a time per
     * connection), inspect each token, refresh near expiry, revoke the dead.
     *
     * @returns the portal ids this instance checked.
     */
    checkConnections: healthChecker.runOnce,
    /** The health checker's background task, null when it is off (services.ts registers it). */
    healthCheckTask: healthChecker.task,
    /**
     * Abort every in-flight provider call of the health checker and give up the pending retries
     * of grant revocations at the provider (shutdown).
     */
    stopHealthChecker: async (): Promise<void> => {
      healthChecker.abort();
      await grants.stop();
    },

    /** Wait until every started grant revocation at the provider has ended (tests, shutdown). */
    grantRevocationsSettled: (): Promise<void> => grants.settled(),

    /** `keys rotate`: see key-rotation.ts `rotateKeys`. */
    rotateKeys: (actor: Actor, options?: Parameters<typeof rotateKeys>[3]) =>
      rotateKeys(db, keyring, actor, options),

    /** `keys check`: see key-rotation.ts `checkKeys`. */
    checkKeys: () => checkKeys(db, keyring),
  };
}
