/**
 * A campaign's audience resolved once into its snapshot (`campaign_recipients`), in batches:
 * each batch is one `INSERT … SELECT` of at most `BATCH` candidates (contacts in id order, or a
 * slice of the listed ids), with the reason a candidate is ineligible computed in the same
 * statement — so no batch holds a long transaction and no recipient list is held in memory,
 * whatever the audience's size. Only the ids returned by each batch are read back (the next
 * batch starts after the last one).
 *
 * Skip reasons, first that applies: `erased` (a listed id of no contact), `opted_out`,
 * `marketing_stopped` (a marketing template to a person who stopped marketing from the sender
 * number), `invalid` (an authentication template to a person known only by their WhatsApp user
 * id), `missing_parameter` (a contact field without value or fallback); a listed id repeated is
 * counted as `duplicate`.
 *
 * @see docs/decisions/0063-campaigns.md
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import type { DraftParameter } from '../../db/schema/message-drafts.ts';
import {
  campaignRecipients,
  type CampaignAudience,
  type SkipReason,
} from '../../db/schema/campaigns.ts';

/** Candidates per statement. */
export const BATCH = 1000;

/** What a resolution counted. */
export interface Resolution {
  recipients: number;
  skipped: number;
  skippedBy: Partial<Record<SkipReason, number>>;
}

interface ResolveArgs {
  campaignId: string;
  portalId: number;
  audience: CampaignAudience;
  fromPhoneNumberId: string;
  category: string;
  parameters: readonly DraftParameter[];
}

const COLUMN: Record<string, string> = {
  firstName: 'first_name',
  lastName: 'last_name',
  email: 'email',
  phone: 'phone',
};

/** SQL true when contact `c` has no value for `field` (a blank text counts as none). */
function missing(field: string): SQL {
  if (field.startsWith('attributes.'))
    return sql`nullif(btrim(c.attributes ->> ${field.slice('attributes.'.length)}), '') is null`;
  return sql`nullif(btrim(c.${sql.identifier(COLUMN[field]!)}), '') is null`;
}

/** The reason expression over contact `c` (null: eligible). */
function reasonOf(args: ResolveArgs): SQL {
  const cases: SQL[] = [
    sql`when c.id is null then 'erased'`,
    sql`when c.consent_whatsapp = 'opted_out' then 'opted_out'`,
  ];
  if (args.category === 'MARKETING')
    cases.push(sql`when exists (select 1 from marketing_preferences mp
      where mp.portal_id = ${args.portalId} and mp.contact_id = c.id
        and mp.phone_number_id = ${args.fromPhoneNumberId} and mp.stopped) then 'marketing_stopped'`);
  if (args.category === 'AUTHENTICATION') cases.push(sql`when c.phone is null then 'invalid'`);
  const needed = args.parameters.flatMap((p) =>
    typeof p !== 'string' && p.fallback === undefined ? [missing(p.contact)] : [],
  );
  if (needed.length > 0)
    cases.push(sql`when ${sql.join(needed, sql` or `)} then 'missing_parameter'`);
  return sql`(case ${sql.join(cases, sql` `)} else null end)`;
}

/** One group of a batch: its reason (null: kept), how many, and the batch's last contact id. */
type Returned = { skip_reason: SkipReason | null; n: unknown; last: string | null };

/** The statement's answer: the inserted rows counted by reason, in SQL (no row comes back). */
const counted = (insert: SQL) => sql`with ins as (${insert} returning contact_id, skip_reason)
  select skip_reason, count(*) as n, (select max(contact_id) from ins) as last
  from ins group by skip_reason`;

/** @returns the rows the batch inserted. */
function tally(into: Resolution, result: unknown): { inserted: number; last: string | null } {
  const rows = (result as { rows: Returned[] }).rows;
  let inserted = 0;
  for (const r of rows) {
    const n = Number(r.n);
    inserted += n;
    if (r.skip_reason === null) into.recipients += n;
    else {
      into.skipped += n;
      into.skippedBy[r.skip_reason] = (into.skippedBy[r.skip_reason] ?? 0) + n;
    }
  }
  return { inserted, last: rows[0]?.last ?? null };
}

/** Delete a campaign's snapshot, a batch per statement. */
export async function clearSnapshot(db: Database, campaignId: string): Promise<void> {
  for (;;) {
    const result = await db.execute(sql`delete from ${campaignRecipients}
      where (campaign_id, seq) in (select campaign_id, seq from ${campaignRecipients}
        where campaign_id = ${campaignId} limit ${BATCH * 10}) returning seq`);
    if ((result as { rows: unknown[] }).rows.length === 0) return;
  }
}

/**
 * Resolve the audience into the snapshot (any earlier snapshot of the campaign is deleted
 * first), a batch per statement.
 *
 * @returns the counts: recipients kept, skipped, and skipped by reason.
 */
export async function resolveAudience(db: Database, args: ResolveArgs): Promise<Resolution> {
  await clearSnapshot(db, args.campaignId);
  const out: Resolution = { recipients: 0, skipped: 0, skippedBy: {} };
  const reason = reasonOf(args);
  const state = sql`case when r.reason is null then 'pending' else 'skipped' end`;
  let seq = 0;
  if ('contactIds' in args.audience) {
    const unique = [...new Set(args.audience.contactIds)];
    const duplicates = args.audience.contactIds.length - unique.length;
    if (duplicates > 0) {
      out.skipped += duplicates;
      out.skippedBy.duplicate = duplicates;
    }
    for (let i = 0; i < unique.length; i += BATCH) {
      const slice = unique.slice(i, i + BATCH);
      const result = await db.execute(
        counted(sql`insert into ${campaignRecipients}
          (campaign_id, seq, portal_id, contact_id, state, skip_reason)
        select ${args.campaignId}, ${seq} + r.n, ${args.portalId}, r.contact_id, ${state}, r.reason
        from (select l.n, c.id as contact_id, ${reason} as reason
          from jsonb_array_elements_text(${JSON.stringify(slice)}::jsonb) with ordinality as l(id, n)
          left join contacts c on c.portal_id = ${args.portalId} and c.id = l.id) r`),
      );
      tally(out, result);
      seq += slice.length;
    }
    return out;
  }
  const who =
    'tag' in args.audience
      ? sql`c.tags @> array[${args.audience.tag}]::text[]`
      : sql`c.consent_whatsapp = 'opted_in'`;
  let last = '';
  for (;;) {
    // The next batch starts after the greatest id of this one, as the database orders ids.
    const result = await db.execute(
      counted(sql`insert into ${campaignRecipients}
        (campaign_id, seq, portal_id, contact_id, state, skip_reason)
      select ${args.campaignId}, ${seq} + row_number() over (order by r.contact_id),
        ${args.portalId}, r.contact_id, ${state}, r.reason
      from (select c.id as contact_id, ${reason} as reason from contacts c
        where c.portal_id = ${args.portalId} and ${who} and c.id > ${last}
        order by c.id limit ${BATCH}) r`),
    );
    const batch = tally(out, result);
    if (batch.inserted === 0 || batch.last === null) return out;
    seq += batch.inserted;
    last = batch.last;
    if (batch.inserted < BATCH) return out;
  }
}

/**
 * How many candidates the audience holds now, before resolution (`audience of 0` is refused at
 * creation): a count, no row read.
 */
export async function countAudience(
  db: Database,
  portalId: number,
  audience: CampaignAudience,
): Promise<number> {
  const who =
    'contactIds' in audience
      ? sql`c.id in (select jsonb_array_elements_text(${JSON.stringify(audience.contactIds)}::jsonb))`
      : 'tag' in audience
        ? sql`c.tags @> array[${audience.tag}]::text[]`
        : sql`c.consent_whatsapp = 'opted_in'`;
  const result = await db.execute(
    sql`select count(*)::int as n from contacts c where c.portal_id = ${portalId} and ${who}`,
  );
  return Number((result as { rows: { n: unknown }[] }).rows[0]?.n ?? 0);
}
