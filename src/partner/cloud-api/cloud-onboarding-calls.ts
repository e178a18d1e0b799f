/**
 * The Cloud API calls of onboarding a business after its grant, made with the business's token:
 * subscribe Portico's app to a WABA's webhooks, read the WABA's subscribed apps, register a
 * business phone number with its two-step verification PIN. Part of `client.cloud(token,
 * signal)` (cloud-api.ts); over `graphCall` like every provider call.
 *
 * Invariants: the PIN travels only in the JSON body, never in a URL, a log line or an error
 * message; ids that become path segments are Graph ids (digits).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/embedded-signup/onboarding-customers-as-a-tech-provider
 * @see docs/partner-connection.md "Onboarding"
 */
import { asString, graphCall } from '../graph-call.ts';
import { ProviderError } from '../provider-error.ts';
import { dataOf } from './cloud-api-parse.ts';

const GRAPH_ID = /^[0-9]{1,30}$/;
const PIN = /^[0-9]{6}$/;

/** @throws ProviderError `other` (before any I/O) when `id` is not a Graph id. */
function graphId(what: string, id: string): void {
  if (!GRAPH_ID.test(id)) throw new ProviderError('other', `${what} is not a Graph id`);
}

/** The onboarding calls over `base` (`{graph}/{version}`) for one token and abort signal. */
export function onboardingCalls(
  base: string,
  timeoutMs: number,
  token: string,
  signal?: AbortSignal,
) {
  const init = { bearer: token, ...(signal && { signal }) };
  return {
    /**
     * Subscribe the token's app to the WABA's webhooks (`POST /{waba-id}/subscribed_apps`):
     * without it the provider sends the app none of the WABA's webhooks.
     *
     * @throws ProviderError
     * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/solution-providers/manage-webhooks
     */
    async subscribeApp(wabaId: string): Promise<void> {
      graphId('WABA id', wabaId);
      const body = await graphCall(timeoutMs, 'webhook subscription', subscribed(base, wabaId), {
        ...init,
        method: 'POST',
      });
      if (body.success !== true)
        throw new ProviderError('other', 'webhook subscription: not confirmed');
    },

    /**
     * The ids of the apps subscribed to the WABA's webhooks (`GET /{waba-id}/subscribed_apps`,
     * `data[].whatsapp_business_api_data.id`).
     *
     * @throws ProviderError
     * @see https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/subscribed_apps/
     */
    async subscribedAppIds(wabaId: string): Promise<string[]> {
      graphId('WABA id', wabaId);
      const body = await graphCall(
        timeoutMs,
        'webhook subscriptions read',
        subscribed(base, wabaId),
        {
          ...init,
          method: 'GET',
        },
      );
      return dataOf(body).flatMap((item) => {
        const app = (item as { whatsapp_business_api_data?: { id?: unknown } })
          .whatsapp_business_api_data;
        const id = asString(app?.id);
        return id === undefined ? [] : [id];
      });
    },

    /**
     * Register the business phone number for the Cloud API (`POST /{phone-number-id}/register`,
     * JSON `{messaging_product: "whatsapp", pin}`); `pin` (six digits) becomes its two-step
     * verification PIN, or must equal the one it has.
     *
     * @throws ProviderError; `graphCode` 133016 when the number's registration requests are
     *   used up (10 in 72 hours), 133005 for a PIN other than the number's.
     * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-phone-numbers/registration
     */
    async registerNumber(phoneNumberId: string, pin: string): Promise<void> {
      graphId('phone number id', phoneNumberId);
      if (!PIN.test(pin)) throw new ProviderError('other', 'registration: the PIN is not 6 digits');
      const body = await graphCall(
        timeoutMs,
        'number registration',
        `${base}/${phoneNumberId}/register`,
        {
          ...init,
          json: { messaging_product: 'whatsapp', pin },
        },
      );
      if (body.success !== true)
        throw new ProviderError('other', 'number registration: not confirmed');
    },
  };
}

const subscribed = (base: string, wabaId: string) => `${base}/${wabaId}/subscribed_apps`;
