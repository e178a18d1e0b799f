/**
 * The daily counts of a portal's messages (`message_daily_counts`): per UTC day of creation,
 * how many are now sent, delivered, read or failed — what the `/messages` chart shows, read in
 * a few rows whatever the number of messages.
 *
 * Maintained by the status changes, in the transaction of each change (`countStatusChanges`):
 * a message leaving `queued` adds one to its new status, a later change moves that one to the
 * next status. A send (the message queued) writes nothing here. Each change goes to one of
 * `SHARDS` rows of the day, chosen by the message id, so that concurrent changes of one portal
 * rarely wait for the same row; a day's counts are the sum of its rows.
 *
 * @see docs/decisions/0025-page-counts.md
 */
import { and, asc, eq, gte, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { messageDailyCounts } from '../../db/schema/message-daily-counts.ts';
import type { MESSAGE_STATUSES } from '../../db/schema/messages.ts';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Db = Database | Tx;
type Status = (typeof MESSAGE_STATUSES)[number];

/** The statuses counted (a queued message is not). */

type Counted = 'sent' | 'delivered' | 'read' | 'failed';

/** Rows per portal and day. */
const SHARDS = 16;

/**
 * The shard of a message: its id's last character (random base62) modulo SHARDS, the same
 * as `ascii(right(id, 1)) % 16` in SQL (the migration's backfill and `refreshDailyCounts`).
 */
function shardOf(messageId: string): number {
  return messageId.charCodeAt(messageId.length - 1) % SHARDS;
}

/** One message's status change. */
export interface StatusChange {
  id: string;
  createdAt: Date;
  from: Status;
  to: Status;
}

const isCounted = (s: Status): s is Counted => s !== 'queued';

/**
 * Count status changes of messages of `portalId`, in the caller's transaction (the one that
 * changed the statuses). One statement: the changes summed per day and shard, added to the
 * rows (created at the first change of a day). Rows are written in (day, shard) order, so
 * two transactions never wait for each other's rows in opposite orders.
 */
export async function countStatusChanges(
  tx: Db,
  portalId: number,
  changes: readonly StatusChange[],
): Promise<void> {
  const deltas = new Map<string, { day: string; shard: number } & Record<Counted, number>>();
  for (const c of changes) {
    if (c.from === c.to) continue;
    const day = c.createdAt.toISOString().slice(0, 10);
    const shard = shardOf(c.id);
    const key = `${day}/${String(shard).padStart(2, '0')}`;
    let d = deltas.get(key);
    if (!d) deltas.set(key, (d = { day, shard, sent: 0, delivered: 0, read: 0, failed: 0 }));
    if (isCounted(c.from)) d[c.from] -= 1;
    if (isCounted(c.to)) d[c.to] += 1;
  }
  if (deltas.size === 0) return;
  const rows = [...deltas.keys()].sort().map((key) => ({ portalId, ...deltas.get(key)! }));
  const t = messageDailyCounts;
  await tx
    .insert(t)
    .values(rows)
    .onConflictDoUpdate({
      target: [t.portalId, t.day, t.shard],
      set: {
        sent: sql`${t.sent} + excluded.sent`,
        delivered: sql`${t.delivered} + excluded.delivered`,
        read: sql`${t.read} + excluded.read`,
        failed: sql`${t.failed} + excluded.failed`,
      },
    });
}

/** One day's counts; `day` is `YYYY-MM-DD` (UTC). */
export interface DayCounts {
  day: string;
  sent: number;
  delivered: number;
  read: number;
  failed: number;
}

/**
 * The counts of the days in `[since, until)` (`YYYY-MM-DD`, UTC), oldest first; days without
 * a counted message are absent. At most SHARDS rows a day are read (the primary key's range).
 */
export async function readDailyCounts(
  db: Db,
  portalId: number,
  range: { since: string; until: string },
): Promise<DayCounts[]> {
  const t = messageDailyCounts;
  const rows = await db
    .select({
      day: t.day,
      sent: sql<number>`sum(${t.sent})::int`,
      delivered: sql<number>`sum(${t.delivered})::int`,
      read: sql<number>`sum(${t.read})::int`,
      failed: sql<number>`sum(${t.failed})::int`,
    })
    .from(t)
    .where(and(eq(t.portalId, portalId), gte(t.day, range.since), lt(t.day, range.until)))
    .groupBy(t.day)
    .orderBy(asc(t.day));
  return rows.map((r) => ({
    day: r.day,
    sent: Number(r.sent),
    delivered: Number(r.delivered),
    read: Number(r.read),
    failed: Number(r.failed),
  }));
}

/**
 * Recount a portal's daily counts from its messages (one statement over all of them): for
 * messages written without their status changes counted (the benchmark's seed) and to check
 * the maintained counts against the messages.
 */
export async function refreshDailyCounts(db: Database, portalId: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.delete(messageDailyCounts).where(eq(messageDailyCounts.portalId, portalId));
    await tx.execute(sql`
      insert into message_daily_counts (portal_id, day, shard, sent, delivered, read, failed)
      select portal_id, (created_at at time zone 'UTC')::date, ascii(right(id, 1)) % ${SHARDS},
        count(*) filter (where status = 'sent'), count(*) filter (where status = 'delivered'),
        count(*) filter (where status = 'read'), count(*) filter (where status = 'failed')
      from messages where portal_id = ${portalId} and status <> 'queued'
      group by 1, 2, 3`);
  });
}
