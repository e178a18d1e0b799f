/**
 * A stored inbound message as the API and the `message.received` event show it
 * (`InboundMessageSchema`): its row, its opened content and its medium's row.
 *
 * @see docs/messaging.md "Inbound messages"
 */
import { INBOUND_MEDIA_TYPES } from '../../partner/cloud-api/provider-webhook-events.ts';
import type { inboundMessages, media } from '../../db/schema/conversations.ts';
import type { StoredInboundContent } from '../messages/message-content.ts';
import type { InboundMessage } from './inbound-schemas.ts';

/** The types the view names as they are; any other provider type reads `unsupported`. */
const VIEW_TYPES = new Set([
  'text',
  ...INBOUND_MEDIA_TYPES,
  'location',
  'contacts',
  'interactive',
  'button',
  'reaction',
  'unsupported',
]);

export type InboundMessageRow = typeof inboundMessages.$inferSelect;
export type MediaRow = typeof media.$inferSelect;

/** What the view reads of a medium's row. */
export type MediaMetadata = Pick<MediaRow, 'id' | 'mimeType' | 'sha256' | 'fileSize'>;

/**
 * The API's view of an inbound message.
 *
 * @param content the opened content (`openContent`), or null when it is gone (expired, erased):
 *   then the type's object is absent and `contentErased` is true.
 * @param medium the medium's row, for the five media types (null: none known).
 */
export function inboundMessageView(
  row: Pick<
    InboundMessageRow,
    | 'id'
    | 'from'
    | 'contactId'
    | 'phoneNumberId'
    | 'providerMessageId'
    | 'type'
    | 'contextProviderMessageId'
    | 'contextMessageId'
    | 'receivedAt'
    | 'readAt'
  >,
  content: StoredInboundContent | null,
  medium: MediaMetadata | null = null,
): InboundMessage {
  const type =
    content?.type === 'unsupported' || !VIEW_TYPES.has(row.type) ? 'unsupported' : row.type;
  const isReaction = type === 'reaction';
  const forwarded = content?.context?.forwarded === true;
  const replyTo = isReaction ? null : row.contextProviderMessageId;
  return {
    id: row.id,
    direction: 'inbound',
    from: row.from,
    contactId: row.contactId,
    phoneNumberId: row.phoneNumberId,
    providerMessageId: row.providerMessageId,
    type,
    ...(content === null ? { contentErased: true as const } : kindOf(row, content, medium)),
    context:
      replyTo === null && !forwarded
        ? null
        : {
            messageId: replyTo === null ? null : row.contextMessageId,
            providerMessageId: replyTo,
            forwarded,
          },
    receivedAt: row.receivedAt.toISOString(),
    readAt: row.readAt?.toISOString() ?? null,
  };
}

/** The one object of the message's type. */
function kindOf(
  row: Pick<InboundMessageRow, 'contextMessageId'>,
  c: StoredInboundContent,
  medium: MediaMetadata | null,
): Partial<InboundMessage> {
  switch (c.type) {
    case 'text':
      return { text: { body: c.text.body } };
    case 'image':
    case 'audio':
    case 'video':
    case 'document':
    case 'sticker':
      // Every stored medium has its row; without one there is nothing to download.
      if (medium === null) return {};
      return {
        media: {
          id: medium.id,
          mimeType: medium.mimeType,
          sha256: medium.sha256,
          fileSize: medium.fileSize,
          caption: c.media.caption ?? null,
          filename: c.media.filename ?? null,
          ...(c.media.animated !== undefined && { animated: c.media.animated }),
        },
      };
    case 'location':
      return { location: c.location };
    case 'contacts':
      return { contacts: c.contacts };
    case 'interactive':
      return { interactive: c.interactive };
    case 'button':
      return { button: c.button };
    case 'reaction':
      return {
        reaction: {
          messageId: row.contextMessageId,
          providerMessageId: c.reaction.providerMessageId,
          emoji: c.reaction.emoji,
        },
      };
    case 'unsupported':
      return { unsupported: c.unsupported };
  }
}
