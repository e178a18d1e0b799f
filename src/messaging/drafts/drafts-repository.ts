/**
 * Queries over `message_drafts` (and the contacts a draft names). Invariant (docs/security.md,
 * tenant isolation): every statement filters by portal id in the statement itself. A draft's
 * message and recipients are stored sealed (`content`, purpose `message-draft`, the portal and
 * draft id as associated data): they are sealed on every write here and opened on every read,
 * so the service sees `DraftRow`s in clear.
 */
import { and, eq, inArray, isNotNull, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { contacts, messageDrafts } from '../../db/schema/index.ts';
import type { SealedDraft } from '../../db/schema/message-drafts.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';
import { DecryptionError, type Keyring, type SealedValue } from '../../platform/keyring.ts';

type StoredDraftRow = typeof messageDrafts.$inferSelect;
/** A draft as the service sees it: its message and recipients opened. */
export type DraftRow = Omit<StoredDraftRow, 'content' | 'message' | 'recipients'> & SealedDraft;
type NewDraftRow = Omit<typeof messageDrafts.$inferInsert, 'content' | 'message' | 'recipients'> &
  SealedDraft;

/** The keyring's two calls a draft needs. */
export type DraftKeyring = Pick<Keyring, 'seal' | 'open'>;

const PURPOSE = 'message-draft';

function seal(keyring: DraftKeyring, portalId: number, id: string, d: SealedDraft): SealedValue {
  const draft: SealedDraft = { message: d.message, recipients: d.recipients };
  return keyring.seal(JSON.stringify(draft), portalId, PURPOSE, id);
}

/**
 * A stored row opened. A row written before drafts were sealed (until the start-up pass seals
 * it) is read from its clear columns.
 *
 * @throws DecryptionError when the content does not open for this draft (or is missing).
 */
function opened(keyring: DraftKeyring, row: StoredDraftRow): DraftRow {
  const { content, message, recipients, ...rest } = row;
  if (content) {
    const draft = JSON.parse(keyring.open(content, row.portalId, PURPOSE, row.id)) as SealedDraft;
    return { ...rest, message: draft.message, recipients: draft.recipients };
  }
  if (!message || !recipients) throw new DecryptionError('The draft has no content.');
  return { ...rest, message, recipients };
}

export async function insertDraft(
  db: Database,
  keyring: DraftKeyring,
  row: NewDraftRow,
): Promise<DraftRow> {
  const { message, recipients, ...rest } = row;
  const [inserted] = await db
    .insert(messageDrafts)
    .values({ ...rest, content: seal(keyring, row.portalId, row.id, { message, recipients }) })
    .returning();
  return opened(keyring, inserted!);
}

export async function findDraft(
  db: Database,
  keyring: DraftKeyring,
  portalId: number,
  id: string,
): Promise<DraftRow | null> {
  const [row] = await db
    .select()
    .from(messageDrafts)
    .where(and(eq(messageDrafts.portalId, portalId), eq(messageDrafts.id, id)));
  return row ? opened(keyring, row) : null;
}

/** One page, newest first, by keyset on `(created_at, id)`; one more row tells `hasMore`. */
export async function listDraftPage(
  db: Database,
  keyring: DraftKeyring,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; sent?: boolean | undefined },
): Promise<KeysetPage<DraftRow>> {
  const conditions: SQL[] = [eq(messageDrafts.portalId, portalId)];
  if (options.sent !== undefined)
    conditions.push(options.sent ? isNotNull(messageDrafts.sentAt) : isNull(messageDrafts.sentAt));
  const page = await readKeysetPage(messageDrafts, conditions, options, (where, orderBy, limit) =>
    db
      .select()
      .from(messageDrafts)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit),
  );
  return { ...page, rows: page.rows.map((row) => opened(keyring, row)) };
}

/** Change an unsent draft. @returns the row, or null when it is missing or already sent. */
export async function updateUnsentDraft(
  db: Database,
  keyring: DraftKeyring,
  portalId: number,
  id: string,
  set: Pick<NewDraftRow, 'message' | 'recipients' | 'fromPhoneNumberId'>,
): Promise<DraftRow | null> {
  const [row] = await db
    .update(messageDrafts)
    .set({
      content: seal(keyring, portalId, id, set),
      message: null,
      recipients: null,
      fromPhoneNumberId: set.fromPhoneNumberId,
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(messageDrafts.portalId, portalId),
        eq(messageDrafts.id, id),
        isNull(messageDrafts.sentAt),
      ),
    )
    .returning();
  return row ? opened(keyring, row) : null;
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
export async function claimDraft(
  db: Database,
  keyring: DraftKeyring,
  portalId: number,
  id: string,
): Promise<DraftRow | null> {
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
  return row ? opened(keyring, row) : null;
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
 * phone), sent or not: the contact erasure. Recipients are sealed, so every draft of the portal
 * is opened (drafts are few per portal). A draft left with no recipient at all is deleted (its
 * text was for that person alone); the others keep their other recipients, sealed again.
 *
 * @returns how many drafts were deleted and how many were changed.
 */
export async function removePersonFromDrafts(
  tx: Tx,
  keyring: DraftKeyring,
  contact: { portalId: number; id: string; phone: string | null },
): Promise<{ deleted: number; changed: number }> {
  const stored = await tx
    .select()
    .from(messageDrafts)
    .where(eq(messageDrafts.portalId, contact.portalId))
    .for('update');
  let deleted = 0;
  let changed = 0;
  for (const row of stored.map((r) => opened(keyring, r))) {
    const names =
      row.recipients.contactIds.includes(contact.id) ||
      (contact.phone !== null && row.recipients.phones.includes(contact.phone));
    if (!names) continue;
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
      const content = seal(keyring, contact.portalId, row.id, { message: row.message, recipients });
      await tx
        .update(messageDrafts)
        .set({ content, message: null, recipients: null, updatedAt: sql`now()` })
        .where(where);
      changed++;
    }
  }
  return { deleted, changed };
}
