/**
 * What a message costs once the provider says how it bills it. The Cloud API prices per message
 * (`pricing_model: "PMP"`): each status webhook of a message carries `pricing: {billable,
 * pricing_model, type, category}`, where `type` is `regular` (billed), `free_entry_point`
 * (inside a free entry point window: the business answered within 24 hours a person who wrote
 * from an ad or a Page call-to-action, 72 hours free) or `free_customer_service` (free inside
 * the customer service window: the provider's current rules bill service messages and utility
 * templates there, but the value stays valid), and `category` is the one billed
 * (`marketing`, `utility`, `authentication`, `authentication_international`, `service`,
 * `marketing_lite`). Portico reserves a price from its own table at send time (config
 * `MESSAGING_PRICE_*`, by template category or `text`); the first status that carries a
 * per-message `pricing` settles the reservation at the price of the category billed, from the
 * same table (docs/decisions/0056-billed-pricing.md):
 *
 * - not billable (`billable: false`, or a `free_*` type): the charge is 0, the reservation
 *   released whole;
 * - billable at another category: charged that category's price; the part of the reservation
 *   not charged is released, a price above it is charged on top (`charge`);
 * - no `pricing`, or a model other than `PMP` (the retired conversation-based model): the
 *   reserved price, as before.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/pricing
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status/
 */

/** The `pricing` object of a status webhook, camelCased (partner/'s `MessageStatusEvent`). */
export interface ProviderPricing {
  billable?: boolean;
  /** Lower case, e.g. `utility`. */
  category?: string;
  /** `PMP` (per message); `CBP` was the retired conversation-based model. */
  pricingModel?: string;
  /** `regular`, `free_customer_service` or `free_entry_point`. */
  type?: string;
}

/** Portico's price table: minor units per `text` (any free-form message) and template category. */
export interface CategoryPriceTable {
  text: number;
  MARKETING: number;
  UTILITY: number;
  AUTHENTICATION: number;
}

/** The row of Portico's table a billed category is priced from. */
const TABLE_ROW: Record<string, keyof CategoryPriceTable> = {
  marketing: 'MARKETING',
  marketing_lite: 'MARKETING',
  utility: 'UTILITY',
  authentication: 'AUTHENTICATION',
  authentication_international: 'AUTHENTICATION',
  service: 'text',
};

/** Whether `pricing` is a per-message verdict Portico settles by. */
export function isPerMessage(pricing: ProviderPricing | undefined): pricing is ProviderPricing {
  return pricing?.pricingModel === 'PMP';
}

/** Whether the provider says it bills nothing for the message. */
export function isFree(pricing: ProviderPricing): boolean {
  return pricing.billable === false || (pricing.type ?? '').startsWith('free_');
}

/**
 * The price Portico charges for a message the provider prices as `pricing`, in minor units.
 *
 * @param reserved the price reserved at send time (kept when the category is missing or
 *   unknown, or when there is no table).
 * @param table Portico's prices; without it, a billable message keeps its reserved price.
 * @returns 0 when not billable; the table's price of the billed category; else `reserved`.
 */
export function billedPrice(
  pricing: ProviderPricing,
  reserved: number,
  table: CategoryPriceTable | undefined,
): number {
  if (isFree(pricing)) return 0;
  const row = pricing.category === undefined ? undefined : TABLE_ROW[pricing.category];
  return table && row ? table[row] : reserved;
}

/**
 * How a reservation of `reserved` settles at a charge of `charged` (both minor units, ≥ 0):
 * `capture` spends part of it, `release` frees the rest, `charge` is taken beyond it.
 */
export function settlementOf(
  reserved: number,
  charged: number,
): { capture: number; release: number; charge: number } {
  return {
    capture: Math.min(reserved, charged),
    release: Math.max(reserved - charged, 0),
    charge: Math.max(charged - reserved, 0),
  };
}

/**
 * The category a message is estimated at before the provider bills it: its template's category
 * in lower case, else `service` (a free-form message).
 */
export function estimatedCategory(templateCategory: string | null): string {
  return templateCategory === null ? 'service' : templateCategory.toLowerCase();
}
