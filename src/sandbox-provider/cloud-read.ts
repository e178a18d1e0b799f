/**
 * Read receipts: `POST /{version}/{phone-number-id}/messages` with `{"messaging_product":
 * "whatsapp", "status": "read", "message_id"}` marks a person's message read, and with it every
 * earlier message of that person to that number, as the Cloud API does; answers
 * `{"success": true}`. The person's phone then shows them read (blue ticks). A message id that
 * is not a message a person wrote to this number → code 100 (HTTP 400).
 *
 * With `typing_indicator: {type: "text"}` the person also sees the business typing, until the
 * business's next message to them or 25 seconds on, whichever comes first (`typingUntil`; the
 * phone page shows it). Any other `typing_indicator` type → code 100.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
 */
import { Type } from 'typebox';
import type { GraphFault } from './graph-errors.ts';
import { findMessage } from './inbound-message.ts';
import type { SandboxState } from './sandbox-state.ts';

/** The body of a read receipt. */
export const MarkRead = Type.Object({
  messaging_product: Type.Literal('whatsapp'),
  status: Type.Literal('read'),
  message_id: Type.String({ minLength: 1, maxLength: 200 }),
  typing_indicator: Type.Optional(Type.Object({ type: Type.Literal('text') })),
});

/** How long a typing indicator shows without a reply (ms), as the provider documents. */
export const TYPING_MS = 25_000;

/** The key of a person's thread with a business number. */
export const threadKey = (phoneNumberId: string, waId: string) => `${phoneNumberId}:${waId}`;

/** Whether the person `waId` sees the business number typing now. */
export function isTyping(state: SandboxState, phoneNumberId: string, waId: string): boolean {
  return (state.cloud.typingUntil.get(threadKey(phoneNumberId, waId)) ?? 0) > state.now();
}

/**
 * Mark `messageId` (and the person's earlier messages to the number) read at the sandbox clock;
 * with `typing`, show the person the business typing for {@link TYPING_MS}.
 *
 * @returns undefined when done, else the fault to answer.
 */
export function markRead(
  state: SandboxState,
  phoneNumberId: string,
  messageId: string,
  typing = false,
): GraphFault | undefined {
  const m = findMessage(state, messageId);
  if (!m || m.direction !== 'sent_by_person' || m.phoneNumberId !== phoneNumberId)
    return {
      code: 100,
      message: '(#100) Invalid parameter',
      details: `Message ${messageId} is not a message received by this phone number`,
    };
  const now = state.now();
  for (const other of state.cloud.messages) {
    if (
      other.direction === 'sent_by_person' &&
      other.phoneNumberId === phoneNumberId &&
      other.waId === m.waId &&
      other.readAt === undefined
    )
      other.readAt = now;
    if (other === m) break;
  }
  if (typing) state.cloud.typingUntil.set(threadKey(phoneNumberId, m.waId), now + TYPING_MS);
  return undefined;
}
