import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { SealedValue } from '../../platform/keyring.ts';
import { portals } from './portals.ts';

/**
 * Where each business phone number of a portal's connection stands in the onboarding that
 * follows a grant: its WABA's webhook subscription for Portico's app, its registration for the
 * Cloud API, the last failure and when the next attempt may be made. One row per portal and
 * phone number id.
 *
 * Invariants: the registration PIN (the number's two-step verification PIN, six digits) is held
 * only sealed with the keyring (purpose `registration-pin`, subject the row id; listed in
 * db/sealed-columns.ts so `keys rotate` re-seals it), never in clear; `last_error` holds
 * Portico's own words, never the provider's message; every read filters by `portal_id`.
 *
 * @see docs/partner-connection.md "Onboarding"
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/embedded-signup/onboarding-customers-as-a-tech-provider
 */
export const numberOnboarding = pgTable(
  'number_onboarding',
  {
    /** `onb_` and random characters: the sealed PIN's subject. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    wabaId: text('waba_id').notNull(),
    phoneNumberId: text('phone_number_id').notNull(),
    /** The registration PIN, sealed (`SealedValue`). */
    pin: jsonb('pin').$type<SealedValue>().notNull(),
    /** Whether Portico's app was subscribed to the WABA's webhooks (and the provider says so). */
    webhooksSubscribed: boolean('webhooks_subscribed').notNull().default(false),
    registered: boolean('registered').notNull().default(false),
    /** Why the last step failed, in Portico's words; null after a success. */
    lastError: text('last_error'),
    /** Not before this may registration be tried again (the provider's limit); null: any time. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('number_onboarding_portal_number').on(t.portalId, t.phoneNumberId),
    index('number_onboarding_portal_waba').on(t.portalId, t.wabaId),
  ],
);
