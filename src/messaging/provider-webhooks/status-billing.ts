/**
 * What one status event does to a message's money: Meta's per-message pricing recorded on the
 * message and the credit settled at the category billed (docs/decisions/0056-billed-pricing.md).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/pricing
 */
import type { adjust, settle } from '../credit/credit-ledger.ts';
import {
  billedPrice,
  isPerMessage,
  settlementOf,
  type CategoryPriceTable,
} from '../credit/billed-pricing.ts';
import type { MessageRow, MessageStatus } from '../store/messages-repository.ts';
import type { StatusToApply } from './status-queue.ts';

export type SettleItem = Parameters<typeof settle>[2][number];
export type AdjustItem = Parameters<typeof adjust>[2][number];

/**
 * What one status event does to a message's money and billing columns, given the message as
 * it is after the event's status change (`row`) and its status before (`from`)
 * (credit/billed-pricing.ts, docs/decisions/0056-billed-pricing.md):
 *
 * - the provider's first `pricing` is recorded on the message (a later one changes nothing);
 * - leaving `queued` for `failed` releases the reservation (charged 0);
 * - leaving `queued` for a sent status settles the reservation at the billed price when the
 *   event carries per-message pricing, else at the reserved price: a capture, a release of what
 *   was reserved beyond it, a charge of what it costs beyond the reservation;
 * - per-message pricing first seen after the message was settled (its first status carried
 *   none) moves the difference from what was charged: a refund or a charge.
 *
 * `chargedMinor` in `columns` assumes an `adjust` item moves its whole amount; the caller
 * lowers it by what a charge could not take.
 */
export function billingOf(
  row: MessageRow,
  from: MessageStatus,
  event: Pick<StatusToApply, 'pricing'>,
  table: CategoryPriceTable | undefined,
): { columns: Partial<MessageRow>; settle: SettleItem[]; adjust: AdjustItem | null } {
  const fresh = row.pricingModel === null ? event.pricing : undefined;
  const columns: Partial<MessageRow> = fresh
    ? {
        pricingBillable: fresh.billable ?? null,
        pricingModel: fresh.pricingModel ?? null,
        pricingType: fresh.type ?? null,
        pricingCategory: fresh.category ?? null,
      }
    : {};
  const reserved = row.priceMinor;
  const item = { messageId: row.id, currency: row.currency };
  if (from === 'queued' && row.status === 'failed')
    return {
      columns: { ...columns, chargedMinor: 0 },
      settle: [{ ...item, kind: 'release', amount: reserved }],
      adjust: null,
    };
  if (from === 'queued') {
    const charged = isPerMessage(fresh) ? billedPrice(fresh, reserved, table) : reserved;
    const s = settlementOf(reserved, charged);
    return {
      columns: { ...columns, chargedMinor: charged },
      settle: [
        { ...item, kind: 'capture', amount: s.capture },
        { ...item, kind: 'release', amount: s.release },
      ],
      adjust: s.charge > 0 ? { ...item, kind: 'charge', amount: s.charge } : null,
    };
  }
  if (isPerMessage(fresh) && row.status !== 'failed' && row.status !== 'queued') {
    const before = row.chargedMinor ?? reserved;
    const charged = billedPrice(fresh, reserved, table);
    const diff = charged - before;
    return {
      columns: { ...columns, chargedMinor: charged },
      settle: [],
      adjust:
        diff === 0
          ? null
          : { ...item, kind: diff > 0 ? 'charge' : 'refund', amount: Math.abs(diff) },
    };
  }
  return { columns, settle: [], adjust: null };
}
