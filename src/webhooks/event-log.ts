/**
 * The portal's event log: every event Portico emits to the portal (the rows of
 * `webhook_events`, test events aside), read in one strict order with a cursor that never skips
 * an event, and kept `EVENTS_RETENTION_DAYS`.
 *
 * The order is `(writer_xid, position)`: the id of the transaction that wrote the event, then the
 * event's place among that transaction's events. A read serves only events whose `writer_xid` is
 * below the xmin of the reader's snapshot (`pg_snapshot_xmin(pg_current_snapshot())`): every
 * transaction below it has ended, and every transaction that has not ended — or starts later —
 * has an id at or above it. So an event that commits after a read always sorts after every event
 * that read served, whichever instance wrote it and however long its transaction stayed open: a
 * reader that polls from its last cursor gets every event exactly once, in the same order. An
 * event becomes readable once every transaction older than its own has ended (usually within
 * milliseconds).
 *
 * @see https://www.postgresql.org/docs/current/functions-info.html#FUNCTIONS-PG-SNAPSHOT
 * @see docs/decisions/0038-event-log-order.md
 */
import { and, asc, eq, inArray, lt, ne, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { webhookEvents } from '../db/schema/index.ts';
import { AppError } from '../platform/errors.ts';
import { DecryptionError } from '../platform/keyring.ts';
import { openEventPayload, type EventKeyring } from './event-payload.ts';
import { TEST_EVENT_TYPE } from './webhook-events.ts';
import type { Tx } from './webhooks-repository.ts';

type Db = Database | Tx;

/** A place in the log: after the event written by transaction `xid` at `position`. */
export interface LogPosition {
  /** The writing transaction's id (`xid8`), as decimal text. */
  xid: string;
  position: number;
}

/** The start of the log: before every event. */
export const LOG_START: LogPosition = { xid: '0', position: 0 };

/** One event as the log serves it: the webhook's payload and its `webhook-id`. */
export interface LoggedEvent {
  /** `evt_…`: the `webhook-id` of its deliveries. */
  id: string;
  type: string;
  /** ISO 8601, UTC: the payload's `timestamp`. */
  timestamp: string;
  /** The payload's `data`; null when it cannot be opened (its key left the keyring). */
  data: Record<string, unknown> | null;
  /** The cursor just after this event. */
  cursor: string;
}

const invalidCursor = (field: string) =>
  new AppError(
    'invalid_request',
    'The cursor is not valid; use a nextCursor or cursor of /events.',
    {
      details: [{ field, message: 'is not a cursor of the event log' }],
    },
  );

/** The opaque cursor of a position: base64url (RFC 4648 §5) of `"<xid>.<position>"`. */
export function encodeLogCursor(p: LogPosition): string {
  return Buffer.from(`${p.xid}.${p.position}`, 'utf8').toString('base64url');
}

/**
 * The position a cursor names.
 *
 * @param field where the cursor came from, for the error's `details` (`querystring.since`).
 * @throws AppError `invalid_request` when it is not a cursor this service produced.
 */
export function decodeLogCursor(cursor: string, field: string): LogPosition {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) throw invalidCursor(field);
  const match = /^(\d{1,20})\.(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw invalidCursor(field);
  const position = Number(match[2]);
  if (!Number.isSafeInteger(position) || BigInt(match[1]!) >= 2n ** 64n) throw invalidCursor(field);
  return { xid: String(BigInt(match[1]!)), position };
}

/** `(writer_xid, position) > after`. */
export function afterPosition(after: LogPosition): SQL {
  return sql`(${webhookEvents.writerXid}, ${webhookEvents.position}) > (${after.xid}::xid8, ${after.position}::bigint)`;
}

/** `(writer_xid, position) <= upTo`. */
export function upToPosition(upTo: LogPosition): SQL {
  return sql`(${webhookEvents.writerXid}, ${webhookEvents.position}) <= (${upTo.xid}::xid8, ${upTo.position}::bigint)`;
}

/** Only events whose writing transaction ended before this statement's snapshot. */
export const BELOW_HORIZON = sql`${webhookEvents.writerXid} < pg_snapshot_xmin(pg_current_snapshot())`;

/** The log's order. */
export const LOG_ORDER = [asc(webhookEvents.writerXid), asc(webhookEvents.position)];

/** What a page of the log starts from and holds. */
export interface LogQuery {
  after: LogPosition;
  /** Only these types (all when absent or empty). */
  types?: readonly string[] | undefined;
  /** Events at most, 1–1000. */
  limit: number;
}

/** The rows of the log after `query.after`, in order, up to `limit` (+1 to tell `hasMore`). */
function logRows(db: Db, portalId: number, query: LogQuery, extra: number) {
  const conditions = [
    eq(webhookEvents.portalId, portalId),
    ne(webhookEvents.type, TEST_EVENT_TYPE),
    afterPosition(query.after),
    BELOW_HORIZON,
    ...(query.types && query.types.length > 0
      ? [inArray(webhookEvents.type, [...query.types])]
      : []),
  ];
  return db
    .select({
      id: webhookEvents.id,
      type: webhookEvents.type,
      payload: webhookEvents.payload,
      xid: webhookEvents.writerXid,
      position: webhookEvents.position,
    })
    .from(webhookEvents)
    .where(and(...conditions))
    .orderBy(...LOG_ORDER)
    .limit(query.limit + extra);
}

/**
 * One page of the portal's event log.
 *
 * @returns the events after `query.after` in the log's order; `nextCursor`, to pass as `since`
 *   next time (the cursor of the last event, or the one given when there is none); `hasMore`
 *   when more events are readable now.
 */
export async function readEventLog(
  db: Db,
  keyring: EventKeyring,
  portalId: number,
  query: LogQuery,
): Promise<{ items: LoggedEvent[]; nextCursor: string; hasMore: boolean }> {
  const rows = await logRows(db, portalId, query, 1);
  const hasMore = rows.length > query.limit;
  const items = rows.slice(0, query.limit).map((row) => {
    let timestamp: string;
    let data: Record<string, unknown> | null = null;
    try {
      const payload = openEventPayload(keyring, portalId, row.id, row.payload);
      timestamp = payload.timestamp;
      data = payload.data;
    } catch (err) {
      // One unreadable row (its key removed) never fails the page: it is served without data.
      if (!(err instanceof DecryptionError)) throw err;
      const stored = row.payload.timestamp;
      timestamp = typeof stored === 'string' ? stored : '';
    }
    const cursor = encodeLogCursor({ xid: row.xid, position: row.position });
    return { id: row.id, type: row.type, timestamp, data, cursor };
  });
  return { items, nextCursor: items.at(-1)?.cursor ?? encodeLogCursor(query.after), hasMore };
}

/** Rows one statement of the retention sweep deletes at most (short transactions). */
export const EVENT_SWEEP_BATCH = 1000;

/**
 * Delete events created before `before`, with their deliveries, across portals, in batches.
 *
 * @returns how many events were deleted.
 */
export async function expireEvents(
  db: Database,
  before: Date,
  batch = EVENT_SWEEP_BATCH,
): Promise<number> {
  let count = 0;
  for (;;) {
    const due = db
      .select({ id: webhookEvents.id })
      .from(webhookEvents)
      .where(lt(webhookEvents.createdAt, before))
      .limit(batch);
    const rows = await db
      .delete(webhookEvents)
      .where(sql`${webhookEvents.id} in (${due})`)
      .returning({ id: webhookEvents.id });
    count += rows.length;
    if (rows.length < batch) return count;
  }
}
