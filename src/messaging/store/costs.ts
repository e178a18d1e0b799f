/**
 * The cost report: per UTC day of creation, business number and category, what a portal's sent
 * messages cost — Portico's estimate (the price reserved at send time, from its table) beside
 * what it charged once the provider said how it bills them (docs/decisions/0056-billed-pricing.md).
 * The category is the one the provider billed (its status webhooks' `pricing.category`) when a
 * status carried it, else the estimated one (the template's category, or `service` for a
 * free-form message). Read from `messages` over the period in one grouped statement (the
 * `(portal_id, direction, created_at)` index); a message counts once it was sent (`sent_at`),
 * whatever came after.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/pricing
 * @see docs/messaging.md "Credit"
 */
import { and, eq, gte, isNotNull, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { messages } from '../../db/schema/messages.ts';

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/** One group of the report. Amounts in minor units of the portal's currency. */
export interface CostRow {
  /** UTC day the messages were created, `YYYY-MM-DD`. */
  date: string;
  phoneNumberId: string;
  /** The billed category, else the estimated one (lower case, e.g. `utility`, `service`). */
  category: string;
  /** Messages sent. */
  messages: number;
  /** Of them, those a status carried the provider's pricing for. */
  billed: number;
  /** Of those, the ones the provider bills (`billable: true`). */
  billable: number;
  /** Sum of the prices reserved at send time (Portico's estimate). */
  estimatedMinor: number;
  /** Sum of what was charged (the billed category's price; the estimate when not billed yet). */
  chargedMinor: number;
}

/**
 * The report's rows for `[since, until)`, by date, then number, then category.
 *
 * @throws the database's error.
 */
export async function readCosts(
  db: Database | Tx,
  portalId: number,
  range: { since: Date; until: Date },
): Promise<CostRow[]> {
  const day = sql`to_char(${messages.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`;
  const category = sql`coalesce(${messages.pricingCategory},
    lower(${messages.templateCategory}), 'service')`;
  const rows = await db
    .select({
      date: sql<string>`${day}`,
      phoneNumberId: messages.phoneNumberId,
      category: sql<string>`${category}`,
      messages: sql<number>`count(*)::int`,
      billed: sql<number>`(count(*) filter (where ${messages.pricingModel} is not null))::int`,
      billable: sql<number>`(count(*) filter (where ${messages.pricingBillable}))::int`,
      estimatedMinor: sql<number>`coalesce(sum(${messages.priceMinor}), 0)::bigint`,
      chargedMinor: sql<number>`coalesce(sum(coalesce(${messages.chargedMinor},
        ${messages.priceMinor})), 0)::bigint`,
    })
    .from(messages)
    .where(
      and(
        eq(messages.portalId, portalId),
        eq(messages.direction, 'outbound'),
        gte(messages.createdAt, range.since),
        lt(messages.createdAt, range.until),
        isNotNull(messages.sentAt),
      ),
    )
    .groupBy(day, messages.phoneNumberId, category)
    .orderBy(day, messages.phoneNumberId, category);
  return rows.map((r) => ({
    date: r.date,
    phoneNumberId: r.phoneNumberId,
    category: r.category,
    messages: Number(r.messages),
    billed: Number(r.billed),
    billable: Number(r.billable),
    estimatedMinor: Number(r.estimatedMinor),
    chargedMinor: Number(r.chargedMinor),
  }));
}
