/**
 * What `POST /{phone-number-id}/messages` checks in a send's content before it accepts it, kind
 * by kind, as the Cloud API refuses (Graph's envelope, HTTP 400, `error_data.details` naming
 * the parameter):
 *
 * - a `type` the Cloud API does not send → 131051 (unsupported message type); the kind's object
 *   missing or of the wrong shape → 100 (invalid parameter);
 * - `text: {body (1–4096), preview_url?}`;
 * - `image` / `video` / `audio` / `document` / `sticker: {id | link, caption?, filename?}`:
 *   exactly one of `id` (a medium the sandbox has for this WABA — a person's or an upload — of a
 *   type that fits the kind, else 131053) and `link` (http or https); `caption` up to 1024
 *   characters on image, video and document, `filename` up to 240 on a document (a caption on
 *   audio or sticker, or a filename elsewhere, is ignored, as the provider does: the official
 *   Node SDK's own examples send them);
 * - `audio.voice`: a boolean (100 otherwise); `true` sends a voice message (the phone shows it
 *   as one; its statuses end with `played`, cloud-statuses.ts);
 * - `location: {latitude, longitude, name?, address?}` (numbers, or numeric strings as the SDK's
 *   example sends them);
 * - `contacts: [{name: {formatted_name}, …}]`;
 * - `reaction: {message_id, emoji}`: a wamid of this number's conversation with the recipient
 *   (131009 otherwise), one emoji or "" (removes the reaction; 131009 for anything else);
 * - `interactive` (cloud-interactive-validation.ts) and `template`
 *   (cloud-template-validation.ts);
 * - `context: {message_id}` on any kind (an object with a string; 100 otherwise).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/audio-messages
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
import type { GraphFault } from './graph-errors.ts';
import { findMessage } from './inbound-message.ts';
import type { SandboxState } from './sandbox-state.ts';

/** Who sends to whom: what a content check needs to know besides the body. */
export interface SendParties {
  state: SandboxState;
  wabaId: string;
  phoneNumberId: string;
  /** The recipient's WhatsApp id (digits). */
  waId: string;
}

/** A JSON object read field by field. */
export type Json = Record<string, unknown>;

/** Whether `v` is a JSON object (not an array). */
export const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Code 100: a parameter missing or malformed. */
export const invalid = (details: string): GraphFault => ({
  code: 100,
  message: '(#100) Invalid parameter',
  details,
});

/** Code 131009: a parameter's value outside what the Cloud API allows. */
export const notValid = (details: string): GraphFault => ({
  code: 131009,
  message: '(#131009) Parameter value is not valid',
  details,
});

/**
 * A string length check: 131009 naming `what` and the limits when `value` is not a string of
 * `min`–`max` characters (`min` 0: an absent value passes).
 */
export function lengthFault(
  what: string,
  value: unknown,
  min: number,
  max: number,
): GraphFault | undefined {
  if (value === undefined && min === 0) return undefined;
  if (typeof value !== 'string') return invalid(`${what} must be a string`);
  const n = [...value].length;
  return n < min || n > max
    ? notValid(`${what} length invalid. Min length: ${min}, Max length: ${max}`)
    : undefined;
}

/** The first fault of several checks (each run only if the ones before passed). */
export function firstFault(...checks: (() => GraphFault | undefined)[]): GraphFault | undefined {
  for (const check of checks) {
    const fault = check();
    if (fault) return fault;
  }
  return undefined;
}

export const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** The media types each kind takes by id (a document takes any). */
const MIME_OF_KIND: Record<Exclude<MediaKind, 'document'>, RegExp> = {
  image: /^image\/(jpeg|png)$/,
  video: /^video\/(mp4|3gpp)$/,
  audio: /^audio\/(aac|amr|mpeg|mp4|ogg)(;.*)?$/,
  sticker: /^image\/webp$/,
};

/** Whether `value` is an absolute http(s) URL. */
function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/**
 * A media object (`{id}` or `{link}`) of `kind` at parameter `param` (e.g. `image`,
 * `interactive['header']['image']`).
 */
export function mediaFault(
  parties: SendParties,
  kind: MediaKind,
  param: string,
  media: unknown,
): GraphFault | undefined {
  if (!isObject(media)) return invalid(`The parameter ${param} is required.`);
  const { id, link } = media;
  if ((id === undefined) === (link === undefined))
    return invalid(`${param} must have exactly one of id or link`);
  if (link !== undefined)
    return typeof link === 'string' && isHttpUrl(link)
      ? undefined
      : invalid(`${param}['link'] is not a valid URL`);
  if (typeof id !== 'string' || id === '') return invalid(`${param}['id'] must be a string`);
  const medium = parties.state.cloud.media.get(id);
  if (!medium || medium.wabaId !== parties.wabaId)
    return {
      code: 131053,
      message: '(#131053) Media upload error',
      details: `Media id ${id} does not exist or does not belong to this business account`,
    };
  if (kind !== 'document' && !MIME_OF_KIND[kind].test(medium.mimeType))
    return {
      code: 131053,
      message: '(#131053) Media upload error',
      details: `Media type ${medium.mimeType} is not supported for ${kind}`,
    };
  return undefined;
}

/** A media kind's object: the medium, its caption and file name. */
function mediaMessageFault(parties: SendParties, kind: MediaKind, media: unknown) {
  return firstFault(
    () => mediaFault(parties, kind, kind, media),
    () =>
      kind === 'image' || kind === 'video' || kind === 'document'
        ? lengthFault(`${kind}['caption']`, (media as Json).caption, 0, 1024)
        : undefined,
    () =>
      kind === 'document'
        ? lengthFault(`document['filename']`, (media as Json).filename, 0, 240)
        : undefined,
    () =>
      kind === 'audio' &&
      (media as Json).voice !== undefined &&
      typeof (media as Json).voice !== 'boolean'
        ? invalid(`audio['voice'] must be a boolean`)
        : undefined,
  );
}

/** A coordinate: a finite number, or a string that is one. */
const isCoordinate = (v: unknown) =>
  (typeof v === 'number' && Number.isFinite(v)) ||
  (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)));

function locationFault(location: unknown): GraphFault | undefined {
  if (!isObject(location)) return invalid('The parameter location is required.');
  for (const key of ['latitude', 'longitude'])
    if (!isCoordinate(location[key])) return invalid(`location['${key}'] must be a number`);
  return firstFault(
    () => lengthFault(`location['name']`, location.name, 0, 1000),
    () => lengthFault(`location['address']`, location.address, 0, 1000),
  );
}

function contactsFault(contacts: unknown): GraphFault | undefined {
  if (!Array.isArray(contacts) || contacts.length === 0)
    return invalid('The parameter contacts is required.');
  for (const [i, c] of contacts.entries()) {
    const name = isObject(c) ? c.name : undefined;
    if (!isObject(name) || typeof name.formatted_name !== 'string' || name.formatted_name === '')
      return invalid(`contacts[${i}]['name']['formatted_name'] is required`);
  }
  return undefined;
}

/** One emoji (with its modifiers and joiners), as a reaction takes. */
const EMOJI =
  /^(?:\p{Extended_Pictographic}|\p{Regional_Indicator}|\p{Emoji_Component}|\u200d|\ufe0f)+$/u;
const PICTOGRAPH = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;

function reactionFault(parties: SendParties, reaction: unknown): GraphFault | undefined {
  if (!isObject(reaction) || typeof reaction.message_id !== 'string')
    return invalid("The parameter reaction['message_id'] is required.");
  if (typeof reaction.emoji !== 'string') return invalid("reaction['emoji'] must be a string");
  const target = findMessage(parties.state, reaction.message_id);
  if (!target || target.phoneNumberId !== parties.phoneNumberId || target.waId !== parties.waId)
    return notValid(`Message ${reaction.message_id} not found in this conversation`);
  const { emoji } = reaction;
  if (emoji !== '' && (emoji.length > 16 || !EMOJI.test(emoji) || !PICTOGRAPH.test(emoji)))
    return notValid("reaction['emoji'] must be a single emoji or empty");
  return undefined;
}

/** The message types a business may send. */
export const SEND_TYPES = [
  'text',
  ...MEDIA_KINDS,
  'location',
  'contacts',
  'interactive',
  'reaction',
  'template',
] as const;

/**
 * The content check of a free-form kind (everything but `interactive` and `template`, which
 * have their own files), of `context`, and of `type` itself.
 *
 * @returns the fault to answer, or undefined when the content is accepted.
 */
export function contentFault(parties: SendParties, body: Json): GraphFault | undefined {
  const type = typeof body.type === 'string' ? body.type : 'text';
  if (!(SEND_TYPES as readonly string[]).includes(type))
    return {
      code: 131051,
      message: '(#131051) Unsupported message type',
      details: `Message type ${type} is not currently supported`,
    };
  if (body.context !== undefined) {
    const { context } = body;
    if (!isObject(context) || typeof context.message_id !== 'string' || !context.message_id)
      return invalid("context['message_id'] must be a string");
  }
  const content = body[type];
  if (content === undefined) return invalid(`The parameter ${type} is required.`);
  if ((MEDIA_KINDS as readonly string[]).includes(type))
    return mediaMessageFault(parties, type as MediaKind, content);
  switch (type) {
    case 'text':
      if (!isObject(content)) return invalid("The parameter text['body'] is required.");
      if (content.preview_url !== undefined && typeof content.preview_url !== 'boolean')
        return invalid("text['preview_url'] must be a boolean");
      return lengthFault("text['body']", content.body, 1, 4096);
    case 'location':
      return locationFault(content);
    case 'contacts':
      return contactsFault(content);
    case 'reaction':
      return reactionFault(parties, content);
    default:
      return undefined;
  }
}
