/**
 * The 24-hour customer service window, in one place: its rule, its one stored truth and its
 * reads. The provider opens a window between one person and one business phone number when the
 * person writes, for 24 hours from their newest message; inside it any message may be sent,
 * outside it only an approved template. The stored truth is `conversations.last_inbound_at`, one
 * per contact and business number (the conversation's key), moved forward only by the inbound
 * statement; decision 0049 says why there is no other.
 *
 * Every question about a window goes through {@link serviceWindowAt} (in TypeScript) or its SQL
 * twin {@link windowOpenSql} / {@link windowClosingSql} (in a query): a window is open while
 * `now < last_inbound_at + 24 h`, and closes at that instant. Sends, the API's conversation
 * view, the inbox and the `conversation.window_closing` sweep all read it so.
 *
 * @see https://developers.facebook.com/docs/whatsapp/pricing#customer-service-windows
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/guides/send-messages#customer-service-windows
 * @see docs/messaging.md "Conversations"
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { conversations } from '../../db/schema/conversations.ts';
import type { Db } from './messages-repository.ts';

/** The length of a customer service window, in ms (24 hours). */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A service window at one instant. */
interface ServiceWindow {
  /** Whether free-form messages may be sent now. */
  open: boolean;
  /** When the open window closes; null when it is closed (or the person never wrote). */
  expiresAt: Date | null;
}

/**
 * The window that the person's newest message (`lastInboundAt`) opened, as it is at `now`:
 * open while `now` is before `lastInboundAt` + {@link SERVICE_WINDOW_MS}.
 */
export function serviceWindowAt(lastInboundAt: Date | null, now: Date): ServiceWindow {
  if (lastInboundAt === null) return { open: false, expiresAt: null };
  const closesAt = lastInboundAt.getTime() + SERVICE_WINDOW_MS;
  return now.getTime() < closesAt
    ? { open: true, expiresAt: new Date(closesAt) }
    : { open: false, expiresAt: null };
}

/** The SQL form of "open at `now`" over a `last_inbound_at` column: `column + 24 h > now`. */
export function windowOpenSql(column: AnyPgColumn, now: Date): SQL {
  const since = new Date(now.getTime() - SERVICE_WINDOW_MS).toISOString();
  return sql`${column} > ${since}::timestamptz`;
}

/**
 * The SQL form of "open at `now` and closing within `leadMs`": the window ends in
 * `(now, now + leadMs]`.
 */
export function windowClosingSql(column: AnyPgColumn, now: Date, leadMs: number): SQL {
  const until = new Date(now.getTime() - SERVICE_WINDOW_MS + leadMs).toISOString();
  return and(windowOpenSql(column, now), sql`${column} <= ${until}::timestamptz`)!;
}

/**
 * The window between a contact and one business phone number (the provider's phone number id)
 * at `now`, read from the conversation; closed when they have no conversation.
 */
export async function findServiceWindow(
  db: Db,
  q: { portalId: number; contactId: string; phoneNumberId: string; now: Date },
): Promise<ServiceWindow> {
  const [row] = await db
    .select({ lastInboundAt: conversations.lastInboundAt })
    .from(conversations)
    .where(
      and(
        eq(conversations.portalId, q.portalId),
        eq(conversations.contactId, q.contactId),
        eq(conversations.phoneNumberId, q.phoneNumberId),
      ),
    );
  return serviceWindowAt(row?.lastInboundAt ?? null, q.now);
}
