/**
 * A free-form message as the Cloud API takes it: the kind's object stored as the API accepted
 * it (camelCase, our `med_…` and `msg_…` ids, message-content.ts) turned into the provider's
 * (snake_case, its media id, the wamid), when the delivery worker sends it.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 */
import type { Database } from '../../db/client.ts';
import type {
  OutboundMessage,
  WireInteractive,
  WireInteractiveHeader,
  WireMedia,
} from '../../partner/cloud-api/cloud-api-types.ts';
import { findSendableMedium } from '../media/outbound-media.ts';
import type { KindObject, OutboundContent } from '../store/message-content.ts';
import { findTargetMessage } from '../store/message-targets.ts';
import type { MessageRow } from '../store/messages-repository.ts';

/** The provider's ids of the ids a content names: media ids by `med_…`, wamids by `msg_…`. */
export interface ProviderIds {
  media: ReadonlyMap<string, string>;
  wamids: ReadonlyMap<string, string>;
}

/** The error of a message whose medium is gone (expired, or never the portal's). */
const MEDIA_UNAVAILABLE = {
  code: 'media_unavailable',
  title: 'A medium of the message is unknown or expired',
} as const;
/** The error of a reaction or quote whose message was never sent. */
export const TARGET_UNAVAILABLE = {
  code: 'context_unavailable',
  title: 'The message it reacts to or quotes was never sent',
} as const;

/** Every `mediaId` anywhere in `value` (a kind's object, a template's components). */
function mediaIdsOf(value: unknown, into: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) mediaIdsOf(v, into);
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) {
      if (k === 'mediaId' && typeof v === 'string') into.add(v);
      else mediaIdsOf(v, into);
    }
  return into;
}

/**
 * The provider's ids for the message's `med_…` and `msg_…` ids.
 *
 * @returns the ids; `retry` while a message it reacts to or quotes is still queued; an error
 *   to fail it with when a medium or that message is gone.
 */
export async function resolveProviderIds(
  db: Database,
  row: MessageRow,
  content: OutboundContent | null,
): Promise<ProviderIds | 'retry' | { error: { code: string; title: string } }> {
  const media = new Map<string, string>();
  for (const id of mediaIdsOf(content, new Set())) {
    const medium = await findSendableMedium(db, row.portalId, id);
    if (!medium) return { error: MEDIA_UNAVAILABLE };
    media.set(id, medium.providerMediaId);
  }
  const wamids = new Map<string, string>();
  const conversation = {
    portalId: row.portalId,
    phone: row.waId,
    phoneNumberId: row.phoneNumberId,
  };
  for (const id of [content?.reaction?.messageId, content?.context?.messageId]) {
    if (id === undefined || wamids.has(id)) continue;
    const target = await findTargetMessage(db, conversation, id);
    if (target?.state === 'queued') return 'retry';
    if (!target?.wamid) return { error: TARGET_UNAVAILABLE };
    wamids.set(id, target.wamid);
  }
  return { media, wamids };
}

type MediaRef = { mediaId?: string; link?: string };

const wireMedia = (ref: MediaRef, ids: ProviderIds): WireMedia =>
  ref.mediaId !== undefined ? { id: ids.media.get(ref.mediaId) ?? '' } : { link: ref.link ?? '' };

/**
 * A medium's object: its reference, and its caption, file name and (an audio) `voice` when it
 * has them.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/audio-messages
 */
function wireMediaObject(
  o: MediaRef & { caption?: string; filename?: string; voice?: boolean },
  ids: ProviderIds,
) {
  return {
    ...wireMedia(o, ids),
    ...(o.caption !== undefined && { caption: o.caption }),
    ...(o.filename !== undefined && { filename: o.filename }),
    ...(o.voice !== undefined && { voice: o.voice }),
  };
}

function wireHeader(
  h: NonNullable<KindObject<'interactive'>['header']>,
  ids: ProviderIds,
): WireInteractiveHeader {
  if (h.type === 'text') return { type: 'text', text: h.text };
  const ref = (h as unknown as Record<string, MediaRef>)[h.type]!;
  return { type: h.type, [h.type]: wireMedia(ref, ids) } as WireInteractiveHeader;
}

function wireInteractive(o: KindObject<'interactive'>, ids: ProviderIds): WireInteractive {
  const common = {
    ...(o.header && { header: wireHeader(o.header, ids) }),
    body: { text: o.body.text },
    ...(o.footer && { footer: { text: o.footer.text } }),
  };
  if (o.type === 'button') return { ...common, type: 'button', action: o.action };
  if (o.type === 'list') return { ...common, type: 'list', action: o.action };
  const { displayText, url } = o.action.parameters;
  return {
    ...common,
    type: 'cta_url',
    action: { name: 'cta_url', parameters: { display_text: displayText, url } },
  };
}

/** The Cloud API object of a free-form kind, from its stored object and the provider's ids. */
function wireObject(row: MessageRow, c: OutboundContent, ids: ProviderIds): unknown {
  switch (row.type) {
    case 'text': {
      const text = c.text!;
      return {
        body: text.body,
        ...(text.previewUrl !== undefined && { preview_url: text.previewUrl }),
      };
    }
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker':
      return wireMediaObject(c[row.type] as MediaRef, ids);
    case 'location':
      return c.location;
    case 'interactive':
      return wireInteractive(c.interactive!, ids);
    case 'reaction':
      return { message_id: ids.wamids.get(c.reaction!.messageId) ?? '', emoji: c.reaction!.emoji };
    default:
      throw new Error(`not a free-form kind: ${row.type}`);
  }
}

/** The error of a message whose content was erased before it was sent. */
export const CONTENT_ERASED = {
  code: 'content_erased',
  title: 'The message was erased before it was sent',
} as const;

/**
 * The Cloud API message of a free-form row, with the wamid of the message it quotes.
 *
 * @returns null when its content is gone (erased before it was sent).
 * @throws Error when the row is a template.
 */
export function freeFormOutbound(
  row: MessageRow,
  content: OutboundContent | null,
  ids: ProviderIds,
): OutboundMessage | null {
  if (!content || content[row.type as keyof OutboundContent] === undefined) return null;
  const contextId = content.context && ids.wamids.get(content.context.messageId);
  return {
    to: row.waId,
    type: row.type,
    [row.type]: wireObject(row, content, ids),
    ...(contextId !== undefined && { context: { message_id: contextId } }),
  } as OutboundMessage;
}

/** The `context` of a template row: the wamid of the message it quotes, if any. */
export function contextOf(
  content: OutboundContent | null,
  ids: ProviderIds,
): { context: { message_id: string } } | Record<string, never> {
  const id = content?.context && ids.wamids.get(content.context.messageId);
  return id === undefined ? {} : { context: { message_id: id } };
}
