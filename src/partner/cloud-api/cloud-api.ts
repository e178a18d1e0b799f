/**
 * The WhatsApp Cloud API calls Portico makes with a portal's token: phone numbers and message
 * templates of a WhatsApp Business Account (WABA), messages sent from a phone number, and the
 * onboarding after a grant (cloud-onboarding-calls.ts). All on
 * `{PROVIDER_GRAPH_BASE_URL}/{PROVIDER_API_VERSION}` through `graphCall`, so every call has its
 * timeout, refuses redirects, and fails with `ProviderError` only. Made for one token and abort
 * signal (`client.cloud(token, signal)`) inside partner's outbound-call path (outbound-calls.ts),
 * the one path with a decrypted token; callers outside partner/ get the calls already made for
 * the token (`withCloudApi`), never the token.
 *
 * Invariants: the token travels only in the `Authorization` header; ids that become URL path
 * segments are checked to be Graph ids (digits) first; a body (a message's text, a template's
 * components) travels only in a JSON body and never appears in an error message; Graph's
 * `paging.next` is never followed (Graph puts the token in that URL): the next page is asked
 * for with `paging.cursors.after` on our own URL.
 *
 * @see docs/partner-connection.md "WhatsApp Cloud API"
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/phone-numbers
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/message-templates
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media
 */
import type {
  MessageTemplate,
  NewTemplate,
  OutboundMessage,
  Page,
  PhoneNumber,
} from './cloud-api-types.ts';
import { afterCursor, dataOf, first, phoneNumber, template } from './cloud-api-parse.ts';
import {
  downloadMedia,
  mediaInfo,
  uploadMedia,
  type MediaDownload,
  type MediaFile,
  type MediaInfo,
} from './cloud-api-media.ts';
import { onboardingCalls } from './cloud-onboarding-calls.ts';
import { asString, graphCall } from '../graph-call.ts';
import { ProviderError } from '../provider-error.ts';

export type * from './cloud-api-types.ts';
export type { MediaDownload, MediaFile, MediaInfo } from './cloud-api-media.ts';

/** Most pages `listPhoneNumbers` follows (100 numbers each): a bound on a looping cursor. */
const MAX_PAGES = 50;
const GRAPH_ID = /^[0-9]{1,30}$/;
const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
/**
 * The messaging limit is `whatsapp_business_manager_messaging_limit` (the business portfolio's,
 * shared by its numbers); the deprecated `messaging_limit_tier` is not asked for.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits
 */
const PHONE_FIELDS =
  'id,display_phone_number,verified_name,quality_rating,whatsapp_business_manager_messaging_limit,throughput';
const TEMPLATE_FIELDS = 'id,name,language,category,status,quality_score,components';

/** The Cloud API calls made with one token and abort signal (what `withCloudApi` hands out). */
export type CloudApi = ReturnType<ReturnType<typeof createCloudApi>>;

/**
 * The Cloud API calls over `base` (`{graph}/{version}`), each with a `timeoutMs` deadline, made
 * for one `token` (sent only as the bearer) and aborted by `signal`. Every method rejects with
 * `ProviderError` only: `dead_token` (190), `permission` (10, 2xx: the token lacks
 * `whatsapp_business_*` or the asset), `throttled`, `rejected`, `unavailable`, `other`.
 */
export function createCloudApi(base: string, timeoutMs: number) {
  return (token: string, signal?: AbortSignal) => cloudApiFor(base, timeoutMs, token, signal);
}

function cloudApiFor(base: string, timeoutMs: number, token: string, signal?: AbortSignal) {
  const get: GraphGet = (what, path) =>
    graphCall(timeoutMs, what, `${base}/${path}`, {
      bearer: token,
      method: 'GET',
      ...(signal && { signal }),
    });

  return {
    /**
     * Every phone number of the WABA (`GET /{waba-id}/phone_numbers`), all pages.
     *
     * @see https://developers.facebook.com/docs/whatsapp/business-management-api/manage-phone-numbers
     */
    async listPhoneNumbers(wabaId: string): Promise<PhoneNumber[]> {
      return allPhoneNumbers(get, wabaId);
    },

    /**
     * One page of the WABA's templates (`GET /{waba-id}/message_templates`), `limit` 1–100
     * (default 25), from `after` (a previous page's cursor).
     *
     * @see https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/message_templates
     */
    async listTemplates(
      wabaId: string,
      opts: { after?: string; limit?: number },
    ): Promise<Page<MessageTemplate>> {
      return templatesPage(get, wabaId, opts);
    },

    /**
     * Submit a template for review (`POST /{waba-id}/message_templates`, JSON); it starts
     * `PENDING`. @throws ProviderError `rejected` for a template Graph refuses (code 100, …).
     */
    async createTemplate(
      wabaId: string,
      t: NewTemplate,
    ): Promise<{ id: string; status: string; category: string }> {
      graphId('WABA id', wabaId);
      const body = await rejectingBadParameters(
        graphCall(timeoutMs, 'template creation', `${base}/${wabaId}/message_templates`, {
          bearer: token,
          json: templateBody(t),
          ...(signal && { signal }),
        }),
      );
      const id = asString(body.id);
      if (!id) throw new ProviderError('other', 'template creation: answered without an id');
      return {
        id,
        status: asString(body.status) ?? 'PENDING',
        category: asString(body.category) ?? t.category,
      };
    },

    /** Delete every language of the template `name` (`DELETE /{waba-id}/message_templates?name=`). */
    async deleteTemplate(wabaId: string, name: string): Promise<void> {
      graphId('WABA id', wabaId);
      if (!TEMPLATE_NAME.test(name))
        throw new ProviderError('rejected', 'template deletion: not a template name');
      const query = new URLSearchParams({ name });
      await rejectingBadParameters(
        graphCall(timeoutMs, 'template deletion', `${base}/${wabaId}/message_templates?${query}`, {
          bearer: token,
          method: 'DELETE',
          ...(signal && { signal }),
        }),
      );
    },

    /**
     * Send one message from `phoneNumberId` (`POST /{phone-number-id}/messages`, JSON). The
     * provider echoes `bizOpaqueCallbackData` (≤ 512 characters; Portico's message id) in every
     * status webhook of the message.
     *
     * @returns the message's `wamid` and the recipient's `wa_id` (when Graph says).
     * @throws ProviderError `rejected` for a bad recipient (checked before any I/O) or a refusal
     *   that retrying cannot change (131047, 132001, 100, …); `throttled` for 130429 and kin.
     * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
     */
    async sendMessage(
      phoneNumberId: string,
      m: OutboundMessage,
      bizOpaqueCallbackData: string,
    ): Promise<{ wamid: string; waId: string | undefined }> {
      graphId('phone number id', phoneNumberId);
      const json = sendBody(m, bizOpaqueCallbackData);
      const body = await rejectingBadParameters(
        graphCall(timeoutMs, 'message send', `${base}/${phoneNumberId}/messages`, {
          bearer: token,
          json,
          ...(signal && { signal }),
        }),
      );
      const wamid = asString(first(body.messages)?.id);
      if (!wamid) throw new ProviderError('other', 'message send: answered without a message id');
      return { wamid, waId: asString(first(body.contacts)?.wa_id) };
    },

    ...inboundCalls(base, timeoutMs, token, signal),
    ...onboardingCalls(base, timeoutMs, token, signal),
  };
}

/** The calls about media (inbound and uploaded), and read receipts. */
function inboundCalls(base: string, timeoutMs: number, token: string, signal?: AbortSignal) {
  return {
    /**
     * Upload a checked file for `phoneNumberId` (`POST /{phone-number-id}/media`, multipart),
     * streamed from the disk.
     *
     * @returns the provider's media id (kept 30 days by the provider).
     * @throws ProviderError; `rejected` for a file Graph refuses (code 100).
     * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#upload-media
     */
    uploadMedia: (phoneNumberId: string, file: MediaFile): Promise<{ id: string }> =>
      rejectingBadParameters(uploadMedia(base, timeoutMs, { token, signal }, phoneNumberId, file)),

    /**
     * What the provider knows of an inbound medium (`GET /{media-id}`): its short-lived download
     * URL (for `downloadMedia` only), mime type, SHA-256 and size.
     *
     * @throws ProviderError; Graph code 100 when the provider no longer has the medium.
     * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#retrieve-media-url
     */
    getMedia: (mediaId: string): Promise<MediaInfo> =>
      mediaInfo(base, timeoutMs, { token, signal }, mediaId),

    /**
     * Download a medium's URL (from `getMedia`) with the token into memory, at most `maxBytes`.
     *
     * @returns the bytes and their SHA-256, or `too_large`.
     * @throws ProviderError; `other` with `httpStatus` 404 or 410 when the medium is gone.
     * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#download-media
     */
    downloadMedia: (url: string, maxBytes: number): Promise<MediaDownload> =>
      downloadMedia(base, timeoutMs, { token, signal }, url, maxBytes),

    /**
     * Mark an inbound message read (`POST /{phone-number-id}/messages` with `status: "read"`):
     * the person sees blue ticks on it and on every earlier message of the thread. With
     * `typing`, also `typing_indicator: {type: "text"}`: the person sees the business typing
     * until it replies or 25 seconds pass.
     *
     * @throws ProviderError; `rejected` for a wamid the provider refuses (code 100).
     * @see https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read
     * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
     */
    async markRead(
      phoneNumberId: string,
      wamid: string,
      options: { typing?: boolean } = {},
    ): Promise<void> {
      graphId('phone number id', phoneNumberId);
      await rejectingBadParameters(
        graphCall(
          timeoutMs,
          options.typing ? 'typing indicator' : 'read receipt',
          `${base}/${phoneNumberId}/messages`,
          {
            bearer: token,
            json: {
              messaging_product: 'whatsapp',
              status: 'read',
              message_id: wamid,
              ...(options.typing && { typing_indicator: { type: 'text' } }),
            },
            ...(signal && { signal }),
          },
        ),
      );
    },
  };
}

/** A business-scoped user id (BSUID) or parent BSUID: `US.1349…`, `US.ENT.1181…`. */
const BSUID = /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/;

/**
 * The JSON body of a send: the person as `to`, digits (E.164 without `+`, as WhatsApp wants
 * it), or as `recipient`, their business-scoped user id (a person known without a phone
 * number); the `context` of a quote, and the type's object under the type's name.
 *
 * @throws ProviderError `rejected` (before any I/O) when `m.to` is neither an E.164 number nor a
 *   BSUID.
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 */
function sendBody(m: OutboundMessage, bizOpaqueCallbackData: string): Record<string, unknown> {
  const to = m.to.startsWith('+') ? m.to.slice(1) : m.to;
  const byUserId = BSUID.test(m.to);
  if (!byUserId && !/^[1-9][0-9]{6,14}$/.test(to))
    throw new ProviderError(
      'rejected',
      'message send: the recipient is neither an E.164 number nor a WhatsApp user id',
    );
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    ...(byUserId ? { recipient: m.to } : { to }),
    ...(m.context && { context: m.context }),
    type: m.type,
    [m.type]: (m as unknown as Record<string, unknown>)[m.type],
    biz_opaque_callback_data: bizOpaqueCallbackData,
  };
}

/** Only the fields Graph defines for a new template (a caller's extra fields stay here). */
const templateBody = ({ name, language, category, components }: NewTemplate) => ({
  name,
  language,
  category,
  components,
});

/** A Graph GET of `path` (under `{graph}/{version}`) with the token and signal of the calls. */
type GraphGet = (what: string, path: string) => Promise<Record<string, unknown>>;

/** Every page of `GET /{waba-id}/phone_numbers`, up to `MAX_PAGES`. */
async function allPhoneNumbers(get: GraphGet, wabaId: string): Promise<PhoneNumber[]> {
  graphId('WABA id', wabaId);
  const numbers: PhoneNumber[] = [];
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ fields: PHONE_FIELDS, limit: '100' });
    if (after !== null) query.set('after', after);
    const body = await get('phone numbers', `${wabaId}/phone_numbers?${query}`);
    numbers.push(...dataOf(body).flatMap((n) => phoneNumber(n, wabaId)));
    after = afterCursor(body);
    if (after === null) return numbers;
  }
  return numbers;
}

/** One page of `GET /{waba-id}/message_templates`. */
async function templatesPage(
  get: GraphGet,
  wabaId: string,
  opts: { after?: string; limit?: number },
): Promise<Page<MessageTemplate>> {
  graphId('WABA id', wabaId);
  const limit = Math.min(Math.max(Math.trunc(opts.limit ?? 25), 1), 100);
  const query = new URLSearchParams({ fields: TEMPLATE_FIELDS, limit: String(limit) });
  if (opts.after !== undefined) query.set('after', opts.after);
  const body = await get('templates', `${wabaId}/message_templates?${query}`);
  return {
    items: dataOf(body).flatMap((t) => template(t, wabaId)),
    after: afterCursor(body),
  };
}

/** @throws ProviderError `other` (before any I/O) when `id` is not a Graph id. */
function graphId(what: string, id: string): void {
  if (!GRAPH_ID.test(id)) throw new ProviderError('other', `${what} is not a Graph id`);
}

/** A Graph code 100 (invalid parameter) of a send or a template change is final: `rejected`. */
async function rejectingBadParameters<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ProviderError && err.kind === 'other' && err.graphCode === 100)
      throw err.as('rejected', err.message);
    throw err;
  }
}
