/**
 * The provider as messaging sees it: the one adapter over partner/'s outbound-call path. It
 * knows whether a portal is connected (`isConnected`: an active connection holding at least one
 * WABA), reads a portal's numbers and templates (cached per portal, `MESSAGING_PROVIDER_CACHE_MS`),
 * manages templates, sends messages, and turns a provider failure into the API's error
 * (`providerAppError`).
 *
 * Invariants: the provider token never reaches messaging: every call runs in partner's
 * `withCloudApi`, which hands over the Cloud API calls made for the token; a portal without a
 * WABA is refused with `not_connected` before any provider call; a cached list serves only the
 * WABAs it was read for (a reconnection to other WABAs reads again), for at most the cache's
 * lifetime, or until a template status webhook drops it (`invalidate`). Concurrent misses share
 * one read.
 *
 * @see docs/messaging.md "The provider"
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates
 */
import { LRUCache } from 'lru-cache';
import type { CloudApi } from '../../partner/cloud-api/cloud-api.ts';
import type { MediaFile } from '../../partner/cloud-api/cloud-api-media.ts';
import type {
  MessageTemplate,
  NewTemplate,
  OutboundMessage,
  Page,
  PhoneNumber as ProviderPhoneNumber,
} from '../../partner/cloud-api/cloud-api-types.ts';
import type { OnboardingState } from '../../partner/onboarding/number-onboarding.ts';
import type { WithCloudApi } from '../../partner/outbound-calls.ts';
import { notConnected, providerAppError } from './provider-errors.ts';

export type { MessageTemplate, OutboundMessage } from '../../partner/cloud-api/cloud-api-types.ts';
export type { ProviderPhoneNumber };

/**
 * Where a number stands in the onboarding after the grant (partner's `onboardingStates`): it
 * sends only when both are true.
 *
 * @see docs/partner-connection.md "Onboarding"
 */
export interface NumberOnboarding {
  webhooksSubscribed: boolean;
  registered: boolean;
  lastError: string | null;
  /** ISO 8601; null: registration may be tried at any time. */
  nextAttemptAt: string | null;
}

/** A phone number of the portal's WABAs, with its onboarding state (read fresh, never cached). */
export interface PhoneNumber extends ProviderPhoneNumber {
  onboarding: NumberOnboarding;
}

/** A number no onboarding has reached yet. */
const NOT_ONBOARDED: NumberOnboarding = {
  webhooksSubscribed: false,
  registered: false,
  lastError: null,
  nextAttemptAt: null,
};
export { notConnected, NOT_CONNECTED_MESSAGE, providerAppError } from './provider-errors.ts';

/** Portals whose lists are kept at once, per instance. */
const MAX_PORTALS = 10_000;
/** Most template pages read per WABA (100 templates each): a bound on a looping cursor. */
const MAX_TEMPLATE_PAGES = 20;

/** What the adapter needs of partner/ (narrow, so tests and the bench pass just this). */
interface ProviderAdapterDeps {
  partner: {
    /** The WABA ids of the portal's active connection; [] when not connected. */
    wabaIdsOf: (portalId: number) => Promise<string[]>;
    withCloudApi: WithCloudApi;
    /** Each number's onboarding state, by phone number id (a database read). */
    onboardingStates: (portalId: number) => Promise<Map<string, OnboardingState>>;
  };
  /** How long a portal's numbers and templates are reused, in ms (0: never). */
  cacheMs: number;
}

export type ProviderAdapter = ReturnType<typeof createProviderAdapter>;

interface PortalCache<T> {
  get(portalId: number, wabaIds: readonly string[]): Promise<T[]>;
  /** The list this instance holds now, if any (never a provider call). */
  peek(portalId: number): T[] | undefined;
  drop(portalId: number): void;
}

/** A per-portal LRU of one list, each entry valid for the WABA ids it was read for. */
function portalCache<T>(
  load: (portalId: number, wabaIds: readonly string[]) => Promise<T[]>,
  cacheMs: number,
): PortalCache<T> {
  if (cacheMs === 0) return { get: load, peek: () => undefined, drop: () => undefined };
  type Entry = { key: string; items: T[] };
  const cache = new LRUCache<number, Entry, readonly string[]>({
    max: MAX_PORTALS,
    ttl: cacheMs,
    fetchMethod: async (portalId, _stale, { context }) => ({
      key: context.join(','),
      items: await load(portalId, context),
    }),
  });
  // Bumped by every drop: a read whose shared fetch was aborted by a drop (lru-cache rejects it
  // with "deleted") starts a fresh one instead of failing the send that waited on it.
  let drops = 0;
  const drop = (portalId: number) => {
    drops++;
    cache.delete(portalId);
  };
  return {
    async get(portalId, wabaIds) {
      const key = wabaIds.join(',');
      for (let attempt = 0; attempt < 3; attempt++) {
        const seen = drops;
        let entry: Entry | undefined;
        try {
          entry = await cache.fetch(portalId, { context: wabaIds });
        } catch (err) {
          if (drops === seen) throw err; // the load's own error (provider, connection)
          continue;
        }
        if (entry?.key === key) return entry.items;
        // Read for other WABAs (the connection changed meanwhile): read again.
        if (entry !== undefined) drop(portalId);
      }
      return load(portalId, wabaIds);
    },
    peek: (portalId) => cache.peek(portalId)?.items,
    drop,
  };
}

/** Every phone number of `wabaIds` (raw provider errors). */
function allNumbers(
  withCloudApi: WithCloudApi,
  portalId: number,
  wabaIds: readonly string[],
): Promise<ProviderPhoneNumber[]> {
  return withCloudApi(portalId, 'phone numbers read', async (cloud) => {
    const lists = await Promise.all(wabaIds.map((waba) => cloud.listPhoneNumbers(waba)));
    return lists.flat();
  });
}

/** Every template of `wabaIds`, all pages (raw provider errors). */
async function allTemplates(
  withCloudApi: WithCloudApi,
  portalId: number,
  wabaIds: readonly string[],
): Promise<MessageTemplate[]> {
  return withCloudApi(portalId, 'templates read', async (cloud) => {
    const all: MessageTemplate[] = [];
    for (const waba of wabaIds) {
      let after: string | undefined;
      for (let page = 0; page < MAX_TEMPLATE_PAGES; page++) {
        const result = await cloud.listTemplates(waba, {
          limit: 100,
          ...(after !== undefined && { after }),
        });
        all.push(...result.items);
        if (result.after === null) break;
        after = result.after;
      }
    }
    return all;
  });
}

export function createProviderAdapter(deps: ProviderAdapterDeps) {
  const { wabaIdsOf, withCloudApi, onboardingStates } = deps.partner;

  /** The numbers with their onboarding state, read now (it changes without the provider). */
  async function withOnboarding(
    portalId: number,
    listed: ProviderPhoneNumber[],
  ): Promise<PhoneNumber[]> {
    const states = await onboardingStates(portalId);
    return listed.map((n) => {
      const state = states.get(n.id);
      return {
        ...n,
        onboarding: state
          ? {
              webhooksSubscribed: state.webhooksSubscribed,
              registered: state.registered,
              lastError: state.lastError,
              nextAttemptAt: state.nextAttemptAt?.toISOString() ?? null,
            }
          : NOT_ONBOARDED,
      };
    });
  }

  /** Run one Cloud API call for the portal, a failure turned into the API's error. */
  const call = <T>(portalId: number, what: string, fn: (cloud: CloudApi) => Promise<T>) =>
    withCloudApi(portalId, what, fn).catch(rethrowAsAppError);

  async function wabaIds(portalId: number): Promise<string[]> {
    const ids = await wabaIdsOf(portalId);
    if (ids.length === 0) throw notConnected();
    return ids;
  }

  const numbers = portalCache<ProviderPhoneNumber>(
    (portalId, ids) => allNumbers(withCloudApi, portalId, ids),
    deps.cacheMs,
  );
  const templates = portalCache<MessageTemplate>(
    (portalId, ids) => allTemplates(withCloudApi, portalId, ids),
    deps.cacheMs,
  );

  return {
    /** Whether the portal has an active connection holding at least one WABA. */
    isConnected: async (portalId: number): Promise<boolean> =>
      (await wabaIdsOf(portalId)).length > 0,

    /** The portal's WABA ids. @throws AppError `not_connected` when there are none. */
    wabaIds,

    /**
     * Every phone number of every WABA of the portal, in WABA order (cached).
     *
     * @throws AppError `not_connected` (409), `provider_error` (502), `provider_timeout` (504).
     */
    async numbers(portalId: number): Promise<PhoneNumber[]> {
      const ids = await wabaIds(portalId);
      return withOnboarding(portalId, await numbers.get(portalId, ids).catch(rethrowAsAppError));
    },

    /** Every template of every WABA of the portal, all pages (cached). @throws as `numbers`. */
    async templates(portalId: number): Promise<MessageTemplate[]> {
      const ids = await wabaIds(portalId);
      return templates.get(portalId, ids).catch(rethrowAsAppError);
    },

    /**
     * The numbers and, when asked, the templates of the portal's WABAs as `numbers` and
     * `templates` give them, for one request: the connection's WABAs are read once for both
     * (a send needs the sender's number and its template), never reused across requests, so a
     * revoked connection refuses the next request at once.
     *
     * @throws as `numbers`; `templates()` as `templates`.
     */
    async catalog(portalId: number): Promise<{
      numbers: PhoneNumber[];
      templates: () => Promise<MessageTemplate[]>;
    }> {
      const ids = await wabaIds(portalId);
      return {
        numbers: await withOnboarding(
          portalId,
          await numbers.get(portalId, ids).catch(rethrowAsAppError),
        ),
        templates: () => templates.get(portalId, ids).catch(rethrowAsAppError),
      };
    },

    /** The portal's numbers this instance holds now, if any: no provider call. */
    cachedNumbers: (portalId: number): ProviderPhoneNumber[] | undefined => numbers.peek(portalId),

    /** Drop the portal's cached numbers and templates (a template's status changed). */
    invalidate(portalId: number): void {
      numbers.drop(portalId);
      templates.drop(portalId);
    },

    ...templateCalls(call),

    /**
     * Send one message from `phoneNumberId`; `bizOpaqueCallbackData` (Portico's message id)
     * comes back in its status webhooks. The delivery worker reads the failure itself (retry or
     * fail the message), so it is not translated. Inside the call (a revocation waits for the
     * send and its recording: partner/'s `CallKind` `send`), `hooks.beforeSend` runs right
     * before the request (the worker commits its send attempt there; false: do not send) and
     * `hooks.onAccepted` records the wamid.
     *
     * @returns the provider's message id (wamid): the provider accepted the message; null when
     *   `beforeSend` declined (nothing was sent).
     * @throws ConnectionInactiveError before any I/O when the connection is not active.
     * @throws ProviderError (`throttled`, `unavailable` are retryable; `rejected` is final;
     *   `dead_token` has revoked the connection; `outcomeUnknown` when the provider may have
     *   the message although no answer came).
     */
    sendMessage: (
      portalId: number,
      phoneNumberId: string,
      message: OutboundMessage,
      bizOpaqueCallbackData: string,
      hooks: {
        beforeSend?: () => Promise<boolean>;
        onAccepted?: (wamid: string) => Promise<void>;
      } = {},
    ): Promise<{ wamid: string } | null> =>
      withCloudApi(
        portalId,
        'message send',
        async (cloud) => {
          if (hooks.beforeSend && !(await hooks.beforeSend())) return null;
          const sent = await cloud.sendMessage(phoneNumberId, message, bizOpaqueCallbackData);
          await hooks.onAccepted?.(sent.wamid);
          return sent;
        },
        'send',
      ),

    ...inboundCalls(withCloudApi, call),
  };
}

/** The template management calls (not cached: the templates page and its forms). */
function templateCalls(
  call: <T>(portalId: number, what: string, fn: (cloud: CloudApi) => Promise<T>) => Promise<T>,
) {
  return {
    /**
     * One page of the WABA's templates, not cached.
     *
     * @throws AppError `not_connected`, `provider_error`, `provider_timeout`.
     */
    templatesPage: (
      portalId: number,
      wabaId: string,
      opts: { after?: string; limit?: number },
    ): Promise<Page<MessageTemplate>> =>
      call(portalId, 'templates read', (cloud) => cloud.listTemplates(wabaId, opts)),

    /**
     * Submit a template for review in the WABA.
     *
     * @throws AppError `conflict` (name and language exist), `invalid_request`,
     *   `not_connected`, `provider_error`, `provider_timeout`.
     */
    createTemplate: (portalId: number, wabaId: string, t: NewTemplate) =>
      call(portalId, 'template creation', (cloud) => cloud.createTemplate(wabaId, t)),

    /**
     * Delete every language of the template `name` in the WABA.
     *
     * @throws AppError `not_found`, `invalid_request`, `not_connected`, `provider_error`,
     *   `provider_timeout`.
     */
    deleteTemplate: (portalId: number, wabaId: string, name: string): Promise<void> =>
      call(portalId, 'template deletion', (cloud) => cloud.deleteTemplate(wabaId, name)),
  };
}

/** The calls about media (inbound and uploaded), and read receipts. */
function inboundCalls(
  withCloudApi: WithCloudApi,
  call: <T>(portalId: number, what: string, fn: (cloud: CloudApi) => Promise<T>) => Promise<T>,
) {
  return {
    /**
     * Upload a checked file (on the disk, streamed) for the portal's number `phoneNumberId`.
     *
     * @returns the provider's media id.
     * @throws AppError `not_connected`, `invalid_request` (the provider refused the file: Graph
     *   code 100), `provider_error`, `provider_timeout`.
     */
    uploadMedium: (portalId: number, phoneNumberId: string, file: MediaFile) =>
      call(portalId, 'media upload', (cloud) => cloud.uploadMedia(phoneNumberId, file)),

    /**
     * An inbound medium's bytes from the provider: `GET /{media-id}`, then its short-lived URL
     * downloaded with the token into memory (at most `maxBytes`; a stated `file_size` above it
     * refuses before downloading). The URL never leaves partner/ and this call. Failures are
     * raw (the media service reads them: a medium the provider no longer has is `media_gone`).
     *
     * @throws ConnectionInactiveError, ProviderError
     */
    fetchMedium: (portalId: number, providerMediaId: string, maxBytes: number) =>
      withCloudApi(portalId, 'media download', async (cloud) => {
        const { url, ...info } = await cloud.getMedia(providerMediaId);
        if (info.fileSize !== undefined && info.fileSize > maxBytes)
          return { info, download: { ok: false as const, reason: 'too_large' as const } };
        return { info, download: await cloud.downloadMedia(url, maxBytes) };
      }),

    /**
     * Mark the inbound message `wamid`, written to `phoneNumberId`, read at the provider; with
     * `typing`, show the person the typing indicator too (until a reply or 25 s).
     *
     * @throws AppError `not_connected`, `invalid_request` (a wamid the provider refuses),
     *   `provider_error`, `provider_timeout`.
     * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
     */
    markRead: (
      portalId: number,
      phoneNumberId: string,
      wamid: string,
      options: { typing?: boolean } = {},
    ): Promise<void> =>
      call(portalId, options.typing ? 'typing indicator' : 'read receipt', (cloud) =>
        cloud.markRead(phoneNumberId, wamid, options),
      ),
  };
}

/** `providerAppError` as a rejection handler. */
function rethrowAsAppError(err: unknown): never {
  throw providerAppError(err);
}
