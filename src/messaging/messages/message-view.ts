/**
 * Stored rows as the API shows them: messages, credit transactions, summary buckets.
 */
import { keysetCursor } from '../../api-kit/keyset-cursor.ts';
import type { CreditTransactionRow } from '../credit/credit-ledger.ts';
import type { SummaryRow } from './messages-repository.ts';
import type { MessageRow } from './messages-repository.ts';
import type { CreditTransaction, Message, SummaryPeriod } from './messages-schemas.ts';
import {
  openContent,
  type ContentKeyring,
  type OutboundContent,
  type SendKind,
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
export type ContentFields = Pick<Message, Exclude<SendKind, 'template'> | 'template' | 'context'>;

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
export function errorCodeOf(stored: string): number | string {
  return /^\d{1,9}$/.test(stored) ? Number(stored) : stored;
}

/** The API's view of an outbound message and its content (`outboundContentOf`). */
export function toMessage(row: MessageRow, content: OutboundContent | null): Message {
  return {
    id: row.id,
    direction: 'outbound',
    to: row.to,
    contactId: row.contactId,
    from: row.from,
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
  };
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
