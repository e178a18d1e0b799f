/**
 * The 24-hour customer service windows, per contact and business phone number: recorded from
 * the provider's inbound messages, read by the free-text check of a send.
 *
 * @see https://developers.facebook.com/docs/whatsapp/pricing#customer-service-windows
 * @see docs/messaging.md "Sending"
 */
import { and, eq, sql } from 'drizzle-orm';
import { serviceWindows } from '../../db/schema/service-windows.ts';
import type { Db } from './messages-repository.ts';

/** The 24-hour customer service window, in ms. */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Record that the contact wrote to `phoneNumberId` at `at`; the time only moves forward (a late
 * or repeated webhook changes nothing).
 */
export async function recordServiceWindow(
  db: Db,
  row: { portalId: number; contactId: string; phoneNumberId: string; at: Date },
): Promise<void> {
  await db
    .insert(serviceWindows)
    .values({
      portalId: row.portalId,
      contactId: row.contactId,
      phoneNumberId: row.phoneNumberId,
      lastInboundAt: row.at,
    })
    .onConflictDoUpdate({
      target: [serviceWindows.contactId, serviceWindows.phoneNumberId],
      set: {
        lastInboundAt: sql`greatest(${serviceWindows.lastInboundAt}, excluded.last_inbound_at)`,
      },
    });
}

/** Whether the contact wrote to `phoneNumberId` within the 24 hours before `now`. */
export async function isWindowOpen(
  db: Db,
  q: { portalId: number; contactId: string; phoneNumberId: string; now: Date },
): Promise<boolean> {
  const [row] = await db
    .select({ at: serviceWindows.lastInboundAt })
    .from(serviceWindows)
    .where(
      and(
        eq(serviceWindows.portalId, q.portalId),
        eq(serviceWindows.contactId, q.contactId),
        eq(serviceWindows.phoneNumberId, q.phoneNumberId),
      ),
    );
  return row !== undefined && q.now.getTime() - row.at.getTime() <= SERVICE_WINDOW_MS;
}
