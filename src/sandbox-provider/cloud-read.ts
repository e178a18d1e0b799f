/**
 * Read receipts: `POST /{version}/{phone-number-id}/messages` with `{"messaging_product":
 * "whatsapp", "status": "read", "message_id"}` marks a person's message read, and with it every
 * earlier message of that person to that number, as the Cloud API does; answers
 * `{"success": true}`. The person's phone then shows them read (blue ticks). A message id that
 * is not a message a person wrote to this number → code 100 (HTTP 400).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read
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

/**
 * Mark `messageId` (and the person's earlier messages to the number) read at the sandbox clock.
 *
 * @returns undefined when done, else the fault to answer.
 */
export function markRead(
  state: SandboxState,
  phoneNumberId: string,
  messageId: string,
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
  return undefined;
}
