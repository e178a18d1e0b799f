/**
 * The business portfolio's messaging limit: how many distinct people its numbers may send
 * business-initiated messages to (templates outside a customer service window) in a moving
 * 24-hour period. Messages to a person inside an open service window do not count, nor do more
 * messages to a person already counted. A portal's numbers share one portfolio, so the portal's
 * outbound messages are the count (docs/decisions/0058-messaging-limit.md).
 *
 * The count is read from the messages table: outbound templates of the last 24 hours, not
 * failed, whose person had not written to that business number in the 24 hours before it (the
 * window then was closed). The check runs in the send's transaction under an advisory lock per
 * portal, so two instances never both let the last place go.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits
 * @see docs/messaging.md "Messaging limits"
 */
import { sql } from 'drizzle-orm';
import { AppError } from '../../platform/errors.ts';
import type { Tx } from '../store/messages-repository.ts';
import { SERVICE_WINDOW_MS } from '../store/service-window.ts';

/** The advisory-lock class of the messaging-limit check (its second key is the portal id). */
const MESSAGING_LIMIT_LOCK = 0x6c696d74; // 'limt'

/** The moving period the limit counts over, in ms (24 hours, as long as a service window). */
export const MESSAGING_LIMIT_PERIOD_MS = 24 * 60 * 60 * 1000;

/** What one business-initiated send is checked with: its person and the portfolio's limit. */
export interface BusinessInitiated {
  /** The recipient as stored in `messages.wa_id` (E.164 or a BSUID). */
  to: string;
  /** The portfolio's limit: distinct people per moving 24 hours (`TIER_250` → 250). */
  limit: number;
}

/**
 * The portal's count of people reached by business-initiated messages in the 24 hours before
 * `now`: how many, whether `to` is one of them, and when the one counted longest ago leaves.
 */
async function countReached(
  tx: Tx,
  portalId: number,
  to: string,
  now: Date,
): Promise<{ count: number; counted: boolean; firstLeavesAt: Date | null }> {
  const since = new Date(now.getTime() - MESSAGING_LIMIT_PERIOD_MS).toISOString();
  const windowSql = sql.raw(`${SERVICE_WINDOW_MS} * interval '1 millisecond'`);
  const result = await tx.execute(sql`
    select count(*)::int as count,
           coalesce(bool_or(p.wa_id = ${to}), false) as counted,
           min(p.last_at) as first_last_at
    from (
      select m.wa_id, max(m.created_at) as last_at
      from messages m
      where m.portal_id = ${portalId}
        and m.direction = 'outbound'
        and m.type = 'template'
        and m.created_at > ${since}::timestamptz
        and m.status is distinct from 'failed'
        and not exists (
          select 1 from messages i
          where i.portal_id = m.portal_id
            and i.wa_id = m.wa_id
            and i.direction = 'inbound'
            and i.phone_number_id = m.phone_number_id
            and i.created_at <= m.created_at
            and i.created_at > m.created_at - ${windowSql}
        )
      group by m.wa_id
    ) p`);
  const row = (result as { rows: Record<string, unknown>[] }).rows[0] ?? {};
  const first = row.first_last_at;
  return {
    count: Number(row.count ?? 0),
    counted: row.counted === true,
    firstLeavesAt:
      first === null || first === undefined
        ? null
        : new Date(new Date(first as string | Date).getTime() + MESSAGING_LIMIT_PERIOD_MS),
  };
}

/**
 * Refuse a business-initiated send to a person not yet counted when the portal has reached its
 * portfolio's limit. Call inside the send's transaction, before its row is written: it takes
 * the portal's messaging-limit lock until the transaction ends, so the count it reads stays true
 * until the row commits.
 *
 * @param now the send's time
 * @throws AppError `messaging_limit_reached` (429) with `Retry-After`: whole seconds (at least 1)
 *   until the person counted longest ago leaves the 24 hours.
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits
 */
export async function assertWithinMessagingLimit(
  tx: Tx,
  portalId: number,
  send: BusinessInitiated,
  now: Date,
): Promise<void> {
  await tx.execute(
    sql`select pg_advisory_xact_lock(${MESSAGING_LIMIT_LOCK}::int, ${portalId}::int)`,
  );
  const reached = await countReached(tx, portalId, send.to, now);
  if (reached.counted || reached.count < send.limit) return;
  const waitMs = (reached.firstLeavesAt?.getTime() ?? now.getTime()) - now.getTime();
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  throw new AppError(
    'messaging_limit_reached',
    `The business portfolio's messaging limit (${send.limit} people in 24 hours outside a ` +
      'customer service window) is reached; this person can receive a template once someone ' +
      'leaves the 24 hours, or as soon as they write to the sender number.',
    { headers: { 'retry-after': String(retryAfter) } },
  );
}
