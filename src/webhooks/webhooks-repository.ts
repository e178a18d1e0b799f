/**
 * The webhooks' queries. Each takes the database or a transaction and, where a portal's data is
 * read, filters by `portal_id` in the query itself.
 *
 * @see docs/webhooks.md
 */
import { and, arrayContains, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import {
  webhookDeliveries,
  webhookEndpoints,
  webhookEvents,
  webhookSettings,
} from '../db/schema/index.ts';

export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
type Db = Database | Tx;

export type EndpointRow = typeof webhookEndpoints.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type EventRow = typeof webhookEvents.$inferSelect;

export async function insertEndpoint(db: Db, row: typeof webhookEndpoints.$inferInsert) {
  const [inserted] = await db.insert(webhookEndpoints).values(row).returning();
  return inserted!;
}

export function listEndpoints(db: Db, portalId: number): Promise<EndpointRow[]> {
  return db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.portalId, portalId))
    .orderBy(webhookEndpoints.createdAt, webhookEndpoints.id);
}

export async function findEndpoint(
  db: Db,
  portalId: number,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<EndpointRow | undefined> {
  const query = db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.portalId, portalId), eq(webhookEndpoints.id, id)));
  const [row] = await (options.forUpdate ? query.for('update') : query);
  return row;
}

export async function deleteEndpoint(db: Db, portalId: number, id: string): Promise<boolean> {
  const rows = await db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.portalId, portalId), eq(webhookEndpoints.id, id)))
    .returning({ id: webhookEndpoints.id });
  return rows.length > 0;
}

export async function updateEndpoint(
  db: Db,
  portalId: number,
  id: string,
  changes: Partial<typeof webhookEndpoints.$inferInsert>,
): Promise<EndpointRow | undefined> {
  const [row] = await db
    .update(webhookEndpoints)
    .set(changes)
    .where(and(eq(webhookEndpoints.portalId, portalId), eq(webhookEndpoints.id, id)))
    .returning();
  return row;
}

/**
 * Disable an enabled endpoint with `reason`; undefined when it was not enabled (another
 * attempt disabled it first: the row lock orders the two, and the second finds it disabled).
 */
export async function disableEndpoint(
  db: Db,
  portalId: number,
  id: string,
  reason: string,
): Promise<EndpointRow | undefined> {
  const [row] = await db
    .update(webhookEndpoints)
    .set({ enabled: false, disabledReason: reason, disabledAt: new Date() })
    .where(
      and(
        eq(webhookEndpoints.portalId, portalId),
        eq(webhookEndpoints.id, id),
        eq(webhookEndpoints.enabled, true),
      ),
    )
    .returning();
  return row;
}

/** Whether any portal has a webhook endpoint (no portal's data is read). */
export async function anyEndpoint(db: Db): Promise<boolean> {
  const rows = await db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).limit(1);
  return rows.length > 0;
}

/** The portal's enabled endpoints that subscribe to `type`. */
export function subscribedEndpoints(db: Db, portalId: number, type: string) {
  return db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(
      and(
        eq(webhookEndpoints.portalId, portalId),
        eq(webhookEndpoints.enabled, true),
        arrayContains(webhookEndpoints.eventTypes, [type]),
      ),
    );
}

export async function insertEvent(db: Db, row: typeof webhookEvents.$inferInsert) {
  await db.insert(webhookEvents).values(row);
}

/** Many events in one statement. */
export async function insertEvents(db: Db, rows: (typeof webhookEvents.$inferInsert)[]) {
  if (rows.length === 0) return;
  // One JSON parameter rather than six a row (a status webhook writes thousands), inserted in
  // the order given: `position` orders the events of one transaction.
  const values = JSON.stringify(
    rows.map((r) => [
      r.id,
      r.portalId,
      r.type,
      r.payload,
      r.contactId ?? null,
      r.contactPhone ?? null,
    ]),
  );
  await db.execute(sql`
    insert into ${webhookEvents} (id, portal_id, type, payload, contact_id, contact_phone)
    select r->>0, (r->>1)::int, r->>2, r->3, r->>4, r->>5
    from jsonb_array_elements(${values}::jsonb) with ordinality as e(r, n)
    order by e.n`);
}

/** Many deliveries in one statement. */
export async function insertDeliveries(db: Db, rows: (typeof webhookDeliveries.$inferInsert)[]) {
  if (rows.length > 0) await db.insert(webhookDeliveries).values(rows);
}

export async function insertDelivery(db: Db, row: typeof webhookDeliveries.$inferInsert) {
  await db.insert(webhookDeliveries).values(row);
}

/** A delivery with its endpoint and event, locked for its attempt (no portal: the worker's read). */
export async function loadDeliveryForAttempt(tx: Tx, deliveryId: string) {
  const [row] = await tx
    .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints, event: webhookEvents })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(eq(webhookDeliveries.id, deliveryId))
    .for('update', { of: webhookDeliveries });
  return row;
}

/**
 * `loadDeliveryForAttempt` for many deliveries in one statement (the attempts a worker's fetch
 * started together), without a lock: an attempt's outcome is written only while it is still its
 * delivery's next (`recordSucceeded`, the attempt's own transaction). Rows in no given order;
 * an id without a row is absent.
 */
export function loadDeliveriesForAttempt(db: Db, deliveryIds: readonly string[]) {
  return db
    .select({ delivery: webhookDeliveries, endpoint: webhookEndpoints, event: webhookEvents })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(inArray(webhookDeliveries.id, [...deliveryIds]));
}

/** A 2xx answer to attempt `attempt` of a delivery. */
export interface Succeeded {
  deliveryId: string;
  attempt: number;
  statusCode: number;
  latencyMs: number;
  /** When the attempt was made. */
  at: Date;
}

/**
 * Record many successful attempts in one statement: each delivery becomes `succeeded` with its
 * attempt's figures — only while that attempt is still its next (pending, the attempts before
 * it made), so a duplicate job records nothing. Returns the ids recorded.
 */
export async function recordSucceeded(db: Db, items: readonly Succeeded[]): Promise<string[]> {
  if (items.length === 0) return [];
  const rows = JSON.stringify(
    items.map((i) => ({
      id: i.deliveryId,
      attempt: i.attempt,
      code: i.statusCode,
      latency: i.latencyMs,
      at: i.at.toISOString(),
    })),
  );
  const result: unknown = await db.execute(sql`
    update ${webhookDeliveries} d set
      status = 'succeeded', attempts = v.attempt, last_status_code = v.code, last_error = null,
      last_latency_ms = v.latency, last_attempt_at = v.at, next_attempt_at = null
    from jsonb_to_recordset(${rows}::jsonb)
      as v(id text, attempt int, code int, latency int, at timestamptz)
    where d.id = v.id and d.status = 'pending' and d.attempts = v.attempt - 1
    returning d.id`);
  return (result as { rows: { id: string }[] }).rows.map((r) => r.id);
}

/**
 * Move many deliveries' next attempt to later, unsent and not counted, each only while its
 * attempt `attempt` is still its next. Returns the ids moved.
 */
export async function postponeDeliveries(
  db: Db,
  items: readonly { deliveryId: string; attempt: number; until: Date }[],
): Promise<string[]> {
  if (items.length === 0) return [];
  const rows = JSON.stringify(
    items.map((i) => ({ id: i.deliveryId, attempt: i.attempt, until: i.until.toISOString() })),
  );
  const result: unknown = await db.execute(sql`
    update ${webhookDeliveries} d set next_attempt_at = v.until
    from jsonb_to_recordset(${rows}::jsonb) as v(id text, attempt int, until timestamptz)
    where d.id = v.id and d.status = 'pending' and d.attempts = v.attempt - 1
    returning d.id`);
  return (result as { rows: { id: string }[] }).rows.map((r) => r.id);
}

export async function updateDelivery(
  db: Db,
  id: string,
  changes: Partial<typeof webhookDeliveries.$inferInsert>,
): Promise<void> {
  await db.update(webhookDeliveries).set(changes).where(eq(webhookDeliveries.id, id));
}

export async function findDelivery(db: Db, portalId: number, id: string) {
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.portalId, portalId), eq(webhookDeliveries.id, id)));
  return row;
}

/** The portal's most recent deliveries, newest first, with their event type. */
export function recentDeliveries(db: Db, portalId: number, limit: number, endpointId?: string) {
  return db
    .select({ delivery: webhookDeliveries, type: webhookEvents.type })
    .from(webhookDeliveries)
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .where(
      endpointId === undefined
        ? eq(webhookDeliveries.portalId, portalId)
        : and(
            eq(webhookDeliveries.portalId, portalId),
            eq(webhookDeliveries.endpointId, endpointId),
          ),
    )
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit);
}

export async function creditLowThreshold(db: Db, portalId: number): Promise<number | null> {
  const [row] = await db
    .select({ threshold: webhookSettings.creditLowThresholdMinor })
    .from(webhookSettings)
    .where(eq(webhookSettings.portalId, portalId));
  return row?.threshold ?? null;
}

export async function setCreditLowThreshold(
  db: Db,
  portalId: number,
  threshold: number | null,
): Promise<void> {
  await db
    .insert(webhookSettings)
    .values({ portalId, creditLowThresholdMinor: threshold })
    .onConflictDoUpdate({
      target: webhookSettings.portalId,
      set: { creditLowThresholdMinor: sql`excluded.credit_low_threshold_minor` },
    });
}
