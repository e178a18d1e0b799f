/**
 * What a campaign came to, read from its snapshot joined to the messages it queued (each
 * recipient's `message_id`): the counts of `GET …/campaigns/{id}`, the failures by code, and
 * the per-recipient outcomes of the report, a keyset page on `seq` at a time. Reads only.
 *
 * @see docs/decisions/0063-campaigns.md
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import type { CampaignCounts, ReportRecipient } from './campaigns-schemas.ts';

/** Days after its message within which a recipient's inbound message counts as a reply. */
export const REPLY_WINDOW_DAYS = 7;

type Rows<T> = { rows: T[] };
const rowsOf = <T>(result: unknown) => (result as Rows<T>).rows;

/** The live counts beside the snapshot's (recipients, skipped), and the money spent. */
export async function readCounts(
  db: Database,
  campaign: {
    id: string;
    portalId: number;
    recipients: number;
    skipped: number;
    startedAt: Date | null;
  },
): Promise<{ counts: CampaignCounts; spent: number }> {
  const started = campaign.startedAt?.toISOString() ?? null;
  const [row] = rowsOf<Record<string, unknown>>(
    await db.execute(sql`
      select
        count(*) filter (where r.state = 'sending' or (r.state = 'queued' and m.status = 'queued')) as queued,
        count(m.sent_at) as sent,
        count(m.delivered_at) as delivered,
        count(m.read_at) as read,
        count(*) filter (where r.state = 'refused' or m.status = 'failed') as failed,
        count(*) filter (where m.id is not null and exists (select 1 from messages i
          where i.portal_id = ${campaign.portalId} and i.direction = 'inbound'
            and i.contact_id = r.contact_id and i.created_at > m.created_at
            and i.created_at < m.created_at + make_interval(days => ${REPLY_WINDOW_DAYS}))) as replied,
        count(*) filter (where ${started}::timestamptz is not null
          and ct.consent_whatsapp = 'opted_out'
          and ct.consent_updated_at >= ${started}::timestamptz) as opted_out,
        coalesce(sum(m.price_minor) filter (where m.sent_at is not null), 0) as spent
      from campaign_recipients r
      left join messages m on m.id = r.message_id and m.portal_id = ${campaign.portalId}
      left join contacts ct on ct.id = r.contact_id and ct.portal_id = ${campaign.portalId}
      where r.campaign_id = ${campaign.id} and r.state <> 'skipped'`),
  );
  const n = (k: string) => Number(row?.[k] ?? 0);
  return {
    counts: {
      recipients: campaign.recipients,
      skipped: campaign.skipped,
      queued: n('queued'),
      sent: n('sent'),
      delivered: n('delivered'),
      read: n('read'),
      failed: n('failed'),
      replied: n('replied'),
      optedOut: n('opted_out'),
    },
    spent: n('spent'),
  };
}

/** Failures (provider error codes) and refusals (the send path's codes) by code, most first. */
export async function failuresByCode(
  db: Database,
  campaign: { id: string; portalId: number },
): Promise<{ code: string; count: number }[]> {
  return rowsOf<{ code: string; n: unknown }>(
    await db.execute(sql`
      select coalesce(r.error_code, m.error_code, 'unknown') as code, count(*) as n
      from campaign_recipients r
      left join messages m on m.id = r.message_id and m.portal_id = ${campaign.portalId}
      where r.campaign_id = ${campaign.id} and (r.state = 'refused' or m.status = 'failed')
      group by 1 order by 2 desc, 1`),
  ).map((r) => ({ code: r.code, count: Number(r.n) }));
}

/**
 * A page of per-recipient outcomes in snapshot order, after `after` (a `seq`).
 *
 * @param cancelled whether the campaign was cancelled (its pending recipients read `cancelled`).
 */
export async function reportPage(
  db: Database,
  campaign: { id: string; portalId: number },
  options: { after: number; limit: number; cancelled: boolean },
): Promise<{ recipients: ReportRecipient[]; nextAfter: number | null }> {
  const rows = rowsOf<{
    seq: number;
    contact_id: string | null;
    outcome: string;
    reason: string | null;
    message_id: string | null;
  }>(
    await db.execute(sql`
      select r.seq, r.contact_id, r.message_id,
        case when r.state = 'skipped' then 'skipped'
          when r.state = 'refused' then 'refused'
          when r.state in ('pending', 'sending') then
            case when ${options.cancelled} then 'cancelled' else 'pending' end
          else coalesce(m.status, 'queued') end as outcome,
        coalesce(r.skip_reason, r.error_code, m.error_code) as reason
      from campaign_recipients r
      left join messages m on m.id = r.message_id and m.portal_id = ${campaign.portalId}
      where r.campaign_id = ${campaign.id} and r.seq > ${options.after}
      order by r.seq limit ${options.limit + 1}`),
  );
  const page = rows.slice(0, options.limit);
  return {
    recipients: page.map((r) => ({
      seq: Number(r.seq),
      contactId: r.contact_id,
      outcome: r.outcome,
      reason: r.reason,
      messageId: r.message_id,
    })),
    nextAfter: rows.length > options.limit ? Number(page.at(-1)!.seq) : null,
  };
}
