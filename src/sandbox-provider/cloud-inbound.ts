/**
 * A person writes to a business number: the sandbox opens the 24-hour customer service window
 * for that pair, keeps the message for the sandbox phone page, and POSTs the signed inbound
 * webhook (`field: messages`, `contacts[{profile:{name,username?},wa_id?,user_id}]`,
 * `messages[{from?,from_user_id,id,timestamp,type,…}]`, the item as inbound-message.ts makes it)
 * to every app whose WhatsApp grant covers the number's WABA, waiting for their answers. Every
 * person has a business-scoped user id (sandbox-people.ts); one who writes with a username and no
 * phone comes without `from` and `wa_id`.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
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
import { bsuidOfPhone, bsuidOfUsername } from './sandbox-people.ts';

export interface InboundInput {
  /** The business number written to. */
  phoneNumberId: string;
  /**
   * The person's number, digits without `+`; absent for a person who writes with a username
   * (then `username`, and `userId` or one derived from the username).
   */
  from?: string | undefined;
  /** The person's business-scoped user id (default: derived from `from` or `username`). */
  userId?: string | undefined;
  /** The person's WhatsApp username: shown instead of a number; without `from`, no phone is sent. */
  username?: string | undefined;
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
  | {
      ok: false;
      reason: 'unknown_number' | 'no_app' | 'unknown_media' | 'no_message' | 'no_person';
    };

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

/** Who writes: their phone (absent for a username person), BSUID, and the sandbox's key. */
interface Person {
  phone: string | undefined;
  userId: string;
  /** How the sandbox keys their window and messages: the phone, else the BSUID. */
  address: string;
}

/** The person of `input`; null with neither a phone nor a username or user id. */
function personOf(input: Omit<InboundInput, 'phoneNumberId'>): Person | null {
  const userId =
    input.userId ??
    (input.from !== undefined
      ? bsuidOfPhone(input.from)
      : input.username !== undefined
        ? bsuidOfUsername(input.username)
        : undefined);
  if (userId === undefined) return null;
  return { phone: input.from, userId, address: input.from ?? userId };
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
  const people: Person[] = [];
  for (const input of inputs) {
    const message: InboundMessage | undefined =
      input.message ??
      (input.text !== undefined ? { type: 'text', text: { body: input.text } } : undefined);
    if (!message) return { ok: false, reason: 'no_message' };
    const person = personOf(input);
    if (!person) return { ok: false, reason: 'no_person' };
    const one = webhookMessage(state, wabaId, phoneNumberId, person.address, message, input.media);
    if ('error' in one) return { ok: false, reason: one.error };
    const wamid = newWamid();
    const item = {
      ...(person.phone !== undefined && { from: person.phone }),
      from_user_id: person.userId,
      id: wamid,
      timestamp: String(Math.floor(now / 1000)),
    };
    // `from`, `id` and `timestamp` first and the sandbox's own, whatever the message carried.
    made.push({ input, wamid, item: { ...item, ...one.item, ...item } });
    people.push(person);
  }
  const contacts = new Map<string, Record<string, unknown>>();
  for (const [i, { input, wamid, item }] of made.entries()) {
    const person = people[i]!;
    state.cloud.lastInbound.set(`${phoneNumberId}:${person.address}`, now);
    // From an ad or a Page call-to-action: the business's answer may open a free entry point.
    if (item.referral !== undefined)
      state.cloud.referralAt.set(`${phoneNumberId}:${person.address}`, now);
    const text = summary(item);
    state.cloud.messages.push({
      wamid,
      direction: 'sent_by_person',
      phoneNumberId,
      waId: person.address,
      type: String(item.type),
      ...(text !== undefined && { text }),
      status: 'delivered',
      at: now,
      inbound: item,
    });
    if (!contacts.has(person.userId))
      contacts.set(person.userId, {
        profile: {
          name: input.name ?? 'Sandbox person',
          ...(input.username !== undefined && { username: input.username }),
        },
        ...(person.phone !== undefined && { wa_id: person.phone }),
        user_id: person.userId,
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
