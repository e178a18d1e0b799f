/**
 * Queries over `contacts`. Invariant (docs/security.md, tenant isolation): every statement
 * filters by portal id in the statement itself.
 */
import { and, eq, gte, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { contacts } from '../db/schema/index.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../db/keyset-page.ts';

/** Drizzle's transaction handle (same query API as the database). */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
export type Db = Database | Tx;

export type ContactRow = typeof contacts.$inferSelect;
export type NewContactRow = typeof contacts.$inferInsert;
/** The columns a write may set (never id, portal or creation time). */
export type ContactChanges = Partial<Omit<NewContactRow, 'id' | 'portalId' | 'createdAt'>>;

/** Filters of a list page; all optional, combined with AND. */
export interface ContactFilter {
  tag?: string | undefined;
  consent?: ContactRow['consentWhatsapp'] | undefined;
  /** Lower-case prefix matched against first name, last name and email. */
  textPrefix?: string | undefined;
  /** Digits matched as a prefix of the E.164 phone's digits. */
  phoneDigits?: string | undefined;
  updatedSince?: Date | undefined;
}

export async function insertContact(db: Db, row: NewContactRow): Promise<ContactRow> {
  const [inserted] = await db.insert(contacts).values(row).returning();
  return inserted!;
}

/** Insert unless the portal already has the phone; null when it has (nothing written). */
export async function insertContactIfNew(db: Db, row: NewContactRow): Promise<ContactRow | null> {
  const [inserted] = await db
    .insert(contacts)
    .values(row)
    .onConflictDoNothing({ target: [contacts.portalId, contacts.phone] })
    .returning();
  return inserted ?? null;
}

/**
 * Insert many new contacts; a phone the portal already has is skipped.
 *
 * @returns the phones inserted.
 */
export async function insertContacts(db: Db, rows: NewContactRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const inserted = await db
    .insert(contacts)
    .values(rows)
    .onConflictDoNothing({ target: [contacts.portalId, contacts.phone] })
    .returning({ phone: contacts.phone });
  return inserted.map((r) => r.phone);
}

export async function findContact(
  db: Db,
  portalId: number,
  id: string,
): Promise<ContactRow | null> {
  const [row] = await db
    .select()
    .from(contacts)
    .where(and(eq(contacts.portalId, portalId), eq(contacts.id, id)));
  return row ?? null;
}

/** The contact with this E.164 phone, locked for update when inside a transaction that asks. */
export async function findContactByPhone(
  db: Db,
  portalId: number,
  phone: string,
  options: { forUpdate?: boolean } = {},
): Promise<ContactRow | null> {
  const query = db
    .select()
    .from(contacts)
    .where(and(eq(contacts.portalId, portalId), eq(contacts.phone, phone)));
  const [row] = options.forUpdate ? await query.for('update') : await query;
  return row ?? null;
}

/** The portal's contacts with these phones, locked for update (an import's existing rows). */
export async function lockContactsByPhones(
  tx: Tx,
  portalId: number,
  phones: readonly string[],
): Promise<ContactRow[]> {
  if (phones.length === 0) return [];
  return tx
    .select()
    .from(contacts)
    .where(and(eq(contacts.portalId, portalId), inArray(contacts.phone, [...phones])))
    .orderBy(contacts.phone)
    .for('update');
}

export async function updateContact(
  db: Db,
  portalId: number,
  id: string,
  changes: ContactChanges,
): Promise<ContactRow | null> {
  const [row] = await db
    .update(contacts)
    .set({ ...changes, updatedAt: sql`now()` })
    .where(and(eq(contacts.portalId, portalId), eq(contacts.id, id)))
    .returning();
  return row ?? null;
}

export async function deleteContact(
  db: Db,
  portalId: number,
  id: string,
): Promise<ContactRow | null> {
  const [row] = await db
    .delete(contacts)
    .where(and(eq(contacts.portalId, portalId), eq(contacts.id, id)))
    .returning();
  return row ?? null;
}

/** `LIKE` prefix pattern for `text` (its `%`, `_` and `\` escaped). */
function likePrefix(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filterConditions(portalId: number, filter: ContactFilter): SQL[] {
  const conditions: SQL[] = [eq(contacts.portalId, portalId)];
  if (filter.tag !== undefined)
    conditions.push(sql`${contacts.tags} @> array[${filter.tag}]::text[]`);
  if (filter.consent !== undefined) conditions.push(eq(contacts.consentWhatsapp, filter.consent));
  if (filter.updatedSince !== undefined)
    conditions.push(gte(contacts.updatedAt, filter.updatedSince));
  const search: SQL[] = [];
  if (filter.textPrefix !== undefined) {
    const pattern = likePrefix(filter.textPrefix);
    search.push(
      sql`lower(${contacts.firstName}) like ${pattern}`,
      sql`lower(${contacts.lastName}) like ${pattern}`,
      sql`lower(${contacts.email}) like ${pattern}`,
    );
  }
  if (filter.phoneDigits !== undefined) {
    search.push(sql`${contacts.phone} like ${likePrefix(`+${filter.phoneDigits}`)}`);
  }
  if (search.length > 0) conditions.push(or(...search)!);
  return conditions;
}

/**
 * One page, newest first, by keyset on `(created_at, id)`: stable while contacts are added (new
 * ones sort before the first page, so later pages neither repeat nor skip).
 *
 * @param limit rows wanted; one more is read to know whether a next page exists.
 */
export async function listContactPage(
  db: Db,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; filter: ContactFilter },
): Promise<KeysetPage<ContactRow>> {
  const conditions = filterConditions(portalId, options.filter);
  return readKeysetPage(contacts, conditions, options, (where, orderBy, limit) =>
    db
      .select()
      .from(contacts)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit),
  );
}

/**
 * Record that the person with this E.164 phone wrote to the portal at `at` (a provider inbound
 * message): `last_inbound_at` moves forward only (a late or repeated webhook changes nothing);
 * a phone the portal does not know becomes a contact with consent unknown, source `provider`.
 */
export async function recordInbound(
  db: Db,
  row: { id: string; portalId: number; phone: string; at: Date },
): Promise<void> {
  await db
    .insert(contacts)
    .values({
      id: row.id,
      portalId: row.portalId,
      phone: row.phone,
      consentSource: 'provider',
      lastInboundAt: row.at,
    })
    .onConflictDoUpdate({
      target: [contacts.portalId, contacts.phone],
      set: {
        lastInboundAt: sql`greatest(${contacts.lastInboundAt}, excluded.last_inbound_at)`,
        updatedAt: sql`case when ${contacts.lastInboundAt} is null or ${contacts.lastInboundAt} < excluded.last_inbound_at then now() else ${contacts.updatedAt} end`,
      },
    });
}
