import { date, integer, pgTable, primaryKey, smallint } from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';

/**
 * How many of a portal's messages created on a UTC day are now sent, delivered, read or failed
 * (each message counted under its current status, as `/messages` charts them). Maintained by
 * every status change in the transaction of the change (messaging/store/daily-counts.ts);
 * a queued message is not counted, so a send writes nothing here.
 *
 * A day's counts are spread over `shard` rows (0–15, from the message id), so that status
 * changes of one portal on one day do not all wait for the same row lock; a day's figure is
 * the sum of its shards. Only that sum means anything: one shard alone may be negative.
 *
 * @see docs/decisions/0025-page-counts.md
 */
export const messageDailyCounts = pgTable(
  'message_daily_counts',
  {
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    /** The UTC day the messages were created (queued) on. */
    day: date('day', { mode: 'string' }).notNull(),
    shard: smallint('shard').notNull(),
    sent: integer('sent').notNull().default(0),
    delivered: integer('delivered').notNull().default(0),
    read: integer('read').notNull().default(0),
    failed: integer('failed').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.portalId, t.day, t.shard] })],
);
