/**
 * A person writes to a business number: the sandbox opens the 24-hour customer service window
 * for that pair, keeps the message for the sandbox phone page, and POSTs the signed inbound
 * webhook (`field: messages`, `contacts[{profile:{name},wa_id}]`, `messages[{from,id,timestamp,
 * type,…}]`, the item as inbound-message.ts makes it) to every app whose WhatsApp grant covers
 * the number's WABA, waiting for their answers.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 */
import { appsOfWaba, deliverOnce, wabaNotification } from './cloud-webhooks.ts';
import {
  describePhoneNumber,
  newWamid,
  wabaOfPhoneNumber,
  type DeliveryStatus,
} from './cloud-state.ts';
import { webhookMessage, type InboundMessage, type MediaSource } from './inbound-message.ts';
import type { SandboxState } from './sandbox-state.ts';

export interface InboundInput {
  /** The business number written to. */
  phoneNumberId: string;
  /** The person's number, digits without `+`. */
  from: string;
  /** A text message's body (or give `message`). */
  text?: string;
  /** A Cloud API inbound message without `id`, `from` and `timestamp` (inbound-message.ts). */
  message?: InboundMessage;
  /** Where a medium without an `id` takes its bytes from (default: the type's sample). */
  media?: MediaSource;
  /** The person's WhatsApp profile name (default "Sandbox person"). */
  name?: string;
}

export type InboundOutcome =
  | { ok: true; wamid: string; deliveries: { appId: string; status: DeliveryStatus }[] }
  | { ok: false; reason: 'unknown_number' | 'no_app' | 'unknown_media' | 'no_message' };

/** A short line the sandbox phone shows for a person's message. */
function summary(item: Record<string, unknown>): string | undefined {
  const content = item[String(item.type)] as Record<string, unknown> | undefined;
  if (item.type === 'text') return String(content?.body);
  if (item.type === 'reaction') return String(content?.emoji) || '(removed)';
  if (item.type === 'location')
    return [content?.name, `${String(content?.latitude)}, ${String(content?.longitude)}`]
      .filter((x) => typeof x === 'string')
      .join(' ');
  if (item.type === 'contacts') {
    const [first] = item.contacts as { name?: { formatted_name?: unknown } }[];
    return typeof first?.name?.formatted_name === 'string' ? first.name.formatted_name : undefined;
  }
  const reply = (content?.button_reply ?? content?.list_reply) as { title?: unknown } | undefined;
  const caption = content?.caption ?? content?.filename ?? content?.text ?? reply?.title;
  return typeof caption === 'string' ? caption : undefined;
}

/** Several people write to one business number, delivered in one webhook. */
export type BatchOutcome =
  | { ok: true; wamids: string[]; deliveries: { appId: string; status: DeliveryStatus }[] }
  | Extract<InboundOutcome, { ok: false }>;

/**
 * Write in as a person.
 *
 * @returns the wamid and each app's answer (`ok: true` even when an app failed: the message
 *   was written); `unknown_number` for a number the sandbox does not have; `no_app` when no
 *   app's grant covers it; `unknown_media` for a media id the sandbox does not have;
 *   `no_message` when neither `text` nor `message` is given (nothing is recorded on failure).
 */
export async function writeIn(state: SandboxState, input: InboundInput): Promise<InboundOutcome> {
  const outcome = await writeInBatch(state, input.phoneNumberId, [input]);
  return outcome.ok
    ? { ok: true, wamid: outcome.wamids[0]!, deliveries: outcome.deliveries }
    : outcome;
}

/**
 * Several messages to `phoneNumberId` in one webhook, as the provider batches them: `contacts[]`
 * has each person once, `messages[]` each message in order (`writeIn`'s checks apply to each;
 * when one fails, nothing is recorded or sent).
 *
 * @returns the wamids in order and each app's answer, or why nothing was written.
 */
export async function writeInBatch(
  state: SandboxState,
  phoneNumberId: string,
  inputs: Omit<InboundInput, 'phoneNumberId'>[],
): Promise<BatchOutcome> {
  const wabaId = wabaOfPhoneNumber(phoneNumberId);
  if (!wabaId) return { ok: false, reason: 'unknown_number' };
  const apps = appsOfWaba(state, wabaId);
  if (apps.length === 0) return { ok: false, reason: 'no_app' };
  const now = state.now();
  const made: {
    input: (typeof inputs)[number];
    wamid: string;
    item: Record<string, unknown>;
  }[] = [];
  for (const input of inputs) {
    const message: InboundMessage | undefined =
      input.message ??
      (input.text !== undefined ? { type: 'text', text: { body: input.text } } : undefined);
    if (!message) return { ok: false, reason: 'no_message' };
    const one = webhookMessage(state, wabaId, phoneNumberId, input.from, message, input.media);
    if ('error' in one) return { ok: false, reason: one.error };
    const wamid = newWamid();
    const item = { from: input.from, id: wamid, timestamp: String(Math.floor(now / 1000)) };
    // `from`, `id` and `timestamp` first and the sandbox's own, whatever the message carried.
    made.push({ input, wamid, item: { ...item, ...one.item, ...item } });
  }
  const contacts = new Map<string, { profile: { name: string }; wa_id: string }>();
  for (const { input, wamid, item } of made) {
    state.cloud.lastInbound.set(`${phoneNumberId}:${input.from}`, now);
    const text = summary(item);
    state.cloud.messages.push({
      wamid,
      direction: 'sent_by_person',
      phoneNumberId,
      waId: input.from,
      type: String(item.type),
      ...(text !== undefined && { text }),
      status: 'delivered',
      at: now,
      inbound: item,
    });
    if (!contacts.has(input.from))
      contacts.set(input.from, {
        profile: { name: input.name ?? 'Sandbox person' },
        wa_id: input.from,
      });
  }
  const value = {
    messaging_product: 'whatsapp',
    metadata: {
      display_phone_number: describePhoneNumber(phoneNumberId).digits,
      phone_number_id: phoneNumberId,
    },
    contacts: [...contacts.values()],
    messages: made.map((m) => m.item),
  };
  const notification = wabaNotification(wabaId, 'messages', value, now);
  const deliveries = await Promise.all(
    apps.map(async (appId) => ({
      appId,
      status: await deliverOnce(state, appId, 'messages', notification),
    })),
  );
  return { ok: true, wamids: made.map((m) => m.wamid), deliveries };
}
