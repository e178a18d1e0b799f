/**
 * What a contact's page (`/contacts/{id}`) reads beside the contact itself: their
 * conversations with the last messages, through the inbox's own reads (messaging's one
 * conversation read model and its thread pages: nothing recomputed here), and the support
 * tickets that name them.
 *
 * The conversations of one contact are found by id in `conversations` (one row per contact and
 * business number, its primary key led by portal and contact), newest activity first; each is
 * then read as the inbox reads it.
 *
 * @see docs/decisions/0066-contact-page.md
 */
import { and, desc, eq } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { conversations } from '../../db/schema/conversations.ts';
import type { InboxReads } from '../inbox-reads.ts';
import type { InboxConversation, InboxMessage } from '../inbox/inbox-view.ts';

/** How many conversations a contact's page shows, and how many messages of each. */
export const CONVERSATIONS_SHOWN = 10;
export const MESSAGES_SHOWN = 3;

/**
 * The ids of a contact's conversations in the portal (one per business number), newest
 * activity first, at most `limit`.
 */
export async function conversationIdsOfContact(
  db: Database,
  portalId: number,
  contactId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.portalId, portalId), eq(conversations.contactId, contactId)))
    .orderBy(desc(conversations.lastMessageAt), desc(conversations.id))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** A conversation of the contact with its newest messages (newest first). */
export interface ContactConversation {
  conversation: InboxConversation;
  messages: InboxMessage[];
}

/**
 * The contact's conversations as the inbox shows them, each with its newest
 * {@link MESSAGES_SHOWN} messages and the signed-in member's (`readerId`) unread count; a
 * conversation gone between the two reads is left out.
 */
export async function contactConversations(
  reads: Pick<InboxReads, 'conversation' | 'messages'>,
  ids: readonly string[],
  reader: { portalId: number; readerId: number },
): Promise<ContactConversation[]> {
  const { portalId, readerId } = reader;
  const found = await Promise.all(
    ids.map(async (id) => {
      const conversation = await reads.conversation(portalId, id, readerId);
      if (!conversation) return null;
      const { items } = await reads.messages(portalId, id, { limit: MESSAGES_SHOWN });
      return { conversation, messages: items };
    }),
  );
  return found.filter((c): c is ContactConversation => c !== null);
}
