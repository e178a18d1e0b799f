/**
 * One endpoint's delivery history, newest first, a page at a time, filtered by status and event
 * type: everything kept, not only the latest (deliveries go with their event, after
 * `EVENTS_RETENTION_DAYS`).
 *
 * @see docs/webhooks.md "Delivery history"
 */
import { eq, inArray, type SQL } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { webhookDeliveries, webhookEvents } from '../db/schema/index.ts';
import { readKeysetPage } from '../db/keyset-page.ts';
import { keysetCursor } from '../api-kit/keyset-cursor.ts';
import { AppError } from '../platform/errors.ts';
import * as repo from './webhooks-repository.ts';

/** A delivery's states. */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The history's cursor: a position in the newest-first order of deliveries. */
export const deliveryCursor = keysetCursor(/^dlv_[0-9A-Za-z]{1,60}$/);

/** What a page of the history asks for. */
export interface HistoryQuery {
  /** 1–100. */
  limit: number;
  cursor?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** Only deliveries of events of these types. */
  types?: readonly string[] | undefined;
}

/**
 * A page of `endpointId`'s deliveries (null: of every endpoint of the portal, as the webhooks
 * page shows them), with their event type.
 *
 * @returns the rows and whether more follow, for `deliveryCursor.page`.
 * @throws AppError `not_found` for an unknown endpoint, another portal's alike;
 *   `invalid_request` for a cursor this service did not produce.
 */
export async function deliveryHistory(
  db: Database,
  portalId: number,
  endpointId: string | null,
  query: HistoryQuery,
) {
  if (endpointId !== null && !(await repo.findEndpoint(db, portalId, endpointId))) {
    throw new AppError('not_found', 'No webhook endpoint with this id.');
  }
  const conditions: SQL[] = [
    eq(webhookDeliveries.portalId, portalId),
    ...(endpointId === null ? [] : [eq(webhookDeliveries.endpointId, endpointId)]),
    ...(query.status ? [eq(webhookDeliveries.status, query.status)] : []),
    ...(query.types && query.types.length > 0
      ? [inArray(webhookEvents.type, [...query.types])]
      : []),
  ];
  return readKeysetPage(
    webhookDeliveries,
    conditions,
    { limit: query.limit, after: deliveryCursor.after(query.cursor) },
    async (where, orderBy, limit) => {
      const rows = await db
        .select({ delivery: webhookDeliveries, type: webhookEvents.type })
        .from(webhookDeliveries)
        .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
        .where(where)
        .orderBy(...orderBy)
        .limit(limit);
      return rows.map((r) => ({ ...r, createdAt: r.delivery.createdAt, id: r.delivery.id }));
    },
  );
}
