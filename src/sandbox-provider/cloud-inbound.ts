/**
 * A person writes to a business number: the sandbox opens the 24-hour customer service window
 * for that pair, keeps the message for the sandbox phone page, and POSTs the signed inbound
 * webhook (`field: messages`, `contacts[{profile:{name},wa_id}]`, `messages[{from,id,timestamp,
 * type:"text",text:{body}}]`) to every app whose WhatsApp grant covers the number's WABA,
 * waiting for their answers.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#text-messages
 */
import { appsOfWaba, deliverOnce, wabaNotification } from './cloud-webhooks.ts';
import { describePhoneNumber, newWamid, wabaOfPhoneNumber } from './cloud-state.ts';
import type { SandboxState } from './sandbox-state.ts';

export interface InboundInput {
  /** The business number written to. */
  phoneNumberId: string;
  /** The person's number, digits without `+`. */
  from: string;
  text: string;
  /** The person's WhatsApp profile name (default "Sandbox person"). */
  name?: string;
}

export type InboundOutcome =
  | { ok: true; wamid: string; deliveries: { appId: string; status: number | 'error' }[] }
  | { ok: false; reason: 'unknown_number' | 'no_app' };

/**
 * Write in as a person.
 *
 * @returns the wamid and each app's answer (`ok: true` even when an app failed: the message
 *   was written); `unknown_number` for a number the sandbox does not have; `no_app` when no
 *   app's grant covers it (nothing is recorded).
 */
export async function writeIn(state: SandboxState, input: InboundInput): Promise<InboundOutcome> {
  const wabaId = wabaOfPhoneNumber(input.phoneNumberId);
  if (!wabaId) return { ok: false, reason: 'unknown_number' };
  const apps = appsOfWaba(state, wabaId);
  if (apps.length === 0) return { ok: false, reason: 'no_app' };
  const now = state.now();
  const wamid = newWamid();
  state.cloud.lastInbound.set(`${input.phoneNumberId}:${input.from}`, now);
  state.cloud.messages.push({
    wamid,
    direction: 'sent_by_person',
    phoneNumberId: input.phoneNumberId,
    waId: input.from,
    type: 'text',
    text: input.text,
    status: 'delivered',
    at: now,
  });
  const value = {
    messaging_product: 'whatsapp',
    metadata: {
      display_phone_number: describePhoneNumber(input.phoneNumberId).digits,
      phone_number_id: input.phoneNumberId,
    },
    contacts: [{ profile: { name: input.name ?? 'Sandbox person' }, wa_id: input.from }],
    messages: [
      {
        from: input.from,
        id: wamid,
        timestamp: String(Math.floor(now / 1000)),
        type: 'text',
        text: { body: input.text },
      },
    ],
  };
  const notification = wabaNotification(wabaId, 'messages', value, now);
  const deliveries = await Promise.all(
    apps.map(async (appId) => ({
      appId,
      status: await deliverOnce(state, appId, 'messages', notification),
    })),
  );
  return { ok: true, wamid, deliveries };
}
