/**
 * What a Tech Provider does after Embedded Signup before a business can send and receive:
 * subscribe its app to the business's WABA and register the business phone number.
 *
 * - `POST /{version}/{waba-id}/subscribed_apps` → `{"success": true}`: the token's app hears the
 *   WABA's webhooks from now on (cloud-webhooks.ts sends an unsubscribed app nothing).
 * - `GET /{version}/{waba-id}/subscribed_apps` → `{"data": [{"whatsapp_business_api_data":
 *   {"id", "link", "name"}}]}`: the apps subscribed.
 * - `DELETE /{version}/{waba-id}/subscribed_apps` → `{"success": true}`: the token's app no
 *   longer is.
 * - `POST /{version}/{phone-number-id}/register`, JSON `{"messaging_product": "whatsapp",
 *   "pin": "<6 digits>"}` → `{"success": true}`: the number may send (cloud-messages.ts refuses
 *   an unregistered one with 133010). The first registration sets the number's two-step
 *   verification PIN; a later one with another PIN is refused with 133005. At most 10 requests
 *   per number in a 72-hour moving window: the 11th answers 133016 and the number cannot be
 *   registered for the next 72 hours.
 * - `POST /{version}/{phone-number-id}/deregister` → `{"success": true}`: it no longer may.
 *
 * A sandbox number starts verified but not registered, as Embedded Signup leaves it (it performs
 * the steps up to verification; registration is the Tech Provider's call).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/embedded-signup/onboarding-customers-as-a-tech-provider
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/solution-providers/manage-webhooks
 * @see https://developers.facebook.com/docs/graph-api/reference/whats-app-business-account/subscribed_apps/
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-phone-numbers/registration
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/solution-providers/registering-phone-numbers/
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes/
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { MANAGEMENT, MESSAGING, wabaAccess } from './cloud-auth.ts';
import { wabaOfPhoneNumber, type CloudState } from './cloud-state.ts';
import { GraphError, graphError, type GraphFault } from './graph-errors.ts';
import { appName, type SurfaceOptions } from './surface.ts';

const WabaParams = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  wabaId: Type.String({ maxLength: 40 }),
});
const NumberParams = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  phoneNumberId: Type.String({ maxLength: 40 }),
});
const Register = Type.Object({
  messaging_product: Type.String({ maxLength: 40 }),
  pin: Type.String({ maxLength: 40 }),
});

/** Registration requests allowed per number in `REGISTRATION_WINDOW_MS`. */
export const REGISTRATION_LIMIT = 10;
/** The moving window of the registration limit, and how long a number is then blocked: 72 h. */
export const REGISTRATION_WINDOW_MS = 72 * 3600 * 1000;

const SUCCESS = { 200: Type.Object({ success: Type.Boolean() }), '4xx': GraphError };
const INVALID: GraphFault = { code: 100, message: '(#100) Invalid parameter' };

/**
 * Count one registration request for `phoneNumberId` at `nowMs`.
 *
 * @returns the 133016 fault when the number is over its limit (then blocked for 72 hours).
 */
export function countRegistration(
  cloud: CloudState,
  phoneNumberId: string,
  nowMs: number,
): GraphFault | undefined {
  const blockedUntil = cloud.registrationBlockedUntil.get(phoneNumberId);
  const recent = (cloud.registrationRequests.get(phoneNumberId) ?? []).filter(
    (at) => nowMs - at < REGISTRATION_WINDOW_MS,
  );
  recent.push(nowMs);
  cloud.registrationRequests.set(phoneNumberId, recent);
  if ((blockedUntil === undefined || nowMs >= blockedUntil) && recent.length <= REGISTRATION_LIMIT)
    return undefined;
  if (blockedUntil === undefined || nowMs >= blockedUntil)
    cloud.registrationBlockedUntil.set(phoneNumberId, nowMs + REGISTRATION_WINDOW_MS);
  return {
    code: 133016,
    message: '(#133016) Account register deregister rate limit exceeded',
    details:
      'Registration or deregistration failed because there were too many attempts for this ' +
      'phone number in a short period of time',
  };
}

/** The subscribed-apps and registration surface. */
export async function cloudOnboardingRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  const { state } = options;
  const cloud = state.cloud;
  app.setErrorHandler((_err, _request, reply) => graphError(reply, 400, INVALID));

  app.post(
    '/:version/:wabaId/subscribed_apps',
    { schema: { params: WabaParams, response: SUCCESS } },
    async (request, reply) => {
      const { wabaId } = request.params as Static<typeof WabaParams>;
      const access = wabaAccess(request, options, wabaId, [MANAGEMENT]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      const apps = cloud.subscribedApps.get(wabaId) ?? new Set<string>();
      apps.add(access.record.appId);
      cloud.subscribedApps.set(wabaId, apps);
      return { success: true };
    },
  );

  app.get(
    '/:version/:wabaId/subscribed_apps',
    {
      schema: {
        params: WabaParams,
        response: { 200: Type.Object({ data: Type.Array(Type.Unknown()) }), '4xx': GraphError },
      },
    },
    async (request, reply) => {
      const { wabaId } = request.params as Static<typeof WabaParams>;
      const access = wabaAccess(request, options, wabaId, [MANAGEMENT, MESSAGING]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      const data = [...(cloud.subscribedApps.get(wabaId) ?? [])].map((appId) => {
        const registered = state.apps.get(appId);
        return {
          whatsapp_business_api_data: {
            id: appId,
            link: `https://www.facebook.com/games/?app_id=${appId}`,
            name: registered ? appName(registered) : `App ${appId}`,
          },
        };
      });
      return { data };
    },
  );

  app.delete(
    '/:version/:wabaId/subscribed_apps',
    { schema: { params: WabaParams, response: SUCCESS } },
    async (request, reply) => {
      const { wabaId } = request.params as Static<typeof WabaParams>;
      const access = wabaAccess(request, options, wabaId, [MANAGEMENT]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      cloud.subscribedApps.get(wabaId)?.delete(access.record.appId);
      return { success: true };
    },
  );

  app.post(
    '/:version/:phoneNumberId/register',
    { schema: { params: NumberParams, body: Register, response: SUCCESS } },
    async (request, reply) => {
      const { phoneNumberId } = request.params as Static<typeof NumberParams>;
      const access = wabaAccess(request, options, wabaOfPhoneNumber(phoneNumberId) ?? '', [
        MANAGEMENT,
        MESSAGING,
      ]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      const body = request.body as Static<typeof Register>;
      if (body.messaging_product !== 'whatsapp' || !/^[0-9]{6}$/.test(body.pin))
        return graphError(reply, 400, INVALID);
      const limited = countRegistration(cloud, phoneNumberId, state.now());
      if (limited) return graphError(reply, 400, limited);
      const pin = cloud.twoStepPins.get(phoneNumberId);
      if (pin !== undefined && pin !== body.pin)
        return graphError(reply, 400, {
          code: 133005,
          message: '(#133005) Two step verification PIN Mismatch',
          details: 'The two-step verification PIN is incorrect',
        });
      cloud.twoStepPins.set(phoneNumberId, body.pin);
      cloud.registered.add(phoneNumberId);
      return { success: true };
    },
  );

  app.post(
    '/:version/:phoneNumberId/deregister',
    { schema: { params: NumberParams, response: SUCCESS } },
    async (request, reply) => {
      const { phoneNumberId } = request.params as Static<typeof NumberParams>;
      const access = wabaAccess(request, options, wabaOfPhoneNumber(phoneNumberId) ?? '', [
        MANAGEMENT,
        MESSAGING,
      ]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      const limited = countRegistration(cloud, phoneNumberId, state.now());
      if (limited) return graphError(reply, 400, limited);
      cloud.registered.delete(phoneNumberId);
      return { success: true };
    },
  );
}
