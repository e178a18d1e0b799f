/**
 * What messaging needs from the provider, over partner/'s outbound-call path: every call runs
 * inside `withProvider` (the decrypted token stays in partner/; a revoked connection refuses
 * before any I/O; Graph error 190 revokes).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see docs/messaging.md "The provider"
 */

/** A message as the Cloud API's `POST /{phone-number-id}/messages` takes it (without the envelope). */
export type OutboundMessage =
  | { to: string; type: 'text'; text: { body: string } }
  | {
      to: string;
      type: 'template';
      template: { name: string; language: { code: string }; components?: unknown[] };
    };

/** A sender number of the connected account (`GET /{waba-id}/phone_numbers`). */
export interface PhoneNumber {
  /** The provider's phone number id. */
  id: string;
  displayPhoneNumber: string;
  verifiedName: string;
  qualityRating: string;
  messagingLimitTier: string | null;
  wabaId: string;
}

/** A message template (`GET /{waba-id}/message_templates`). */
export interface MessageTemplate {
  id: string;
  name: string;
  language: string;
  category: string;
  /** APPROVED, PENDING, REJECTED, PAUSED, DISABLED, … */
  status: string;
  components: unknown[];
  wabaId: string;
}

/** The provider as messaging sees it: a portal's numbers and templates, and sending. */
export interface MessagingProvider {
  /**
   * Send one message from `phoneNumberId`; `bizOpaqueCallbackData` (Portico's message id) comes
   * back in its status webhooks.
   *
   * @returns the provider's message id (wamid): the provider accepted the message.
   * @throws ConnectionInactiveError before any I/O when the connection is not active.
   * @throws ProviderError (`throttled`, `unavailable` are retryable; `rejected` is final;
   *   `dead_token` has revoked the connection).
   */
  sendMessage(
    portalId: number,
    phoneNumberId: string,
    message: OutboundMessage,
    bizOpaqueCallbackData: string,
  ): Promise<{ wamid: string }>;
  /** Every phone number of every WABA of the portal's grant. @throws as `sendMessage`. */
  listPhoneNumbers(portalId: number): Promise<PhoneNumber[]>;
  /** Every template of every WABA of the portal's grant (all pages). @throws as `sendMessage`. */
  listTemplates(portalId: number): Promise<MessageTemplate[]>;
}
