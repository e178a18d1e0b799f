/**
 * The status webhooks of a send, as the Cloud API posts them (`field: messages`, `value:
 * {messaging_product, metadata, statuses: [item]}`), one per step, each after the previous
 * one's delivery:
 *
 * - a message that goes through: `sent`, `delivered`, `read`, each item carrying the same
 *   per-message `pricing: {billable, pricing_model: "PMP", type, category}` (cloud-pricing.ts)
 *   and no `conversation` (per-message pricing includes one only for a message in a free
 *   entry point window; the sandbox leaves it out there too, `pricing.type` says it);
 * - a voice message (`audio` with `voice: true`): `played` after `read`, the first time the person
 *   plays it;
 * - a message that fails (`PhoneMessage.failure`): one `failed` with `errors: [{code, title,
 *   message, error_data: {details}, href}]` and no pricing.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status/
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components#statuses-object
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/audio-messages
 */
import { bsuidOfPhone, isBsuid } from './sandbox-people.ts';
import { describePhoneNumber, type PhoneMessage } from './cloud-state.ts';
import { deliverWithRetries, wabaNotification } from './cloud-webhooks.ts';
import type { SandboxState } from './sandbox-state.ts';

/** The failures a sent message may end in, by Cloud API code. */
const FAILURES: Record<number, { title: string; details: string }> = {
  131026: { title: 'Message undeliverable', details: 'Message Undeliverable.' },
  131050: {
    title: 'Unable to deliver the message',
    details:
      'This recipient has chosen to stop receiving marketing messages on WhatsApp from your business.',
  },
  131047: {
    title: 'Re-engagement message',
    details:
      'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
  },
};

const ERROR_CODES_URL =
  'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/';

/** The `errors[]` item of a failed status for `code`. */
function statusError(code: number) {
  const { title, details } = FAILURES[code] ?? { title: 'Unknown error', details: 'Unknown' };
  return { code, title, message: title, error_data: { details }, href: ERROR_CODES_URL };
}

/** The `statuses[]` item of a status webhook. */
function statusItem(
  m: PhoneMessage,
  status: PhoneMessage['status'],
  data: string | undefined,
  nowMs: number,
) {
  return {
    id: m.wamid,
    status,
    timestamp: String(Math.floor(nowMs / 1000)),
    // The phone when the person has one in the sandbox, and always their BSUID.
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
    ...(isBsuid(m.waId)
      ? { recipient_user_id: m.waId }
      : { recipient_id: m.waId, recipient_user_id: bsuidOfPhone(m.waId) }),
    ...(data !== undefined && { biz_opaque_callback_data: data }),
    ...(m.failure !== undefined && { errors: [statusError(m.failure)] }),
    ...(m.pricing && { pricing: m.pricing }),
  };
}

/**
 * Schedule the message's status webhooks to `appId`, one after the other: each step waits for
 * the previous delivery to end, then the rest of its delay (so they arrive in order, as the
 * provider mostly sends them; an app must still cope with any order).
 */
export function scheduleStatuses(
  state: SandboxState,
  appId: string,
  wabaId: string,
  m: PhoneMessage,
  data: string | undefined,
): void {
  const number = describePhoneNumber(m.phoneNumberId);
  const voice = m.type === 'audio' && m.content?.voice === true;
  const steps: PhoneMessage['status'][] =
    m.failure !== undefined
      ? ['failed']
      : ['sent', 'delivered', 'read', ...(voice ? (['played'] as const) : [])];
  const delays = state.cloud.options.statusDelaysMs;
  const step = (i: number) => {
    const status = steps[i];
    if (status === undefined) return;
    const wait = (delays[i] ?? 0) - (delays[i - 1] ?? 0);
    state.cloud.schedule(Math.max(wait, 0), async () => {
      m.status = status;
      const value = {
        messaging_product: 'whatsapp',
        metadata: { display_phone_number: number.digits, phone_number_id: m.phoneNumberId },
        statuses: [statusItem(m, status, data, state.now())],
      };
      await deliverWithRetries(
        state,
        appId,
        'messages',
        wabaNotification(wabaId, 'messages', value, state.now()),
      );
      step(i + 1);
    });
  };
  step(0);
}
