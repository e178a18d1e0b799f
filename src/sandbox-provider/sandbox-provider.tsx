/**
 * The sandbox provider: an emulator of the provider (Meta's Graph platform, Facebook Login for
 * Business) for development and tests, speaking its documented wire format so the production
 * code path cannot tell the difference. A separate Fastify app on its own host and port, so
 * that in a browser Portico (`localhost`) and the provider (`127.0.0.1`) are different sites.
 * Never started in production (main.ts).
 *
 * This file only assembles the server: one shared `SandboxState`, the call log, and the
 * surfaces of `SURFACES`, each a Fastify plugin in a file of its own:
 *
 * - dialog.tsx          `GET|POST /{version}/dialog/oauth`    the authorization dialog
 * - token-endpoint.ts   `POST /{version}/oauth/access_token`  code and long-lived exchange
 * - debug-token.ts      `GET|POST [/{version}]/debug_token`   token inspection
 * - graph-objects.ts    `GET /{version}/me`                   Graph nodes read with a token
 * - permissions-revoke.ts `DELETE /{version}/{user-id}/permissions`  the app revokes its grant
 * - person.tsx          `GET /sandbox/apps`, `POST /sandbox/grants/{action}`  the person's side
 * - cloud-phone-numbers.ts `GET /{version}/{waba-id}/phone_numbers`     WhatsApp Cloud API numbers
 * - cloud-templates.ts  `GET|POST|DELETE /{version}/{waba-id}/message_templates`  templates
 * - cloud-onboarding.ts `POST|GET|DELETE /{version}/{waba-id}/subscribed_apps`,
 *   `POST /{version}/{phone-number-id}/register|deregister`  onboarding after Embedded Signup
 * - cloud-messages.ts   `POST /{version}/{phone-number-id}/messages`     sends + status webhooks
 * - sandbox-phone.tsx   `/sandbox/phone`, `POST /sandbox/inbound`, `GET /sandbox/stats`  the
 *   people's phones (what they send are inbound webhooks) and send counts
 * - signals-page.tsx    `POST /sandbox/signals/{number,template,account}`  account signals
 * - cloud-media.ts      `GET /{version}/{media-id}` and its download URL  media people sent
 *   (read receipts, `status: "read"`, are on the messages path: cloud-read.ts)
 *
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
 * @see https://developers.facebook.com/docs/facebook-login/facebook-login-for-business
 */
import { isTyping } from './cloud-read.ts';
import type { AddressInfo } from 'node:net';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { sharedSchemaCompilers } from '../platform/schema-compilers.ts';
import { deleteData, removeApp } from './app-callbacks.ts';
import { logCalls } from './call-log.ts';
import { debugTokenRoutes } from './debug-token.ts';
import { dialogRoutes } from './dialog.tsx';
import { graphObjectRoutes } from './graph-objects.ts';
import { permissionsRevokeRoutes } from './permissions-revoke.ts';
import { personRoutes } from './person.tsx';
import { cloudMediaUploadRoutes } from './cloud-media-upload.ts';
import { cloudMediaRoutes } from './cloud-media.ts';
import { cloudMessageRoutes } from './cloud-messages.ts';
import { cloudOnboardingRoutes, REGISTRATION_LIMIT } from './cloud-onboarding.ts';
import { cloudPhoneNumberRoutes } from './cloud-phone-numbers.ts';
import {
  writeIn,
  writeInBatch,
  type BatchOutcome,
  type InboundInput,
  type InboundOutcome,
} from './cloud-inbound.ts';
import type { CloudOptions, PhoneMessage, SandboxTemplate } from './cloud-state.ts';
import { cloudTemplateRoutes } from './cloud-templates.ts';
import { sandboxPhoneRoutes } from './sandbox-phone.tsx';
import { signalRoutes } from './signals-page.tsx';
import { standingRoutes } from './standing-page.tsx';
import {
  accountAlert,
  businessCapability,
  changeTemplateCategory,
  phoneNumberName,
  userPreference,
} from './cloud-standing.ts';
import { accountUpdate, changeNumber, changeTemplate } from './cloud-signals.ts';
import type { SandboxMedium } from './cloud-media-store.ts';
import { graphError, type GraphFault } from './graph-errors.ts';
import { SandboxState, type SandboxAppConfig, type SandboxCall } from './sandbox-state.ts';
import { persistTo, restoreSnapshot, type SandboxSnapshot } from './sandbox-store.ts';
import type { SandboxSurface } from './surface.ts';
import { tokenEndpointRoutes } from './token-endpoint.ts';

export type { SandboxAppConfig, SandboxCall } from './sandbox-state.ts';
export type { CloudOptions, PhoneMessage } from './cloud-state.ts';

export interface SandboxProviderOptions {
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** TCP port; 0 picks a free one (tests). */
  port?: number;
  apps: SandboxAppConfig[];
  /** The person the dialog signs in as by default (Graph-like digits). */
  defaultUserId?: string;
  /** Delays and rates of the WhatsApp Cloud API emulation (tests shorten the delays). */
  cloud?: Partial<CloudOptions>;
  /** A logger for start/stop lines only; requests are not logged (their queries carry state). */
  logger?: FastifyBaseLogger;
  /**
   * Keep the state in this file (the development sandbox: sandbox-store.ts) and start from
   * `saved`, what it held. Without it the sandbox lives in memory only (tests).
   */
  persistence?: { file: string; saved: SandboxSnapshot | undefined };
}

export interface SandboxProvider {
  /** `http://host:port`, the base of both the dialog and the Graph API. */
  url: string;
  close(): Promise<void>;
  /** Every request received, in order (method, path+query, whose token). */
  calls: SandboxCall[];
  /** Move the sandbox clock forward by `ms` milliseconds (expire codes and tokens in tests). */
  advanceTime(ms: number): void;
  /**
   * What the dialog does when a person clicks Allow: record the grant and return a single-use
   * authorization code for `redirectUri` (tests that do not drive a browser).
   */
  authorize(input: {
    appId: string;
    redirectUri: string;
    userId?: string;
    permissions?: string[];
    /** The S256 PKCE challenge of the dialog request; the exchange then needs its verifier. */
    codeChallenge?: string | undefined;
  }): string;
  /** "Revoke the token": later debug_token and Graph calls with it answer error 190. */
  revokeTokens(appId: string, userId: string): number;
  /** "Remove the app": drop the grant, revoke its tokens, POST a signed deauthorize request. */
  removeApp(appId: string, userId: string): Promise<{ status: number }>;
  /** "Delete my data": POST a signed data-deletion request; the app's JSON answer. */
  deleteData(appId: string, userId: string): Promise<{ status: number; body: unknown }>;
  /** A correctly signed `signed_request` for a person of an app (tests). */
  signedRequestFor(appId: string, userId: string): string;
  /** Whether a person's grant of an app is still in place (revoked by "remove the app" or by
   * the app's `DELETE /{user-id}/permissions`). */
  hasGrant(appId: string, userId: string): boolean;
  /** The live (unrevoked) tokens issued to a person of an app (tests scan storage for them). */
  tokensOf(appId: string, userId: string): string[];
  /** Change an app's registration (e.g. its callback URLs once the app's port is known). */
  configureApp(appId: string, patch: Partial<Omit<SandboxAppConfig, 'appId'>>): void;
  /** The WhatsApp Cloud API emulation, seen from the people's side. */
  cloud: {
    /** How many sends carried this `biz_opaque_callback_data`. */
    sendsOf(bizOpaqueCallbackData: string): number;
    /** What `GET /sandbox/stats` answers. */
    stats(): ReturnType<SandboxState['cloud']['stats']>;
    /** Every message of the sandbox phones, in order (received and written in). */
    messages: PhoneMessage[];
    /** Each webhook delivery attempt: app, field, the app's HTTP status. */
    deliveries: SandboxState['cloud']['deliveries'];
    /** A person writes in (as `POST /sandbox/inbound`). */
    writeIn(input: InboundInput): Promise<InboundOutcome>;
    /** Several messages to one number in one webhook (benchmarks: batches of 100). */
    writeInBatch(
      phoneNumberId: string,
      inputs: Omit<InboundInput, 'phoneNumberId'>[],
    ): Promise<BatchOutcome>;
    /** A WABA's templates, live (a test may add one in any status or category). */
    templatesOf(wabaId: string): SandboxTemplate[];
    /**
     * The next message send is answered `status` with the Graph error `fault` instead of being
     * sent (nothing counted or stored); several calls queue in order. E.g. a 500 with code 131000.
     *
     * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
     */
    failNextSend(status: number, fault: GraphFault): void;
    /** Change the delays and the rate. */
    configure(patch: Partial<CloudOptions>): void;
    /** A medium people sent, by media id (undefined once deleted or evicted). */
    medium(id: string): SandboxMedium | undefined;
    /** The provider forgets a medium: `GET /{media-id}` then answers code 100. */
    deleteMedium(id: string): boolean;
    /** Whether the person `waId` sees the business number typing now (cloud-read.ts). */
    isTyping(phoneNumberId: string, waId: string): boolean;
    /** As the apps page's buttons: a number's quality rating or tier (sends the webhook). */
    changeNumber: OmitFirst<typeof changeNumber>;
    /** As the apps page's buttons: a template's quality, pause or resume (sends the webhook). */
    changeTemplate: OmitFirst<typeof changeTemplate>;
    /** As the apps page's buttons: an `account_update` webhook (violation, restriction,
     * `PARTNER_ADDED`). */
    accountUpdate: OmitFirst<typeof accountUpdate>;
    /** As the apps page's forms: `template_category_update` (done, or a day ahead). */
    changeTemplateCategory: OmitFirst<typeof changeTemplateCategory>;
    /** As the apps page's forms: a person stops or resumes marketing (`user_preferences`). */
    userPreference: OmitFirst<typeof userPreference>;
    /** As the apps page's forms: an `account_alerts` alert. */
    accountAlert: OmitFirst<typeof accountAlert>;
    /** As the apps page's forms: the portfolio's limit (`business_capability_update`). */
    businessCapability: OmitFirst<typeof businessCapability>;
    /** As the apps page's forms: a display name decision (`phone_number_name_update`). */
    phoneNumberName: OmitFirst<typeof phoneNumberName>;
    /** Whether the number is registered for the Cloud API (`POST /{id}/register`). */
    isRegistered(phoneNumberId: string): boolean;
    /** The app ids subscribed to the WABA's webhooks (`POST /{waba-id}/subscribed_apps`). */
    subscribedApps(wabaId: string): string[];
    /** Use up the number's registration requests of the 72-hour window (the next is 133016). */
    exhaustRegistrations(phoneNumberId: string): void;
  };
}

/** A function's type without its first parameter (the state). */
type OmitFirst<F> = F extends (state: SandboxState, ...rest: infer A) => infer R
  ? (...rest: A) => R
  : never;

/**
 * The provider surfaces, registered in this order. A new surface (e.g. the WhatsApp Cloud API's
 * phone numbers, message templates and messages) is a plugin in its own file, added here.
 */
const SURFACES: readonly SandboxSurface[] = [
  dialogRoutes,
  tokenEndpointRoutes,
  debugTokenRoutes,
  graphObjectRoutes,
  permissionsRevokeRoutes,
  personRoutes,
  cloudPhoneNumberRoutes,
  cloudOnboardingRoutes,
  cloudTemplateRoutes,
  cloudMessageRoutes,
  sandboxPhoneRoutes,
  signalRoutes,
  standingRoutes,
  cloudMediaUploadRoutes,
  // Last: `GET /{version}/{media-id}` is the most general Graph path.
  cloudMediaRoutes,
];

const DEFAULT_USER_ID = '100012345678';

/**
 * Start a sandbox provider listening on `options.host` (default 127.0.0.1) and `options.port`
 * (default 0: a free port).
 *
 * @returns its base URL, a `close()`, and test hooks (call log, clock, direct actions).
 * @throws when the port cannot be bound (e.g. `EADDRINUSE`).
 */
export async function startSandboxProvider(
  options: SandboxProviderOptions,
): Promise<SandboxProvider> {
  const state = new SandboxState(options.apps, options.cloud);
  const { persistence } = options;
  if (persistence?.saved) restoreSnapshot(state, persistence.saved);
  const store =
    persistence &&
    persistTo(persistence.file, state, (err) =>
      options.logger?.warn({ err }, 'the sandbox provider could not save its state'),
    );
  const defaultUserId = options.defaultUserId ?? DEFAULT_USER_ID;
  const app = Fastify({
    // No request logging: dialog URLs carry `state`, exchange bodies carry codes and secrets.
    logger: false,
    bodyLimit: 64 * 1024,
    schemaController: { compilersFactory: sharedSchemaCompilers },
  });
  await app.register(formbody);
  // Before the surfaces: a hook only applies to plugins registered after it.
  const noteCall = logCalls(app, state.calls);
  // Any request may have changed the state: it is written a moment later.
  if (store)
    app.addHook('onResponse', (_request, _reply, done) => {
      store.changed();
      done();
    });
  for (const surface of SURFACES) await app.register(surface, { state, defaultUserId, noteCall });
  // Browsers ask for an icon on every page of the sandbox: there is none (not an error).
  app.get('/favicon.ico', (_request, reply) => reply.code(204).send());
  // A path no surface serves gets Graph's error envelope, as Graph answers one.
  app.setNotFoundHandler((request, reply) =>
    graphError(reply, 400, {
      code: 100,
      message: `Unknown path components: ${new URL(request.url, 'http://sandbox').pathname}`,
    }),
  );

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  options.logger?.info({ url }, 'sandbox provider listening');
  return {
    url,
    close: async () => {
      state.cloud.close(); // pending status webhooks end first
      await app.close();
      store?.close();
    },
    ...testHooks(state, defaultUserId),
  };
}

/** The direct actions of `SandboxProvider`, on the same state the surfaces serve. */
function testHooks(
  state: SandboxState,
  defaultUserId: string,
): Omit<SandboxProvider, 'url' | 'close'> {
  return {
    calls: state.calls,
    advanceTime: (ms) => state.advanceTime(ms),
    authorize: (input) =>
      state.issueCode({
        appId: input.appId,
        redirectUri: input.redirectUri,
        userId: input.userId ?? defaultUserId,
        permissions: input.permissions ?? state.permissionsOf(input.appId),
        challenge:
          input.codeChallenge === undefined
            ? undefined
            : { codeChallenge: input.codeChallenge, codeChallengeMethod: 'S256' },
      }),
    revokeTokens: (appId, userId) => state.revokeTokens(appId, userId),
    removeApp: (appId, userId) => removeApp(state, appId, userId),
    deleteData: (appId, userId) => deleteData(state, appId, userId),
    signedRequestFor: (appId, userId) => state.signedRequestFor(appId, userId),
    hasGrant: (appId, userId) => state.grant(appId, userId) !== undefined,
    tokensOf: (appId, userId) =>
      [...state.tokens.entries()]
        .filter(([, r]) => r.appId === appId && r.userId === userId && !r.revoked)
        .map(([token]) => token),
    configureApp: (appId, patch) => {
      const current = state.apps.get(appId);
      if (!current) throw new Error(`unknown sandbox app ${appId}`);
      state.apps.set(appId, { ...current, ...patch });
    },
    cloud: {
      sendsOf: (data) => state.cloud.sendsByCallbackData.get(data) ?? 0,
      stats: () => state.cloud.stats(),
      messages: state.cloud.messages,
      deliveries: state.cloud.deliveries,
      writeIn: (input) => writeIn(state, input),
      writeInBatch: (phoneNumberId, inputs) => writeInBatch(state, phoneNumberId, inputs),
      templatesOf: (wabaId) => state.cloud.templatesOf(wabaId),
      failNextSend: (status, fault) => {
        state.cloud.sendFaults.push({ status, fault });
      },
      configure: (patch) => {
        state.cloud.options = { ...state.cloud.options, ...patch };
      },
      medium: (id) => state.cloud.media.get(id),
      deleteMedium: (id) => state.cloud.media.delete(id),
      isTyping: (phoneNumberId, waId) => isTyping(state, phoneNumberId, waId),
      changeNumber: (...args) => changeNumber(state, ...args),
      changeTemplate: (...args) => changeTemplate(state, ...args),
      accountUpdate: (...args) => accountUpdate(state, ...args),
      changeTemplateCategory: (...args) => changeTemplateCategory(state, ...args),
      userPreference: (...args) => userPreference(state, ...args),
      accountAlert: (...args) => accountAlert(state, ...args),
      businessCapability: (...args) => businessCapability(state, ...args),
      phoneNumberName: (...args) => phoneNumberName(state, ...args),
      isRegistered: (id) => state.cloud.registered.has(id),
      subscribedApps: (wabaId) => [...(state.cloud.subscribedApps.get(wabaId) ?? [])],
      exhaustRegistrations: (id) => {
        state.cloud.registrationRequests.set(
          id,
          Array<number>(REGISTRATION_LIMIT).fill(state.now()),
        );
      },
    },
  };
}
