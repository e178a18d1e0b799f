/**
 * What messaging needs from the provider, over partner/'s outbound-call path: every call runs
 * inside partner's `withCloudApi` (the decrypted token stays in partner/; a revoked connection refuses
 * before any I/O with ConnectionInactiveError; Graph error 190 revokes), through the Cloud API
 * client (`client.cloud`, partner/cloud-api.ts).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages
 * @see docs/messaging.md "The provider"
 */
import type {
  MessageTemplate,
  OutboundMessage,
  PhoneNumber,
} from '../../partner/cloud-api/cloud-api.ts';
import type { PartnerService } from '../../partner/partner-service.ts';

export type {
  MessageTemplate,
  OutboundMessage,
  PhoneNumber,
} from '../../partner/cloud-api/cloud-api.ts';

/** Most template pages read per WABA (100 templates each): a bound on a looping cursor. */
const MAX_TEMPLATE_PAGES = 20;

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

/**
 * The provider through partner/: `withCloudApi` for every call, `wabaIdsOf` for the WABAs of
 * the portal's grant.
 */
export function partnerMessagingProvider(deps: {
  withCloudApi: PartnerService['withCloudApi'];
  wabaIdsOf: (portalId: number) => Promise<string[]>;
}): MessagingProvider {
  const { withCloudApi, wabaIdsOf } = deps;
  return {
    sendMessage: (portalId, phoneNumberId, message, bizOpaque) =>
      withCloudApi(portalId, 'message send', (cloud) =>
        cloud.sendMessage(phoneNumberId, message, bizOpaque),
      ),

    async listPhoneNumbers(portalId) {
      const wabaIds = await wabaIdsOf(portalId);
      return withCloudApi(portalId, 'phone numbers read', async (cloud) => {
        const lists = await Promise.all(wabaIds.map((waba) => cloud.listPhoneNumbers(waba)));
        return lists.flat();
      });
    },

    async listTemplates(portalId) {
      const wabaIds = await wabaIdsOf(portalId);
      return withCloudApi(portalId, 'templates read', async (cloud) => {
        const all: MessageTemplate[] = [];
        for (const waba of wabaIds) {
          let after: string | undefined;
          for (let page = 0; page < MAX_TEMPLATE_PAGES; page++) {
            const result = await cloud.listTemplates(waba, {
              limit: 100,
              ...(after !== undefined && { after }),
            });
            all.push(...result.items);
            if (result.after === null) break;
            after = result.after;
          }
        }
        return all;
      });
    },
  };
}
