/**
 * The message a person writes, as the Cloud API's `messages` webhook carries it: what
 * `POST /sandbox/inbound` takes as `message` (a Cloud API inbound message object without `id`,
 * `from` and `timestamp`), checked by `InboundMessage`, and made into the webhook's `messages[]`
 * item by `webhookMessage`:
 *
 * - `text: {body}`; `location: {latitude, longitude, name?, address?, url?}`; `contacts: [{name:
 *   {formatted_name, …}, phones?: [{phone, wa_id?, type?}], …}]`;
 * - media — `image` / `video: {caption?, mime_type, sha256, id}`, `document: {caption?, filename,
 *   mime_type, sha256, id}`, `audio: {mime_type, sha256, id, voice}`, `sticker: {mime_type,
 *   sha256, id, animated}` — with the id of a medium the sandbox has, or none: then an uploaded
 *   file or a bundled sample (samples/samples.ts) becomes a new medium; `sha256` is base64;
 * - `interactive: {type: "button_reply", button_reply: {id, title}}` or `{type: "list_reply",
 *   list_reply: {id, title, description?}}`; `button: {payload, text}` (a template's quick reply);
 * - `reaction: {message_id, emoji}` (an empty emoji removes a reaction);
 * - `unsupported`: the provider's `errors: [{code: 131051, …}]` and `unsupported: {type}`;
 * - `context: {id, from?}` on any type: the message it replies to (`from` filled in: the business
 *   number's digits, or the person's own number when they quote themselves); `forwarded` and
 *   `frequently_forwarded` (forwarded more than five times), with or without `id`;
 * - `referral: {source_url, source_id, source_type, headline, body, media_type, image_url,
 *   video_url, thumbnail_url, ctwa_clid, welcome_message}` on any type: the click-to-WhatsApp ad
 *   or post the person came from, passed on as given;
 * - `audio.voice: true`: a voice message recorded in WhatsApp (`false`: an audio file).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/audio
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/unsupported
 */
import { Type, type Static, type TSchema } from 'typebox';
import { describePhoneNumber } from './cloud-state.ts';
import { sampleByKey, sampleFor, type SampleMedium } from './samples/samples.ts';
import type { SandboxState } from './sandbox-state.ts';

const Str = (maxLength: number, minLength = 0) => Type.String({ minLength, maxLength });
const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);
const MediaId = Opt(Type.String({ pattern: '^[0-9]{1,30}$' }));
const MimeType = Opt(Type.String({ pattern: '^[a-z]+/[a-zA-Z0-9.+-]+(; ?[a-z]+=[a-z0-9]+)?$' }));
const Context = Opt(
  Type.Object({
    // Absent on a forwarded message that quotes nothing.
    id: Opt(Str(200, 1)),
    from: Opt(Type.String({ pattern: '^[0-9]{1,20}$' })),
    forwarded: Opt(Type.Boolean()),
    frequently_forwarded: Opt(Type.Boolean()),
  }),
);
const Url = Opt(Type.String({ pattern: '^https?://', maxLength: 2000 }));
/**
 * The click-to-WhatsApp ad or post a message comes from (Meta's `referral`, on the first message
 * after the person tapped it).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
 */
const Referral = Opt(
  Type.Object({
    source_url: Url,
    source_id: Opt(Str(100)),
    source_type: Opt(Type.Union([Type.Literal('ad'), Type.Literal('post')])),
    headline: Opt(Str(200)),
    body: Opt(Str(1000)),
    media_type: Opt(Type.Union([Type.Literal('image'), Type.Literal('video')])),
    image_url: Url,
    video_url: Url,
    thumbnail_url: Url,
    ctwa_clid: Opt(Str(200)),
    welcome_message: Opt(Type.Object({ text: Opt(Str(1000)) })),
  }),
);
/**
 * One message type's object: `type` first (so a wrong branch fails at once), then `context` and
 * `referral`.
 */
const Of = <K extends string, T extends TSchema>(type: K, content: T) =>
  Type.Object({
    type: Type.Literal(type),
    [type]: content,
    context: Context,
    referral: Referral,
  } as {
    type: ReturnType<typeof Type.Literal<K>>;
    context: typeof Context;
    referral: typeof Referral;
  } & Record<K, T>);

const Phone = Type.Object({
  phone: Str(40, 1),
  wa_id: Opt(Type.String({ pattern: '^[0-9]{6,20}$' })),
  type: Opt(Str(20)),
});
const SharedContact = Type.Object({
  name: Type.Object({
    formatted_name: Str(200, 1),
    first_name: Opt(Str(100)),
    last_name: Opt(Str(100)),
  }),
  phones: Opt(Type.Array(Phone, { maxItems: 10 })),
  emails: Opt(Type.Array(Type.Object({ email: Str(200), type: Opt(Str(20)) }), { maxItems: 10 })),
  org: Opt(Type.Object({ company: Opt(Str(200)), title: Opt(Str(200)) })),
});

/** The message of `POST /sandbox/inbound` (see the file comment). */
export const InboundMessage = Type.Union([
  Of('text', Type.Object({ body: Str(4096, 1) })),
  Of('image', Type.Object({ caption: Opt(Str(1024)), id: MediaId, mime_type: MimeType })),
  Of('video', Type.Object({ caption: Opt(Str(1024)), id: MediaId, mime_type: MimeType })),
  Of(
    'document',
    Type.Object({
      caption: Opt(Str(1024)),
      filename: Opt(Str(240, 1)),
      id: MediaId,
      mime_type: MimeType,
    }),
  ),
  Of('audio', Type.Object({ id: MediaId, mime_type: MimeType, voice: Opt(Type.Boolean()) })),
  Of('sticker', Type.Object({ id: MediaId, mime_type: MimeType, animated: Opt(Type.Boolean()) })),
  Of(
    'location',
    Type.Object({
      latitude: Type.Number({ minimum: -90, maximum: 90 }),
      longitude: Type.Number({ minimum: -180, maximum: 180 }),
      name: Opt(Str(200)),
      address: Opt(Str(500)),
      url: Opt(Str(500)),
    }),
  ),
  Of('contacts', Type.Array(SharedContact, { minItems: 1, maxItems: 20 })),
  Of(
    'interactive',
    Type.Union([
      Type.Object({
        type: Type.Literal('button_reply'),
        button_reply: Type.Object({ id: Str(256, 1), title: Str(20, 1) }),
      }),
      Type.Object({
        type: Type.Literal('list_reply'),
        list_reply: Type.Object({
          id: Str(200, 1),
          title: Str(24, 1),
          description: Opt(Str(72)),
        }),
      }),
    ]),
  ),
  Of('button', Type.Object({ payload: Str(1000, 1), text: Str(256, 1) })),
  Of('reaction', Type.Object({ message_id: Str(200, 1), emoji: Str(16) })),
  Of('unsupported', Opt(Type.Object({ type: Opt(Str(40)) }))),
]);
export type InboundMessage = Static<typeof InboundMessage>;

const MEDIA_TYPES = ['image', 'video', 'document', 'audio', 'sticker'] as const;
type MediaType = (typeof MEDIA_TYPES)[number];

/** A file the person chose on the phone page, instead of a sample. */
export interface Upload {
  bytes: Buffer;
  mimeType: string;
  filename?: string | undefined;
}

/** Where a medium without an `id` takes its bytes from. */
export interface MediaSource {
  upload?: Upload | undefined;
  /** A sample's key (samples/samples.ts); by default the type's first sample. */
  sampleKey?: string | undefined;
}

/** The provider's error on an `unsupported` message. */
const UNSUPPORTED_ERROR = {
  code: 131051,
  title: 'Message type unknown',
  message: 'Message type unknown',
  error_data: { details: 'Message type is currently not supported.' },
};

/** The media fields of a webhook item: the medium's id, mime type and base64 SHA-256. */
function mediaFields(
  state: SandboxState,
  wabaId: string,
  type: MediaType,
  given: { id?: string | undefined; mime_type?: string | undefined },
  source: MediaSource,
): { fields: Record<string, unknown>; filename?: string | undefined } | undefined {
  if (given.id !== undefined) {
    const known = state.cloud.media.get(given.id);
    if (!known || known.wabaId !== wabaId) return undefined;
    return { fields: { mime_type: known.mimeType, sha256: known.sha256Base64, id: known.id } };
  }
  let file: Upload | undefined = source.upload;
  if (!file) {
    const sample: SampleMedium | undefined =
      source.sampleKey !== undefined
        ? sampleByKey(source.sampleKey)
        : sampleFor(type, given.mime_type);
    if (!sample || sample.type !== type) return undefined;
    file = { bytes: sample.bytes, mimeType: sample.mimeType, filename: sample.filename };
  }
  const medium = state.cloud.media.add(file.bytes, file.mimeType, wabaId);
  return {
    fields: { mime_type: medium.mimeType, sha256: medium.sha256Base64, id: medium.id },
    filename: file.filename,
  };
}

/**
 * The webhook's `messages[]` item for `message` written by `from` to `phoneNumberId` (of
 * `wabaId`), its media made sandbox media.
 *
 * @returns the item without `from`, `id` and `timestamp` (the caller adds them), or
 *   `unknown_media` for a media id the sandbox does not have for this WABA (or a sample key
 *   that does not exist or is of another type).
 */
export function webhookMessage(
  state: SandboxState,
  wabaId: string,
  phoneNumberId: string,
  from: string,
  message: InboundMessage,
  source: MediaSource = {},
): { item: Record<string, unknown> } | { error: 'unknown_media' } {
  const { context, ...rest } = message;
  const item: Record<string, unknown> = { ...rest };
  if ((MEDIA_TYPES as readonly string[]).includes(message.type)) {
    const type = message.type as MediaType;
    const given = (message as Record<string, unknown>)[type] as Record<string, unknown>;
    const media = mediaFields(state, wabaId, type, given, source);
    if (!media) return { error: 'unknown_media' };
    const { id: _id, mime_type: _mime, ...kept } = given;
    item[type] = {
      ...kept,
      ...(type === 'document' && { filename: given.filename ?? media.filename ?? 'document' }),
      ...(type === 'audio' && { voice: given.voice ?? false }),
      ...(type === 'sticker' && { animated: given.animated ?? false }),
      ...media.fields,
    };
  }
  if (message.type === 'unsupported') {
    item.errors = [UNSUPPORTED_ERROR];
    item.unsupported = { type: message.unsupported?.type ?? 'unknown' };
  }
  if (context?.id === undefined) {
    // Only forwarded: `context: {forwarded, frequently_forwarded}` as sent.
    if (context) item.context = context;
  } else {
    const quoted = findMessage(state, context.id);
    const quotedFrom =
      quoted?.direction === 'sent_by_person'
        ? quoted.waId
        : describePhoneNumber(quoted?.phoneNumberId ?? phoneNumberId).digits;
    item.context = { ...context, from: (context as { from?: string }).from ?? quotedFrom };
  }
  if (message.type === 'reaction') {
    const reacted = findMessage(state, message.reaction.message_id);
    if (reacted && reacted.waId === from) {
      if (message.reaction.emoji === '') delete reacted.reaction;
      else reacted.reaction = message.reaction.emoji;
    }
  }
  return { item };
}

/** A message of the sandbox phones by wamid (newest first), if it is still kept. */
export function findMessage(state: SandboxState, wamid: string) {
  return state.cloud.messages.findLast((m) => m.wamid === wamid);
}
