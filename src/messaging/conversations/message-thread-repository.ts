/**
 * A stored message of either direction by id. The list of a portal's messages in both
 * directions is the store's one page query (`listMessageRows` in
 * ../store/messages-repository.ts). Every statement filters by portal id.
 *
 * @see docs/messaging.md "Conversations"
 */
import { and, eq } from 'drizzle-orm';
import { messages } from '../../db/schema/messages.ts';
import type { Db, StoredMessageRow } from '../store/messages-repository.ts';

/** A message of either direction by id, within the portal; null when none. */
export async function findStoredMessage(
  db: Db,
  portalId: number,
  id: string,
): Promise<StoredMessageRow | null> {
  const [row] = await db
    .select()
    .from(messages)
    .where(and(eq(messages.portalId, portalId), eq(messages.id, id)));
  return row ?? null;
}
