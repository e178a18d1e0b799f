/**
 * What the sandbox bills a message it sends, as the Cloud API's per-message pricing (PMP)
 * decides it and as each of the message's status webhooks carries it: `pricing: {billable,
 * pricing_model: "PMP", type, category}`.
 *
 * - Every message is billed in its category (`billable: true`, `type: "regular"`): a template
 *   in its template's category (`marketing`, `utility`, `authentication`), a non-template
 *   message, which can only be sent inside the customer service window, as `service`. An open
 *   customer service window makes nothing free: service messages are charged per message, and
 *   so are utility templates sent inside the window.
 * - Inside a free entry point window every message is free (`billable: false`, `type:
 *   "free_entry_point"`, its category kept). The window opens when the business answers, within
 *   24 hours, a message the person wrote from a click-to-WhatsApp ad or a Page call-to-action
 *   (an inbound message with a `referral`), and lasts 72 hours from that answer
 *   (`CloudState.freeEntryPoint`).
 *
 * No free monthly allotment of service messages is modelled: the provider's page documents none.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/pricing
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/send-messages
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
 * for a non-template message): free when sent inside the person's free entry point window,
 * billed in its category otherwise.
 */
export function pricingFor(category: string, freeEntryPoint: boolean): CloudPricing {
  return {
    billable: !freeEntryPoint,
    pricing_model: 'PMP',
    type: freeEntryPoint ? 'free_entry_point' : 'regular',
    category,
  };
}
