/**
 * Stored rows as the API shows them: messages of both directions (one mapper, `messageView`,
 * from a `messages` row to `Message` or `InboundMessage`), credit transactions, summary
 * buckets.
 *
 * @see docs/messaging.md "Messages"
 */
import { keysetCursor } from '../../api-kit/keyset-cursor.ts';
import type { media } from '../../db/schema/conversations.ts';
import { INBOUND_MEDIA_TYPES } from '../../partner/cloud-api/provider-webhook-events.ts';
import type { CreditTransactionRow } from '../credit/credit-ledger.ts';
import type { InboundMessage } from './inbound-schemas.ts';
import type { MessageRow, StoredMessageRow, SummaryRow } from './messages-repository.ts';
import type { CreditTransaction, Message, SummaryPeriod } from './messages-schemas.ts';
import {
  openContent,
  type ContentKeyring,
  type OutboundContent,
  type SendKind,
  type StoredInboundContent,
} from './message-content.ts';

export const messageCursor = keysetCursor(/^msg_[0-9A-Za-z]{1,60}$/);
export const transactionCursor = keysetCursor(/^ctx_[0-9A-Za-z]{1,60}$/);

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

/**
 * What an outbound message says: its sealed content opened, or (a row written before content
 * was sealed) its plaintext columns; null when erased or expired.
 */
export function outboundContentOf(
  keyring: ContentKeyring,
  row: MessageRow,
): OutboundContent | null {
  if (row.content !== null)
    return openContent<OutboundContent>(keyring, row.portalId, row.id, row.content);
  if (row.textBody === null && row.templateParameters === null) return null;
  return {
    ...(row.textBody !== null && { text: { body: row.textBody } }),
    ...(row.templateParameters !== null && { template: { parameters: row.templateParameters } }),
  };
}

/** The fields of a message's response that say what it says. */
type ContentFields = Pick<Message, Exclude<SendKind, 'template'> | 'template' | 'context'>;

/**
 * What a message says as the API shows it: its kind's object (absent once erased; a template's
 * name and language always), and the message it quotes.
 */
export function contentFields(row: MessageRow, content: OutboundContent | null): ContentFields {
  if (row.type === 'template')
    return {
      template: {
        name: row.templateName ?? '',
        language: row.templateLanguage ?? '',
        parameters: content?.template?.parameters ?? [],
        ...(content?.template?.components && { components: content.template.components }),
      },
      ...(content?.context && { context: content.context }),
    };
  const object = content?.[row.type];
  return {
    ...(object !== undefined && { [row.type]: object }),
    ...(content?.context && { context: content.context }),
  };
}

/**
 * A failure's code as the API shows it: the provider's error code as the integer Meta sends
 * (`131026`; stored as text beside Portico's own codes), or Portico's own code (`not_connected`,
 * `delivery_failed`, …) as a string.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 */
function errorCodeOf(stored: string): number | string {
  return /^\d{1,9}$/.test(stored) ? Number(stored) : stored;
}

/** The API's view of an outbound message and its content (`outboundContentOf`). */
export function toMessage(row: MessageRow, content: OutboundContent | null): Message {
  return {
    id: row.id,
    direction: 'outbound',
    to: row.waId,
    contactId: row.contactId,
    from: row.phoneNumberId,
    type: row.type,
    ...contentFields(row, content),
    status: row.status,
    providerMessageId: row.providerMessageId,
    queuedAt: row.queuedAt.toISOString(),
    sentAt: iso(row.sentAt),
    deliveredAt: iso(row.deliveredAt),
    readAt: iso(row.readAt),
    failedAt: iso(row.failedAt),
    error:
      row.errorCode === null
        ? null
        : { code: errorCodeOf(row.errorCode), title: row.errorTitle ?? row.errorCode },
    price: { amount: row.priceMinor, currency: row.currency },
    pricing: {
      billable: row.pricingBillable,
      category: row.pricingCategory,
      pricingModel: row.pricingModel,
      type: row.pricingType,
      charged: row.chargedMinor,
    },
  };
}

/** A stored message as the API shows it, of either direction. */
export type AnyMessage = Message | InboundMessage;

type MediaRow = typeof media.$inferSelect;

/** What the view reads of a medium's row. */
export type MediaMetadata = Pick<MediaRow, 'id' | 'mimeType' | 'sha256' | 'fileSize'>;

/**
 * The one mapper from a `messages` row to the API's message: `toMessage` for an outbound row,
 * `inboundMessageView` for an inbound one.
 *
 * @param content the row's opened content (`outboundContentOf`, `openContent`), or null when it
 *   is gone (expired, erased, not openable).
 * @param medium an inbound media message's medium row (null: none known).
 */
export function messageView(
  row: StoredMessageRow,
  content: OutboundContent | StoredInboundContent | null,
  medium: MediaMetadata | null = null,
): AnyMessage {
  return row.direction === 'outbound'
    ? toMessage(row as MessageRow, content as OutboundContent | null)
    : inboundMessageView(row, content as StoredInboundContent | null, medium);
}

/** The inbound types the view names as they are; any other provider type reads `unsupported`. */
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

/**
 * The API's view of an inbound message (`InboundMessageSchema`, also the `message.received`
 * event's data).
 *
 * @param content the opened content (`openContent`), or null when it is gone (expired, erased):
 *   then the type's object is absent and `contentErased` is true.
 * @param medium the medium's row, for the five media types (null: none known).
 * @see docs/messaging.md "Inbound messages"
 */
export function inboundMessageView(
  row: Pick<
    StoredMessageRow,
    | 'id'
    | 'waId'
    | 'contactId'
    | 'phoneNumberId'
    | 'providerMessageId'
    | 'type'
    | 'contextProviderMessageId'
    | 'contextMessageId'
    | 'createdAt'
    | 'readAt'
  >,
  content: StoredInboundContent | null,
  medium: MediaMetadata | null = null,
): InboundMessage {
  const type =
    content?.type === 'unsupported' || !VIEW_TYPES.has(row.type) ? 'unsupported' : row.type;
  const isReaction = type === 'reaction';
  const forwarded = content?.context?.forwarded === true;
  const frequentlyForwarded = content?.context?.frequentlyForwarded === true;
  const replyTo = isReaction ? null : row.contextProviderMessageId;
  return {
    id: row.id,
    direction: 'inbound',
    from: row.waId,
    contactId: row.contactId,
    phoneNumberId: row.phoneNumberId,
    providerMessageId: row.providerMessageId ?? '',
    type,
    ...(content === null ? { contentErased: true as const } : kindOf(row, content, medium)),
    context:
      replyTo === null && !forwarded
        ? null
        : {
            messageId: replyTo === null ? null : row.contextMessageId,
            providerMessageId: replyTo,
            forwarded,
            frequentlyForwarded,
          },
    ...(content?.referral && { referral: content.referral }),
    receivedAt: row.createdAt.toISOString(),
    readAt: row.readAt?.toISOString() ?? null,
  };
}

/** The one object of an inbound message's type. */
function kindOf(
  row: Pick<StoredMessageRow, 'contextMessageId'>,
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
          ...(c.media.voice !== undefined && { voice: c.media.voice }),
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

export function toTransaction(row: CreditTransactionRow): CreditTransaction {
  return {
    id: row.id,
    kind: row.kind,
    amount: row.amount,
    currency: row.currency,
    messageId: row.messageId,
    note: row.note,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The summary's buckets from its rows (one per bucket and status), oldest first. */
export function toPeriods(rows: readonly SummaryRow[], currency: string): SummaryPeriod[] {
  const byStart = new Map<string, SummaryPeriod>();
  for (const row of rows) {
    const start = row.start.toISOString();
    let period = byStart.get(start);
    if (!period) {
      period = {
        start,
        total: 0,
        counts: { queued: 0, sent: 0, delivered: 0, read: 0, failed: 0 },
        deliveryRate: null,
        cost: { amount: 0, currency },
      };
      byStart.set(start, period);
    }
    period.total += row.count;
    period.counts[row.status] += row.count;
    period.cost.amount += row.captured;
  }
  const periods = [...byStart.values()].sort((a, b) => (a.start < b.start ? -1 : 1));
  for (const p of periods) {
    const settled = p.total - p.counts.queued;
    p.deliveryRate = settled === 0 ? null : (p.counts.delivered + p.counts.read) / settled;
  }
  return periods;
}
