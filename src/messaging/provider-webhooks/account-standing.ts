/**
 * What Portico keeps of the provider's account-standing signals: the signals themselves
 * (`account_signals`: alerts, restrictions, violations, bans, capability and display-name
 * changes) for the banner on /settings, and the category the provider moved a template to
 * (`template_categories`), which prices a send of it from the day it applies.
 *
 * Invariants: every read and write names the portal; a category change applies to sends made on
 * or after its `effective_at` (a send before it is priced at the listing's category); the banner
 * shows a signal for {@link BANNER_DAYS} days, or until its expiration when it has one.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/template_category_update
 * @see docs/messaging.md "Account signals"
 */
import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { accountSignals, templateCategories } from '../../db/schema/account-signals.ts';
import type { TEMPLATE_CATEGORIES } from '../../db/schema/messages.ts';
import type { Db, Tx } from '../store/messages-repository.ts';

type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

/** How long a signal without an expiration stays on the banner, in days. */
const BANNER_DAYS = 30;
/** How many signals the banner shows, newest first. */
const BANNER_MAX = 5;

/** A signal as the banner shows it. */
export interface StandingSignal {
  wabaId: string;
  field: string;
  event: string;
  severity: 'critical' | 'warning' | 'info';
  summary: string;
  occurredAt: Date;
  expiresAt: Date | null;
}

/** Store one signal in `tx`. */
export async function recordStandingSignal(
  tx: Tx,
  portalId: number,
  s: Omit<StandingSignal, 'occurredAt'> & { details: Record<string, unknown> },
): Promise<void> {
  await tx.insert(accountSignals).values({ portalId, ...s });
}

/** The signals in force for the banner, newest first (at most {@link BANNER_MAX}). */
export async function signalsInForce(
  db: Database,
  portalId: number,
  now = new Date(),
): Promise<StandingSignal[]> {
  const since = new Date(now.getTime() - BANNER_DAYS * 86_400_000);
  return db
    .select({
      wabaId: accountSignals.wabaId,
      field: accountSignals.field,
      event: accountSignals.event,
      severity: accountSignals.severity,
      summary: accountSignals.summary,
      occurredAt: accountSignals.occurredAt,
      expiresAt: accountSignals.expiresAt,
    })
    .from(accountSignals)
    .where(
      and(
        eq(accountSignals.portalId, portalId),
        gt(accountSignals.occurredAt, since),
        or(isNull(accountSignals.expiresAt), gt(accountSignals.expiresAt, now)),
      ),
    )
    .orderBy(desc(accountSignals.occurredAt), desc(accountSignals.id))
    .limit(BANNER_MAX);
}

/** Keep a template's new category and when it applies (the newest change wins). */
export async function recordTemplateCategory(
  tx: Tx,
  portalId: number,
  c: {
    templateId: string;
    wabaId: string;
    category: string;
    previousCategory: string | null;
    effectiveAt: Date;
  },
): Promise<void> {
  await tx
    .insert(templateCategories)
    .values({ portalId, ...c })
    .onConflictDoUpdate({
      target: [templateCategories.portalId, templateCategories.templateId],
      set: {
        category: sql`excluded.category`,
        previousCategory: sql`excluded.previous_category`,
        effectiveAt: sql`excluded.effective_at`,
        updatedAt: sql`now()`,
      },
    });
}

/**
 * The category a send of the template at `now` is priced at: the provider's change once it
 * applies, else the listing's `listed`.
 */
export async function categoryAt(
  db: Db,
  portalId: number,
  template: { id: string; category: TemplateCategory },
  now: Date,
): Promise<TemplateCategory> {
  const [row] = await db
    .select({ category: templateCategories.category, effectiveAt: templateCategories.effectiveAt })
    .from(templateCategories)
    .where(
      and(
        eq(templateCategories.portalId, portalId),
        eq(templateCategories.templateId, template.id),
      ),
    );
  if (!row || row.effectiveAt > now) return template.category;
  return row.category as TemplateCategory;
}
