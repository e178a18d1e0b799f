/**
 * Queries over `contacts`. Invariant (docs/security.md, tenant isolation): every statement
 * filters by portal id in the statement itself.
 */
import { and, eq, gte, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { contacts } from '../db/schema/index.ts';
import {
  keysetClauses,
  readKeysetPage,
  type KeysetPage,
  type PagePosition,
} from '../db/keyset-page.ts';

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
  /** The business-scoped user id, exactly. */
  waUserId?: string | undefined;
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

/** The columns an import sets on a new contact (the others take their defaults). */
export type NewContactFields = Pick<
  NewContactRow,
  | 'id'
  | 'phone'
  | 'email'
  | 'firstName'
  | 'lastName'
  | 'attributes'
  | 'tags'
  | 'consentWhatsapp'
  | 'consentSource'
>;

/**
 * Insert many new contacts into the portal in one statement (the rows travel as one JSON
 * array); a phone the portal already has is skipped.
 *
 * @returns the phones inserted.
 */
export async function insertContacts(
  db: Db,
  portalId: number,
  rows: readonly NewContactFields[],
): Promise<string[]> {
  if (rows.length === 0) return [];
  const json = JSON.stringify(
    rows.map((r) => ({
      id: r.id,
      phone: r.phone,
      email: r.email,
      first_name: r.firstName,
      last_name: r.lastName,
      attributes: r.attributes,
      tags: r.tags,
      consent_whatsapp: r.consentWhatsapp,
      consent_source: r.consentSource,
    })),
  );
  // Both drivers' results carry `rows` (PGlite's Results, node-postgres' QueryResult); the
  // Database type leaves the result kind open.
  const inserted: unknown = await db.execute(sql`
    insert into ${contacts} (id, portal_id, phone, email, first_name, last_name, attributes, tags,
      consent_whatsapp, consent_source)
    select r.id, ${portalId}, r.phone, r.email, r.first_name, r.last_name,
      coalesce(r.attributes, '{}'::jsonb), coalesce(r.tags, '{}'::text[]),
      coalesce(r.consent_whatsapp, 'unknown'), coalesce(r.consent_source, 'api')
    from jsonb_to_recordset(${json}::jsonb) as r(id text, phone text, email text,
      first_name text, last_name text, attributes jsonb, tags text[], consent_whatsapp text,
      consent_source text)
    on conflict (portal_id, phone) do nothing
    returning phone`);
  return (inserted as { rows: { phone: string }[] }).rows.map((r) => r.phone);
}

/** A unique key of a portal's contacts: its id, its E.164 phone, or its BSUID. */
export type ContactKey = { id: string } | { phone: string } | { waUserId: string };

/**
 * The portal's contact that `key` names, or null; locked for update when `forUpdate` (inside a
 * transaction).
 */
export async function findContactBy(
  db: Db,
  portalId: number,
  key: ContactKey,
  options: { forUpdate?: boolean } = {},
): Promise<ContactRow | null> {
  const named =
    'id' in key
      ? eq(contacts.id, key.id)
      : 'phone' in key
        ? eq(contacts.phone, key.phone)
        : eq(contacts.waUserId, key.waUserId);
  const query = db
    .select()
    .from(contacts)
    .where(and(eq(contacts.portalId, portalId), named));
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

/** What a bulk update may change on a contact: the columns an import row changes. */
export type FieldChanges = Pick<
  ContactChanges,
  | 'email'
  | 'firstName'
  | 'lastName'
  | 'attributes'
  | 'tags'
  | 'consentWhatsapp'
  | 'consentSource'
  | 'consentUpdatedAt'
>;

/**
 * Update many contacts of the portal in one statement, each with its own changes: the columns
 * its changes carry are set, the others kept, and `updated_at` becomes now(). A
 * `consentUpdatedAt` among the changes stamps `consent_updated_at` with now() (as
 * `upsertChanges` asks on a consent change).
 *
 * @returns per updated contact, what the opt-out steps read; ids the portal does not have are
 *   neither updated nor returned.
 */
export async function updateContacts(
  tx: Tx,
  portalId: number,
  updates: readonly { id: string; changes: FieldChanges }[],
) {
  if (updates.length === 0) return [];
  // One JSON object keyed by contact id; `consentUpdatedAt` (always now()) travels as a flag.
  const byId = Object.fromEntries(
    updates.map(({ id, changes }) => [
      id,
      { ...changes, consentUpdatedAt: changes.consentUpdatedAt === undefined ? undefined : true },
    ]),
  );
  const kept = (key: keyof FieldChanges, value: SQL, column: SQL) =>
    sql`case when u.changes ? ${sql.raw(`'${key}'`)} then ${value} else ${column} end`;
  return tx
    .update(contacts)
    .set({
      email: kept('email', sql`u.changes ->> 'email'`, sql`${contacts.email}`),
      firstName: kept('firstName', sql`u.changes ->> 'firstName'`, sql`${contacts.firstName}`),
      lastName: kept('lastName', sql`u.changes ->> 'lastName'`, sql`${contacts.lastName}`),
      attributes: kept('attributes', sql`u.changes -> 'attributes'`, sql`${contacts.attributes}`),
      tags: kept(
        'tags',
        sql`array(select jsonb_array_elements_text(u.changes -> 'tags'))`,
        sql`${contacts.tags}`,
      ),
      consentWhatsapp: sql`coalesce(u.changes ->> 'consentWhatsapp', ${contacts.consentWhatsapp})`,
      consentSource: sql`coalesce(u.changes ->> 'consentSource', ${contacts.consentSource})`,
      consentUpdatedAt: kept('consentUpdatedAt', sql`now()`, sql`${contacts.consentUpdatedAt}`),
      updatedAt: sql`now()`,
    })
    .from(sql`jsonb_each(${JSON.stringify(byId)}::jsonb) as u(id, changes)`)
    .where(and(eq(contacts.portalId, portalId), sql`${contacts.id} = u.id`))
    .returning({
      portalId: contacts.portalId,
      id: contacts.id,
      consentWhatsapp: contacts.consentWhatsapp,
      consentSource: contacts.consentSource,
      consentUpdatedAt: contacts.consentUpdatedAt,
    });
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
  if (filter.waUserId !== undefined) conditions.push(eq(contacts.waUserId, filter.waUserId));
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
 * The statement of a list page, not yet run: newest first, by keyset on `(created_at, id)`,
 * `limit` rows. bench/contacts.ts explains it.
 */
export function contactPageQuery(
  db: Db,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; filter: ContactFilter },
) {
  const { where, orderBy } = keysetClauses(
    contacts,
    filterConditions(portalId, options.filter),
    options.after,
  );
  return selectPage(db, where, orderBy, options.limit);
}

function selectPage(db: Db, where: SQL | undefined, orderBy: SQL[], limit: number) {
  return db
    .select()
    .from(contacts)
    .where(where)
    .orderBy(...orderBy)
    .limit(limit);
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
  return readKeysetPage(
    contacts,
    filterConditions(portalId, options.filter),
    options,
    (where, orderBy, limit) => selectPage(db, where, orderBy, limit),
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
