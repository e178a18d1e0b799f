/**
 * Message content is personal data of the tenant's customers: it is kept
 * `MESSAGING_CONTENT_RETENTION_DAYS` (default 90), then erased in both directions (`content`,
 * and an outbound message's text and template parameters, become null; ids, types, statuses,
 * times and prices stay for the reports). A contact's erasure removes all of the person's
 * content at once (`eraseInboundOf`, with messages-repository.ts's `anonymiseMessagesOf` for
 * the outbound side).
 *
 * @see docs/messaging.md "Retention"
 */
import { and, eq, inArray, isNotNull, lt, or, sql } from 'drizzle-orm';
import { addressesOf, type ErasedPerson } from '../../platform/erased-person.ts';
import { webhookEvents } from '../../db/schema/webhooks.ts';
import { media } from '../../db/schema/conversations.ts';
import { messages } from '../../db/schema/messages.ts';
import type { Db, Tx } from '../store/messages-repository.ts';

/** Rows one statement of the sweep changes at most (short transactions, short locks). */
const RETENTION_BATCH = 1000;

/**
 * Erase the content of messages of both directions older than `before` (their `created_at`), in
 * batches (index `messages_content_expiry`), across portals.
 *
 * @returns how many inbound and outbound messages lost their content.
 */
export async function expireContent(
  db: Db,
  before: Date,
  batch = RETENTION_BATCH,
): Promise<{ inbound: number; outbound: number }> {
  const counts = { inbound: 0, outbound: 0 };
  for (;;) {
    const due = db
      .select({ id: messages.id })
      .from(messages)
      .where(
        and(
          lt(messages.createdAt, before),
          // An older outbound row may hold its text in clear instead.
          or(isNotNull(messages.content), isNotNull(messages.textBody)),
        ),
      )
      .limit(batch);
    const rows = await db
      .update(messages)
      .set({ content: null, textBody: null, templateParameters: null })
      .where(sql`${messages.id} in (${due})`)
      .returning({ direction: messages.direction });
    for (const r of rows) counts[r.direction] += 1;
    if (rows.length < batch) break;
  }
  return counts;
}

/**
 * A contact's erasure, inbound side: every message the person wrote (by contact or by phone)
 * loses its content, its sender's phone (`erased`) and the link to the contact; the media
 * records of those messages are deleted (the bytes were never stored).
 *
 * @returns how many inbound messages were anonymised.
 */
export async function eraseInboundOf(tx: Tx, contact: ErasedPerson): Promise<number> {
  const rows = await tx
    .update(messages)
    .set({ content: null, waId: 'erased', contactId: null })
    .where(
      and(
        eq(messages.portalId, contact.portalId),
        eq(messages.direction, 'inbound'),
        or(eq(messages.contactId, contact.id), inArray(messages.waId, addressesOf(contact))),
      ),
    )
    .returning({ id: messages.id, mediaId: messages.mediaId });
  const mediaIds = rows.flatMap((r) => (r.mediaId === null ? [] : [r.mediaId]));
  if (mediaIds.length > 0)
    await tx
      .delete(media)
      .where(and(eq(media.portalId, contact.portalId), sql`${media.id} in ${mediaIds}`));
  return rows.length;
}

/**
 * A contact's erasure, events side: every event about the person (by contact id or phone:
 * what they wrote, their opt-out, their conversation's window) is deleted with its deliveries,
 * from the webhooks' history and the event log alike.
 *
 * @returns how many events were deleted.
 */
export async function deleteEventsOf(tx: Tx, contact: ErasedPerson): Promise<number> {
  const data = sql`${webhookEvents.payload} -> 'data'`;
  const addresses = addressesOf(contact);
  const rows = await tx
    .delete(webhookEvents)
    .where(
      and(
        eq(webhookEvents.portalId, contact.portalId),
        or(
          eq(webhookEvents.contactId, contact.id),
          inArray(webhookEvents.contactPhone, addresses),
          // Events stored with a plain `data`.
          sql`(${data} ->> 'contactId' = ${contact.id} or ${inArray(sql`${data} ->> 'from'`, addresses)})`,
        ),
      ),
    )
    .returning({ id: webhookEvents.id });
  return rows.length;
}
