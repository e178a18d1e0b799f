/**
 * An outbound message in its conversation: once the provider accepted it (the delivery worker),
 * the contact's conversation with the sender number names it as the newest message, unless a
 * newer one (either direction) is there already. A message to a phone that is no contact has no
 * conversation. Done at acceptance rather than in the send's statement: the send stays one
 * short statement, and a message the provider refused never becomes a conversation's last.
 *
 * @see docs/messaging.md "Conversations"
 */
import { sql } from 'drizzle-orm';
import { conversations } from '../../db/schema/conversations.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import type { Db, MessageRow } from '../store/messages-repository.ts';

export async function recordOutboundInConversation(
  db: Db,
  row: Pick<MessageRow, 'id' | 'portalId' | 'contactId' | 'phoneNumberId' | 'createdAt'>,
): Promise<void> {
  if (row.contactId === null) return;
  await db.execute(sql`
    insert into ${conversations} (id, portal_id, contact_id, phone_number_id, last_message_id,
      last_message_at, last_direction, unread_count)
    values (${`cnv_${randomBase62(16)}`}, ${row.portalId}, ${row.contactId}, ${row.phoneNumberId}, ${row.id},
      ${row.createdAt.toISOString()}::timestamptz, 'outbound', 0)
    on conflict (portal_id, contact_id, phone_number_id) do update set
      last_message_id = case when excluded.last_message_at >= ${conversations.lastMessageAt}
        then excluded.last_message_id else ${conversations.lastMessageId} end,
      last_direction = case when excluded.last_message_at >= ${conversations.lastMessageAt}
        then 'outbound' else ${conversations.lastDirection} end,
      last_message_at = greatest(${conversations.lastMessageAt}, excluded.last_message_at)`);
}
