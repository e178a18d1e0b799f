/**
 * Queries over `message_drafts` (and the contacts a draft names). Invariant (docs/security.md,
 * tenant isolation): every statement filters by portal id in the statement itself.
 */
import { and, eq, inArray, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { contacts, messageDrafts } from '../../db/schema/index.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';

export type DraftRow = typeof messageDrafts.$inferSelect;
type NewDraftRow = typeof messageDrafts.$inferInsert;

export async function insertDraft(db: Database, row: NewDraftRow): Promise<DraftRow> {
  const [inserted] = await db.insert(messageDrafts).values(row).returning();
  return inserted as DraftRow;
}

export async function findDraft(db: Database, portalId: number, id: string) {
  const [row] = await db
    .select()
    .from(messageDrafts)
    .where(and(eq(messageDrafts.portalId, portalId), eq(messageDrafts.id, id)));
  return row ?? null;
}

/** One page, newest first, by keyset on `(created_at, id)`; one more row tells `hasMore`. */
export async function listDraftPage(
  db: Database,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; sent?: boolean | undefined },
): Promise<KeysetPage<DraftRow>> {
  const conditions: SQL[] = [eq(messageDrafts.portalId, portalId)];
  if (options.sent !== undefined)
    conditions.push(options.sent ? isNotNull(messageDrafts.sentAt) : isNull(messageDrafts.sentAt));
  return readKeysetPage(messageDrafts, conditions, options, (where, orderBy, limit) =>
    db
      .select()
      .from(messageDrafts)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit),
  );
}

/** Change an unsent draft. @returns the row, or null when it is missing or already sent. */
export async function updateUnsentDraft(
  db: Database,
  portalId: number,
  id: string,
  set: Pick<NewDraftRow, 'message' | 'recipients' | 'fromPhoneNumberId'>,
): Promise<DraftRow | null> {
  const [row] = await db
    .update(messageDrafts)
    .set({ ...set, updatedAt: sql`now()` })
    .where(
      and(
        eq(messageDrafts.portalId, portalId),
        eq(messageDrafts.id, id),
        isNull(messageDrafts.sentAt),
      ),
    )
    .returning();
  return row ?? null;
}

export async function deleteDraft(db: Database, portalId: number, id: string): Promise<boolean> {
  const rows = await db
    .delete(messageDrafts)
    .where(and(eq(messageDrafts.portalId, portalId), eq(messageDrafts.id, id)))
    .returning({ id: messageDrafts.id });
  return rows.length > 0;
}

/**
 * Claim an unsent draft for sending: sets `sent_at` only if it is still null, so of two
 * concurrent sends (on any instances) exactly one gets the row.
 */
export async function claimDraft(db: Database, portalId: number, id: string) {
  const [row] = await db
    .update(messageDrafts)
    .set({ sentAt: sql`now()`, updatedAt: sql`now()` })
    .where(
      and(
        eq(messageDrafts.portalId, portalId),
        eq(messageDrafts.id, id),
        isNull(messageDrafts.sentAt),
      ),
    )
    .returning();
  return row ?? null;
}

/** Record a send's counts; `unclaim` (nothing was queued) makes the draft unsent again. */
export async function finishSend(
  db: Database,
  portalId: number,
  id: string,
  result: { queued: number; refused: number },
  unclaim: boolean,
): Promise<Date | null> {
  const [row] = await db
    .update(messageDrafts)
    .set({ sendResult: result, ...(unclaim && { sentAt: null }) })
    .where(and(eq(messageDrafts.portalId, portalId), eq(messageDrafts.id, id)))
    .returning({ sentAt: messageDrafts.sentAt });
  return row?.sentAt ?? null;
}

/** The portal's contacts among `ids`, with their phones. */
export async function contactsByIds(db: Database, portalId: number, ids: string[]) {
  if (ids.length === 0) return [];
  return db
    .select({ id: contacts.id, phone: contacts.phone })
    .from(contacts)
    .where(and(eq(contacts.portalId, portalId), inArray(contacts.id, ids)));
}

/** What a personalised draft reads of the portal's contacts with these ids or phones. */
export async function contactValues(
  db: Database,
  portalId: number,
  ids: string[],
  phones: string[],
) {
  if (ids.length === 0 && phones.length === 0) return [];
  const which: SQL[] = [];
  if (ids.length > 0) which.push(inArray(contacts.id, ids));
  if (phones.length > 0) which.push(inArray(contacts.phone, phones));
  return db
    .select({
      id: contacts.id,
      phone: contacts.phone,
      firstName: contacts.firstName,
      lastName: contacts.lastName,
      email: contacts.email,
      attributes: contacts.attributes,
    })
    .from(contacts)
    .where(and(eq(contacts.portalId, portalId), or(...which)));
}

/** The portal's contacts with `tag`, oldest first, at most `limit`. */
export async function contactsByTag(db: Database, portalId: number, tag: string, limit: number) {
  return db
    .select({ id: contacts.id, phone: contacts.phone })
    .from(contacts)
    .where(and(eq(contacts.portalId, portalId), sql`${contacts.tags} @> array[${tag}]::text[]`))
    .orderBy(contacts.createdAt, contacts.id)
    .limit(limit);
}

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * Take a person out of every draft of the portal that names them (by contact id or E.164
 * phone), sent or not: the contact erasure. A draft left with no recipient at all is deleted
 * (its text was for that person alone); the others keep their other recipients.
 *
 * @returns how many drafts were deleted and how many were changed.
 */
export async function removePersonFromDrafts(
  tx: Tx,
  contact: { portalId: number; id: string; phone: string },
): Promise<{ deleted: number; changed: number }> {
  const rows = await tx
    .select({ id: messageDrafts.id, recipients: messageDrafts.recipients })
    .from(messageDrafts)
    .where(
      and(
        eq(messageDrafts.portalId, contact.portalId),
        sql`(${messageDrafts.recipients} -> 'contactIds' @> ${JSON.stringify([contact.id])}::jsonb
          or ${messageDrafts.recipients} -> 'phones' @> ${JSON.stringify([contact.phone])}::jsonb)`,
      ),
    )
    .for('update');
  let deleted = 0;
  for (const row of rows) {
    const recipients = {
      ...row.recipients,
      contactIds: row.recipients.contactIds.filter((id) => id !== contact.id),
      phones: row.recipients.phones.filter((phone) => phone !== contact.phone),
    };
    const where = and(eq(messageDrafts.portalId, contact.portalId), eq(messageDrafts.id, row.id));
    if (recipients.contactIds.length === 0 && recipients.phones.length === 0 && !recipients.tag) {
      await tx.delete(messageDrafts).where(where);
      deleted++;
    } else {
      await tx
        .update(messageDrafts)
        .set({ recipients, updatedAt: sql`now()` })
        .where(where);
    }
  }
  return { deleted, changed: rows.length - deleted };
}
