/**
 * The senders of an inbound batch, as contacts: each person is found by phone first, then by
 * business-scoped user id (BSUID), and created when neither is known; what the webhook says of
 * them (BSUID, parent BSUID, username, profile name, and a phone that appears later) is kept on
 * the contact, and `last_inbound_at` moves forward only. When a webhook carries a phone and a
 * BSUID that two contacts hold (a person first known by BSUID alone, then by their number), the
 * BSUID's contact is merged into the phone's: its messages, conversations, consent history and
 * marketing stops move over, it is deleted, and the merge is audited (ids only).
 *
 * Set-based: one read of the batch's known people, one insert of the new ones, one update of the
 * others (a merge, rare, costs its own statements).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 * @see docs/decisions/0055-business-scoped-user-ids.md
 */
import { and, eq, inArray, or, sql } from 'drizzle-orm';
import { recordAuditEvent } from '../../audit/audit-log.ts';
import { newContactId } from '../../contacts/contact-id.ts';
import { marketingPreferences } from '../../db/schema/account-signals.ts';
import { contacts } from '../../db/schema/contacts.ts';
import { consentChanges, conversations } from '../../db/schema/conversations.ts';
import { messages } from '../../db/schema/messages.ts';
import type { Tx } from '../store/messages-repository.ts';

/** One sender of the batch, as the webhook named them (phone E.164, or BSUID, or both). */
export interface InboundPerson {
  phone: string | null;
  waUserId: string | null;
  parentWaUserId: string | null;
  username: string | null;
  profileName: string | null;
  /** Their newest message's time (ISO 8601). */
  at: string;
}

type Known = Pick<typeof contacts.$inferSelect, 'id' | 'phone' | 'waUserId'>;

/** The actor of a merge the provider's webhook caused. */
const PROVIDER = { type: 'provider', id: 'whatsapp' } as const;

/**
 * Record the batch's senders (see the module).
 *
 * @returns each person's contact id, in `people`'s order.
 */
export async function recordInboundPeople(
  tx: Tx,
  portalId: number,
  people: readonly InboundPerson[],
): Promise<string[]> {
  if (people.length === 0) return [];
  const known = await findKnown(tx, portalId, people);
  const ids: (string | null)[] = [];
  const fresh: { id: string; person: InboundPerson }[] = [];
  for (const person of people) {
    const byPhone = person.phone === null ? undefined : known.find((k) => k.phone === person.phone);
    const byUser =
      person.waUserId === null ? undefined : known.find((k) => k.waUserId === person.waUserId);
    if (byPhone && byUser && byPhone.id !== byUser.id) {
      await mergeContact(tx, portalId, byUser.id, byPhone.id);
      known.splice(known.indexOf(byUser), 1);
    }
    const found = byPhone ?? byUser;
    if (found) {
      ids.push(found.id);
      // What later people of the batch match: the identifiers this contact now has.
      found.phone ??= person.phone;
      if (person.waUserId !== null) found.waUserId = person.waUserId;
    } else {
      const id = newContactId();
      fresh.push({ id, person });
      ids.push(id);
      known.push({ id, phone: person.phone, waUserId: person.waUserId });
    }
  }
  if (fresh.length > 0) await insertPeople(tx, portalId, fresh);
  // Contacts a concurrent batch created first (the insert skipped them): found again now.
  const stored = new Set(
    (
      await tx
        .select({ id: contacts.id })
        .from(contacts)
        .where(and(eq(contacts.portalId, portalId), inArray(contacts.id, ids as string[])))
    ).map((r) => r.id),
  );
  if (stored.size < new Set(ids).size) {
    const again = await findKnown(tx, portalId, people);
    people.forEach((p, i) => {
      if (stored.has(ids[i]!)) return;
      const k =
        (p.phone !== null && again.find((a) => a.phone === p.phone)) ||
        (p.waUserId !== null && again.find((a) => a.waUserId === p.waUserId));
      ids[i] = k ? k.id : null;
    });
  }
  const result = ids.map((id) => {
    if (id === null) throw new Error('an inbound sender could not be recorded');
    return id;
  });
  await updatePeople(tx, portalId, people, result);
  return result;
}

async function findKnown(tx: Tx, portalId: number, people: readonly InboundPerson[]) {
  const phones = people.flatMap((p) => (p.phone === null ? [] : [p.phone]));
  const users = people.flatMap((p) => (p.waUserId === null ? [] : [p.waUserId]));
  const which = [
    ...(phones.length > 0 ? [inArray(contacts.phone, phones)] : []),
    ...(users.length > 0 ? [inArray(contacts.waUserId, users)] : []),
  ];
  const rows: Known[] = await tx
    .select({ id: contacts.id, phone: contacts.phone, waUserId: contacts.waUserId })
    .from(contacts)
    .where(and(eq(contacts.portalId, portalId), or(...which)))
    .orderBy(contacts.id)
    .for('update');
  return rows;
}

async function insertPeople(
  tx: Tx,
  portalId: number,
  fresh: readonly { id: string; person: InboundPerson }[],
): Promise<void> {
  await tx
    .insert(contacts)
    .values(
      fresh.map(({ id, person: p }) => ({
        id,
        portalId,
        phone: p.phone,
        waUserId: p.waUserId,
        parentWaUserId: p.parentWaUserId,
        username: p.username,
        profileName: p.profileName,
        consentSource: 'provider' as const,
        lastInboundAt: new Date(p.at),
      })),
    )
    .onConflictDoNothing();
}

/**
 * Each contact takes what the webhook says: a phone it lacked, the BSUID (a changed one
 * replaces the old), parent BSUID, username and profile name when given; `last_inbound_at`
 * forward only (a late or repeated webhook changes nothing).
 */
async function updatePeople(
  tx: Tx,
  portalId: number,
  people: readonly InboundPerson[],
  ids: readonly string[],
): Promise<void> {
  const rows = JSON.stringify(
    people.map((p, i) => ({
      id: ids[i],
      phone: p.phone,
      wa_user_id: p.waUserId,
      parent_wa_user_id: p.parentWaUserId,
      username: p.username,
      profile_name: p.profileName,
      at: p.at,
    })),
  );
  await tx.execute(sql`
    update ${contacts} c set
      phone = coalesce(c.phone, u.phone),
      wa_user_id = coalesce(u.wa_user_id, c.wa_user_id),
      parent_wa_user_id = coalesce(u.parent_wa_user_id, c.parent_wa_user_id),
      username = coalesce(u.username, c.username),
      profile_name = coalesce(u.profile_name, c.profile_name),
      last_inbound_at = greatest(c.last_inbound_at, u.at),
      updated_at = now()
    from (
      select distinct on (id) * from jsonb_to_recordset(${rows}::jsonb) as r(id text,
        phone text, wa_user_id text, parent_wa_user_id text, username text, profile_name text,
        at timestamptz)
      order by id, at desc) u
    where c.portal_id = ${portalId}::int and c.id = u.id`);
}

/**
 * Merge contact `from` into contact `into` (one person, first known by BSUID alone): messages,
 * consent history and marketing stops move; each conversation moves, or is folded into `into`'s
 * with the same business number; `from` is deleted; the merge is audited by ids.
 */
async function mergeContact(tx: Tx, portalId: number, from: string, into: string): Promise<void> {
  await tx
    .update(messages)
    .set({ contactId: into })
    .where(and(eq(messages.portalId, portalId), eq(messages.contactId, from)));
  await tx
    .update(consentChanges)
    .set({ contactId: into })
    .where(and(eq(consentChanges.portalId, portalId), eq(consentChanges.contactId, from)));
  await tx.execute(sql`
    update ${marketingPreferences} m set contact_id = ${into}
    where m.portal_id = ${portalId}::int and m.contact_id = ${from} and not exists (
      select 1 from ${marketingPreferences} o where o.portal_id = m.portal_id
        and o.contact_id = ${into} and o.phone_number_id = m.phone_number_id)`);
  // A conversation `into` has with the same number takes the other's newest message and counts.
  await tx.execute(sql`
    update ${conversations} c set
      last_message_id = case when f.last_message_at > c.last_message_at
        then f.last_message_id else c.last_message_id end,
      last_direction = case when f.last_message_at > c.last_message_at
        then f.last_direction else c.last_direction end,
      last_message_at = greatest(c.last_message_at, f.last_message_at),
      unread_count = c.unread_count + f.unread_count,
      last_inbound_at = greatest(c.last_inbound_at, f.last_inbound_at)
    from ${conversations} f
    where c.portal_id = ${portalId}::int and c.contact_id = ${into}
      and f.portal_id = c.portal_id and f.contact_id = ${from}
      and f.phone_number_id = c.phone_number_id`);
  await tx.execute(sql`
    update ${conversations} f set contact_id = ${into}
    where f.portal_id = ${portalId}::int and f.contact_id = ${from} and not exists (
      select 1 from ${conversations} c where c.portal_id = f.portal_id
        and c.contact_id = ${into} and c.phone_number_id = f.phone_number_id)`);
  // What `from` had that `into` lacks, then `from` goes (its folded conversations with it).
  const [gone] = await tx
    .delete(contacts)
    .where(and(eq(contacts.portalId, portalId), eq(contacts.id, from)))
    .returning();
  if (gone)
    await tx
      .update(contacts)
      .set({
        lastInboundAt: sql`greatest(${contacts.lastInboundAt},
          ${gone.lastInboundAt?.toISOString() ?? null}::timestamptz)`,
        parentWaUserId: sql`coalesce(${contacts.parentWaUserId}, ${gone.parentWaUserId})`,
        username: sql`coalesce(${contacts.username}, ${gone.username})`,
        profileName: sql`coalesce(${contacts.profileName}, ${gone.profileName})`,
      })
      .where(and(eq(contacts.portalId, portalId), eq(contacts.id, into)));
  await recordAuditEvent(tx, {
    portalId,
    actor: PROVIDER,
    action: 'contact.merged',
    reason: `${from} into ${into}`,
  });
}

/**
 * A person's BSUID changed (the provider's system message): the contact that held the previous
 * BSUID takes the new one (and the new parent BSUID when given). When another contact already
 * holds the new BSUID, the two are one person and are merged (audited, ids only): the one with a
 * phone wins, else the one under the new BSUID. Nothing happens when no contact held either.
 *
 * @param change BSUIDs as received (`US.1349…`); `parentUserId` the new parent BSUID, if any.
 * @returns the contact that now holds `userId`, or null when Portico knew neither BSUID.
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/
 * @see docs/decisions/0055-business-scoped-user-ids.md
 */
export async function recordUserIdChange(
  tx: Tx,
  portalId: number,
  change: { previousUserId: string; userId: string; parentUserId?: string | undefined },
): Promise<string | null> {
  const rows = await tx
    .select({ id: contacts.id, phone: contacts.phone, waUserId: contacts.waUserId })
    .from(contacts)
    .where(
      and(
        eq(contacts.portalId, portalId),
        inArray(contacts.waUserId, [change.previousUserId, change.userId]),
      ),
    )
    .orderBy(contacts.id)
    .for('update');
  const old = rows.find((r) => r.waUserId === change.previousUserId);
  const current = rows.find((r) => r.waUserId === change.userId);
  let keep: string;
  if (old && current && old.id !== current.id) {
    const oldWins = old.phone !== null && current.phone === null;
    const [from, into] = oldWins ? [current, old] : [old, current];
    await mergeContact(tx, portalId, from.id, into.id);
    keep = into.id;
  } else if (old ?? current) keep = (old ?? current)!.id;
  else return null;
  await tx
    .update(contacts)
    .set({
      waUserId: change.userId,
      ...(change.parentUserId !== undefined && { parentWaUserId: change.parentUserId }),
      updatedAt: new Date(),
    })
    .where(and(eq(contacts.portalId, portalId), eq(contacts.id, keep)));
  return keep;
}
