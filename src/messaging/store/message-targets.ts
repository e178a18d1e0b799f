/**
 * The messages a send names by our id (`msg_…`): the one a reaction reacts to and the one a
 * `context` quotes. Either direction, always within one conversation: the same portal, the same
 * person (`wa_id`) and the same business number (`phone_number_id`), whichever way it went.
 * The provider knows a message by its wamid, so that is what a target resolves to.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#context-object
 */
import { and, eq } from 'drizzle-orm';
import { messages } from '../../db/schema/messages.ts';
import type { Db } from './messages-repository.ts';

/** A target message: its wamid (null while an outbound one is queued) and its status. */
interface TargetMessage {
  wamid: string | null;
  /** `queued` (no wamid yet, it may still get one), `failed` (never will), or `sent`. */
  state: 'queued' | 'failed' | 'sent';
}

/** The conversation a send is in: the person's E.164 phone and the business number. */
export interface ConversationKey {
  portalId: number;
  /** E.164. */
  phone: string;
  phoneNumberId: string;
}

/**
 * Message `id` of the conversation `key`, inbound or outbound.
 *
 * @returns null when no such message is in that conversation (unknown, another portal's,
 *   another person's or another number's).
 */
export async function findTargetMessage(
  db: Db,
  key: ConversationKey,
  id: string,
): Promise<TargetMessage | null> {
  const [message] = await db
    .select({
      wamid: messages.providerMessageId,
      status: messages.status,
    })
    .from(messages)
    .where(
      and(
        eq(messages.portalId, key.portalId),
        eq(messages.id, id),
        eq(messages.waId, key.phone),
        eq(messages.phoneNumberId, key.phoneNumberId),
      ),
    );
  if (!message) return null;
  // An inbound message always has its wamid.
  if (message.wamid !== null) return { wamid: message.wamid, state: 'sent' };
  return { wamid: null, state: message.status === 'queued' ? 'queued' : 'failed' };
}
