/**
 * What the sandbox bills a message it sends, as the Cloud API's per-message pricing (PMP)
 * decides it and as each of the message's status webhooks carries it: `pricing: {billable,
 * pricing_model: "PMP", type, category}`.
 *
 * - A marketing or authentication template: billed (`billable: true`, `type: "regular"`),
 *   whether or not a customer service window is open.
 * - A utility template: free inside an open customer service window (`billable: false`, `type:
 *   "free_customer_service"`), billed outside it (`regular`).
 * - A non-template (service) message, which can only be sent inside the window: free
 *   (`billable: false`, `type: "free_customer_service"`, `category: "service"`).
 *
 * Free entry point windows (a person who wrote from a click-to-WhatsApp ad or a Page button:
 * `type: "free_entry_point"`) are not modelled: the sandbox's people never write from an ad.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/pricing
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status/
 */

/** A status webhook's `pricing` object. */
export interface CloudPricing {
  billable: boolean;
  pricing_model: 'PMP';
  type: 'regular' | 'free_customer_service' | 'free_entry_point';
  /** `marketing`, `utility`, `authentication` or `service`. */
  category: string;
}

/**
 * The pricing of a message of `category` (a template's category in lower case, or `service`
 * for a non-template message) sent while the person's customer service window is open or not.
 */
export function pricingFor(category: string, windowOpen: boolean): CloudPricing {
  const free = category === 'service' || (category === 'utility' && windowOpen);
  return {
    billable: !free,
    pricing_model: 'PMP',
    type: free ? 'free_customer_service' : 'regular',
    category,
  };
}
