/**
 * A contact's erasure, support side (a step of contacts/'s erasure, given in services.ts): the
 * portal's tickets (subject, description), their public comments and the agents' internal
 * notes keep their text, but every mention of the person (phone, email, names; see
 * platform/erased-person.ts) becomes `erased`. Rows are found by a case-insensitive match in
 * the query, filtered by portal id, then rewritten only where the whole-word pattern matched.
 *
 * @see docs/support.md
 * @see docs/security.md
 */
import { and, desc, eq, inArray, or, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { supportTickets, ticketComments, ticketNotes } from '../db/schema/index.ts';
import { nationalDigits, withoutPerson, type ErasedPerson } from '../platform/erased-person.ts';
import type { TICKET_STATUSES } from '../db/schema/support-tickets.ts';
import type { Database } from '../db/client.ts';
import type { Tx } from './tickets-repository.ts';

/** What one kind of row lost: `count` rows of `what` rewritten without the person. */
interface Anonymised {
  kind: 'anonymised';
  what: 'tickets' | 'ticketComments' | 'ticketNotes';
  count: number;
}

/** The person's terms as they may appear in text, for the query's first, coarse match. */
function terms(person: ErasedPerson): string[] {
  const digits = person.phone?.replace(/^\+/, '');
  return [
    digits,
    person.email,
    person.firstName,
    person.lastName,
    person.waUserId,
    person.parentWaUserId,
    person.username,
    person.profileName,
  ].filter((t): t is string => typeof t === 'string' && t.trim().length > 1);
}

/**
 * Whether any of `columns` contains any term (case-insensitive, no pattern characters), or the
 * person's national number once everything but digits is dropped (a phone written with spaces,
 * dashes or brackets).
 */
function mentions(columns: AnyPgColumn[], person: ErasedPerson): SQL {
  const national = nationalDigits(person);
  const clauses = columns.flatMap((c) => [
    ...terms(person).map((t) => sql`strpos(lower(${c}), ${t.trim().toLowerCase()}) > 0`),
    ...(national === null
      ? []
      : [sql`strpos(regexp_replace(${c}, '[^0-9]', '', 'g'), ${national}) > 0`]),
  ]);
  return or(...clauses)!;
}

/**
 * Strip the person from the portal's tickets, comments and internal notes.
 *
 * @returns how many tickets, comments and notes were rewritten.
 */
export async function anonymiseTicketsOf(tx: Tx, person: ErasedPerson): Promise<Anonymised[]> {
  const t = supportTickets;
  let tickets = 0;
  const found = await tx
    .select({ id: t.id, subject: t.subject, description: t.description })
    .from(t)
    .where(and(eq(t.portalId, person.portalId), mentions([t.subject, t.description], person)));
  for (const row of found) {
    const subject = withoutPerson(row.subject, person);
    const description = withoutPerson(row.description, person);
    if (subject === row.subject && description === row.description) continue;
    await tx
      .update(t)
      .set({ subject, description })
      .where(and(eq(t.portalId, person.portalId), eq(t.id, row.id)));
    tickets++;
  }
  const c = ticketComments;
  let comments = 0;
  const commented = await tx
    .select({ id: c.id, body: c.body })
    .from(c)
    .where(and(eq(c.portalId, person.portalId), mentions([c.body], person)));
  for (const row of commented) {
    const body = withoutPerson(row.body, person);
    if (body === row.body) continue;
    await tx
      .update(c)
      .set({ body })
      .where(and(eq(c.portalId, person.portalId), eq(c.id, row.id)));
    comments++;
  }
  // Notes have no portal column: the portal's tickets bound them.
  const n = ticketNotes;
  const portalTickets = tx.select({ id: t.id }).from(t).where(eq(t.portalId, person.portalId));
  let notes = 0;
  const noted = await tx
    .select({ id: n.id, body: n.body })
    .from(n)
    .where(and(inArray(n.ticketId, portalTickets), mentions([n.body], person)));
  for (const row of noted) {
    const body = withoutPerson(row.body, person);
    if (body === row.body) continue;
    await tx
      .update(n)
      .set({ body })
      .where(and(inArray(n.ticketId, portalTickets), eq(n.id, row.id)));
    notes++;
  }
  return [
    { kind: 'anonymised', what: 'tickets', count: tickets },
    { kind: 'anonymised', what: 'ticketComments', count: comments },
    { kind: 'anonymised', what: 'ticketNotes', count: notes },
  ];
}

/** A ticket that names a person, as a contact's page lists it. */
export interface TicketNaming {
  /** `tkt_…` */
  id: string;
  subject: string;
  status: (typeof TICKET_STATUSES)[number];
  createdAt: Date;
}

/**
 * The portal's support tickets whose subject or description names the person (the same match
 * as their erasure: a coarse one in the query, then the whole-word pattern), newest first, at
 * most `limit`: what an erasure of the contact would rewrite.
 */
export async function ticketsNaming(
  db: Database | Tx,
  person: ErasedPerson,
  limit: number,
): Promise<TicketNaming[]> {
  const t = supportTickets;
  const found = await db
    .select({
      id: t.id,
      subject: t.subject,
      description: t.description,
      status: t.status,
      createdAt: t.createdAt,
    })
    .from(t)
    .where(and(eq(t.portalId, person.portalId), mentions([t.subject, t.description], person)))
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(limit * 4);
  return found
    .filter(
      (r) =>
        withoutPerson(r.subject, person) !== r.subject ||
        withoutPerson(r.description, person) !== r.description,
    )
    .slice(0, limit)
    .map(({ id, subject, status, createdAt }) => ({ id, subject, status, createdAt }));
}
