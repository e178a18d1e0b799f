import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { contacts } from './contacts.ts';
import { portals } from './portals.ts';

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/** How serious an account signal is, as the settings banner shows it. */
export const SIGNAL_SEVERITIES = ['critical', 'warning', 'info'] as const;

/**
 * What the provider told a portal's business about its standing (`account_alerts`, restrictions,
 * violations and bans of `account_update`, `business_capability_update`,
 * `phone_number_name_update`), newest first on /settings while it is in force. `summary` holds
 * Portico's own words and the provider's codes (never a person's data); `details` the codes and
 * limits the provider sent, as the tenant event carries them. Every read filters by `portal_id`.
 *
 * @see docs/messaging.md "Account signals"
 */
export const accountSignals = pgTable(
  'account_signals',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    wabaId: text('waba_id').notNull(),
    /** The webhook field it came in (`account_alerts`, `account_update`, …). */
    field: text('field').notNull(),
    /** The provider's word for it (`ACCOUNT_RESTRICTION`, an alert type, a decision, …). */
    event: text('event').notNull(),
    severity: text('severity', { enum: SIGNAL_SEVERITIES }).notNull(),
    summary: text('summary').notNull(),
    details: jsonb('details')
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    occurredAt: at('occurred_at').notNull().defaultNow(),
    /** When it stops applying (a restriction's expiration); null: until a newer signal. */
    expiresAt: at('expires_at'),
  },
  (t) => [index('account_signals_portal').on(t.portalId, t.occurredAt)],
);

/**
 * The category the provider moved a template to (`template_category_update`), and from when:
 * a send of the template on or after `effective_at` is priced at `category`, before it at the
 * listing's. One row per portal and template id (the newest change wins).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/template_category_update
 */
export const templateCategories = pgTable(
  'template_categories',
  {
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    templateId: text('template_id').notNull(),
    wabaId: text('waba_id').notNull(),
    /** `MARKETING`, `UTILITY` or `AUTHENTICATION`. */
    category: text('category').notNull(),
    previousCategory: text('previous_category'),
    effectiveAt: at('effective_at').notNull(),
    updatedAt: at('updated_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.portalId, t.templateId] })],
);

/**
 * A person's own stop of marketing messages from one business number (`user_preferences`):
 * marketing templates from that number to them are refused while `stopped`. The change itself is
 * in the consent history (`consent_changes`, scope `marketing`).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/user_preferences
 */
export const marketingPreferences = pgTable(
  'marketing_preferences',
  {
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    contactId: text('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    phoneNumberId: text('phone_number_id').notNull(),
    stopped: boolean('stopped').notNull(),
    changedAt: at('changed_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.portalId, t.contactId, t.phoneNumberId] })],
);
