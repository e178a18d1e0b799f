/**
 * A person's business-scoped user id changes: the sandbox tells every app whose grant covers the
 * number's WABA with a `messages` webhook carrying one system message, as the provider's page
 * documents it: `{messaging_product, metadata, messages: [{id, timestamp, type: "system",
 * system: {body, type: "user_changed_user_id", previous_user_id, user_id,
 * previous_parent_user_id?, parent_user_id?}}]}` (no `contacts`, no phone).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/changelog/
 */
import { tell, type SignalOutcome } from './cloud-signals.ts';
import { describePhoneNumber, newWamid, wabaOfPhoneNumber } from './cloud-state.ts';
import { isBsuid, nextBsuid } from './sandbox-people.ts';
import type { SandboxState } from './sandbox-state.ts';

/**
 * The person known to `phoneNumberId`'s business as `previousUserId` now has `userId` (default:
 * a new one derived from the previous). Fails `unknown_number` or `bad_user_id`.
 */
export async function changeUserId(
  state: SandboxState,
  phoneNumberId: string,
  previousUserId: string,
  userId: string = nextBsuid(previousUserId),
): Promise<SignalOutcome & { userId?: string }> {
  const wabaId = wabaOfPhoneNumber(phoneNumberId);
  if (!wabaId) return { ok: false, reason: 'unknown_number' };
  if (!isBsuid(previousUserId) || !isBsuid(userId) || previousUserId === userId)
    return { ok: false, reason: 'bad_user_id' };
  const number = describePhoneNumber(phoneNumberId);
  const value = {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: number.digits, phone_number_id: phoneNumberId },
    messages: [
      {
        id: newWamid(),
        timestamp: String(Math.floor(state.now() / 1000)),
        type: 'system',
        system: {
          body: 'User changed their business-scoped user ID',
          type: 'user_changed_user_id',
          previous_user_id: previousUserId,
          user_id: userId,
        },
      },
    ],
  };
  return { ok: true, userId, deliveries: await tell(state, wabaId, 'messages', value) };
}
