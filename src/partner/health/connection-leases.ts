/**
 * Health-check leases on connection rows: several Portico instances on one PostgreSQL check
 * each connection by one instance at a time, and a crashed instance's lease expires.
 *
 * @see https://www.postgresql.org/docs/current/sql-select.html#SQL-FOR-UPDATE-SHARE (SKIP LOCKED)
 */
import { and, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { connections } from '../../db/schema/index.ts';

/**
 * Lease up to `limit` active connections that are due for a health check to `owner` for
 * `leaseMs`. `FOR UPDATE SKIP LOCKED` and the lease columns make each connection checked by
 * one instance at a time: a row leased by another live instance is skipped, an expired
 * lease (a crashed instance) is taken over.
 *
 * @param dueBefore connections last checked before this instant (or never) are due.
 */
export async function leaseDueConnections(
  db: Database,
  input: {
    owner: string;
    leaseMs: number;
    dueBefore: Date;
    limit: number;
  },
): Promise<number[]> {
  return db.transaction(async (tx) => {
    const now = new Date();
    const due = await tx
      .select({ portalId: connections.portalId })
      .from(connections)
      .where(
        and(
          eq(connections.status, 'active'),
          or(isNull(connections.lastCheckedAt), lt(connections.lastCheckedAt, input.dueBefore)),
          or(isNull(connections.checkLeaseUntil), lt(connections.checkLeaseUntil, now)),
        ),
      )
      .orderBy(sql`${connections.lastCheckedAt} asc nulls first`)
      .limit(input.limit)
      .for('update', { skipLocked: true });
    const ids = due.map((r) => r.portalId);
    if (ids.length === 0) return [];
    await tx
      .update(connections)
      .set({
        checkLeaseOwner: input.owner,
        checkLeaseUntil: new Date(now.getTime() + input.leaseMs),
      })
      .where(inArray(connections.portalId, ids));
    return ids;
  });
}

/** Record a finished health check of `portalId` by `owner` and release the lease. */
export async function finishConnectionCheck(
  db: Database,
  portalId: number,
  owner: string,
): Promise<void> {
  await db
    .update(connections)
    .set({ lastCheckedAt: new Date(), checkLeaseOwner: null, checkLeaseUntil: null })
    .where(and(eq(connections.portalId, portalId), eq(connections.checkLeaseOwner, owner)));
}
