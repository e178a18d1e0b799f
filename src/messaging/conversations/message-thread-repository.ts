/**
 * The messages of a portal in both directions as one list, newest first, in the project's one
 * keyset order (`db/keyset-page.ts`) on `(created_at, id)`: one table, one statement, read from
 * the page index its filters name (`messages_portal_page`, `messages_portal_direction_page`,
 * `messages_portal_contact_page`, `messages_portal_status_page`, `messages_portal_wa_id_page`),
 * so a page costs the same whatever the portal's size. Every statement filters by portal id.
 *
 * @see docs/messaging.md "Conversations"
 */
import { and, eq, gte, lt, type SQL } from 'drizzle-orm';
import { messages } from '../../db/schema/messages.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';
import type { Db, MessageStatus, StoredMessageRow } from '../store/messages-repository.ts';
import type { Direction } from './conversations-repository.ts';

/** The filters of the message list; `status` and `to` concern outbound messages only. */
export interface MessageListFilter {
  direction?: Direction | undefined;
  contactId?: string | undefined;
  phoneNumberId?: string | undefined;
  status?: MessageStatus | undefined;
  to?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

function conditionsOf(portalId: number, f: MessageListFilter): SQL[] {
  const where: SQL[] = [eq(messages.portalId, portalId)];
  if (f.direction) where.push(eq(messages.direction, f.direction));
  // A status or an addressee names outbound messages only.
  if (f.status !== undefined || f.to !== undefined) where.push(eq(messages.direction, 'outbound'));
  if (f.contactId) where.push(eq(messages.contactId, f.contactId));
  if (f.phoneNumberId) where.push(eq(messages.phoneNumberId, f.phoneNumberId));
  if (f.status) where.push(eq(messages.status, f.status));
  if (f.to) where.push(eq(messages.waId, f.to));
  if (f.since) where.push(gte(messages.createdAt, f.since));
  if (f.until) where.push(lt(messages.createdAt, f.until));
  return where;
}

/** One page of the portal's messages in both directions, newest first (`limit + 1` rows read). */
export async function listMessageRows(
  db: Db,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; filter: MessageListFilter },
): Promise<KeysetPage<StoredMessageRow>> {
  return readKeysetPage(
    messages,
    conditionsOf(portalId, options.filter),
    options,
    (where, orderBy, limit) =>
      db
        .select()
        .from(messages)
        .where(where)
        .orderBy(...orderBy)
        .limit(limit),
  );
}

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
