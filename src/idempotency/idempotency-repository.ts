/**
 * Queries over `idempotency_keys`: the first response of each `(portal, Idempotency-Key)` for
 * 24 hours. Invariant (docs/security.md, tenant isolation): every statement filters by portal id
 * in the statement itself.
 */
import { and, or, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { idempotencyKeys } from '../db/schema/index.ts';
import { ERASED, personPattern, type ErasedPerson } from '../platform/erased-person.ts';

/** Drizzle's transaction handle (same query API as the database). */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Db = Database | Tx;

export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/** How long a key keeps its first response, in hours. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

/**
 * Claim `(portalId, key)` for a new request, in the caller's transaction. A live row held by
 * another transaction makes this statement wait until that transaction ends; an expired row
 * is taken over.
 *
 * @returns true when this transaction now owns the key; false when a live row exists.
 */
export async function claimIdempotencyKey(
  tx: Tx,
  portalId: number,
  key: string,
  requestHash: string,
): Promise<boolean> {
  const expiresAt = sql`now() + make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS})`;
  const claimed = await tx
    .insert(idempotencyKeys)
    .values({ portalId, key, requestHash, expiresAt })
    .onConflictDoUpdate({
      target: [idempotencyKeys.portalId, idempotencyKeys.key],
      set: {
        requestHash,
        responseStatus: null,
        responseBody: null,
        createdAt: sql`now()`,
        expiresAt,
      },
      setWhere: sql`${idempotencyKeys.expiresAt} <= now()`,
    })
    .returning({ key: idempotencyKeys.key });
  return claimed.length === 1;
}

export async function findIdempotencyKey(
  db: Db,
  portalId: number,
  key: string,
): Promise<IdempotencyRow | null> {
  const [row] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.portalId, portalId), eq(idempotencyKeys.key, key)));
  return row ?? null;
}

export async function saveIdempotentResponse(
  tx: Tx,
  portalId: number,
  key: string,
  response: { status: number; body: unknown },
): Promise<void> {
  await tx
    .update(idempotencyKeys)
    .set({ responseStatus: response.status, responseBody: response.body })
    .where(and(eq(idempotencyKeys.portalId, portalId), eq(idempotencyKeys.key, key)));
}

/**
 * Delete the expired keys of every portal: the `idempotency.expire` background task
 * (src/background-tasks.ts). A claim treats an expired key as absent, so this only frees
 * storage. One statement outside any ticket transaction: it only waits on rows being claimed,
 * and a claim never waits on two rows, so the two cannot deadlock.
 *
 * @returns how many rows were deleted.
 * @see docs/architecture.md "jobs/"
 */
export async function expireIdempotencyKeys(db: Database): Promise<number> {
  const deleted = await db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.expiresAt, sql`now()`))
    .returning({ key: idempotencyKeys.key });
  return deleted.length;
}

/**
 * A stored response without the person: the contact's own object (`{id: <contact id>, …}`, a
 * contact's creation) becomes `{id, erased: true}`; a `contactId` naming them becomes null; their
 * phone, email and names inside any text become `erased`. Everything else (status, message ids,
 * prices) stays, so a replay answers as the original did.
 */
export function tombstoneOf(body: unknown, person: ErasedPerson): unknown {
  const pattern = personPattern(person);
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return value.replace(pattern, ERASED);
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    const object = value as Record<string, unknown>;
    if (object.id === person.id) return { id: person.id, erased: true };
    return Object.fromEntries(
      Object.entries(object).map(([k, v]) => [
        k,
        k === 'contactId' && v === person.id ? null : walk(v),
      ]),
    );
  };
  return walk(body);
}

/**
 * Turn the portal's stored `Idempotency-Key` responses that name a contact (by its id or its
 * phone: a contact's creation, a message sent to them, a draft addressed to them) into
 * tombstones (`tombstoneOf`): a replay of the key within its 24 hours answers as the first
 * response did, without the person, and neither creates nor charges again. The key of the
 * contact's own creation is deleted instead: a retry of it creates a new contact. Ids and E.164 phones
 * need no JSON escaping, so they are matched as quoted strings of the body's text.
 *
 * @returns how many were rewritten.
 */
export async function tombstoneStoredResponsesNaming(
  db: Db,
  person: ErasedPerson,
): Promise<number> {
  const names = (value: string) =>
    sql`strpos(${idempotencyKeys.responseBody}::text, ${JSON.stringify(value)}) > 0`;
  const rows = await db
    .select({ key: idempotencyKeys.key, body: idempotencyKeys.responseBody })
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.portalId, person.portalId),
        or(
          names(person.id),
          ...[person.phone, person.waUserId].flatMap((v) => (v ? [names(v)] : [])),
        ),
      ),
    )
    .for('update');
  for (const row of rows) {
    const key = and(
      eq(idempotencyKeys.portalId, person.portalId),
      eq(idempotencyKeys.key, row.key),
    );
    // The contact's own creation: the resource is gone, so its key goes too (a retry creates
    // anew); a tombstone of it would not be a contact the route could answer with.
    if ((row.body as { data?: { id?: unknown } } | null)?.data?.id === person.id)
      await db.delete(idempotencyKeys).where(key);
    else
      await db
        .update(idempotencyKeys)
        .set({ responseBody: tombstoneOf(row.body, person) })
        .where(key);
  }
  return rows.length;
}
