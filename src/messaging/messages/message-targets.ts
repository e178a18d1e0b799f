/**
 * The messages a send names by our id (`msg_…`): the one a reaction reacts to and the one a
 * `context` quotes. Either direction, always within one conversation: the same portal, the same
 * person (`to` of an outbound message, `from` of an inbound one) and the same business number.
 * The provider knows a message by its wamid, so that is what a target resolves to.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/messages#context-object
 */
import { and, eq } from 'drizzle-orm';
import { inboundMessages } from '../../db/schema/conversations.ts';
import { messages } from '../../db/schema/messages.ts';
import type { Db } from './messages-repository.ts';

/** A target message: its wamid (null while an outbound one is queued) and its status. */
export interface TargetMessage {
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
  const [inbound] = await db
    .select({ wamid: inboundMessages.providerMessageId })
    .from(inboundMessages)
    .where(
      and(
        eq(inboundMessages.portalId, key.portalId),
        eq(inboundMessages.id, id),
        eq(inboundMessages.from, key.phone),
        eq(inboundMessages.phoneNumberId, key.phoneNumberId),
      ),
    );
  if (inbound) return { wamid: inbound.wamid, state: 'sent' };
  const [outbound] = await db
    .select({ wamid: messages.providerMessageId, status: messages.status })
    .from(messages)
    .where(
      and(
        eq(messages.portalId, key.portalId),
        eq(messages.id, id),
        eq(messages.to, key.phone),
        eq(messages.from, key.phoneNumberId),
      ),
    );
  if (!outbound) return null;
  if (outbound.wamid !== null) return { wamid: outbound.wamid, state: 'sent' };
  return { wamid: null, state: outbound.status === 'queued' ? 'queued' : 'failed' };
}
