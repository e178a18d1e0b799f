import { sql } from 'drizzle-orm';
import {
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';

/** WhatsApp consent states of a contact; new contacts are `unknown`. */
export const CONSENT_STATES = ['opted_in', 'opted_out', 'unknown'] as const;

/**
 * How a consent state was last set: the API, an import (API or CSV), a page, the provider, or a
 * keyword the person sent (docs/messaging.md "Opt-out keywords").
 */
export const CONSENT_SOURCES = ['api', 'import', 'web', 'provider', 'keyword'] as const;

/**
 * What a consent change covers: every WhatsApp message (`consent_whatsapp`), or marketing
 * templates only (a person's own stop or resume in WhatsApp, per business number).
 */
export const CONSENT_SCOPES = ['whatsapp', 'marketing'] as const;

/**
 * The people a portal messages (CRM contacts). Invariants: every read filters by `portal_id`
 * in the query; `phone` is E.164 (normalised by libphonenumber-js before any write) and unique
 * within a portal; a contact has a phone, a business-scoped user id (`wa_user_id`, the
 * provider's BSUID, unique within a portal), or both: a person who uses a WhatsApp username may
 * write without a phone (docs/decisions/0055-business-scoped-user-ids.md); the BSUID, parent
 * BSUID, username and profile name are contact data like the phone (never logged); `attributes` is a flat object of string/number/boolean values. Messaging
 * reads `consent_whatsapp` before a send and `last_inbound_at` for the 24-hour service window,
 * and the provider's webhooks update both (source `provider`). Times have millisecond precision
 * so the keyset cursor, which carries `created_at` as a JavaScript date, compares exactly.
 *
 * Indexes (measured: bench/contacts.ts): the unique phone serves upserts and the phone-digits prefix search; the page index
 * serves the default list; the consent and `updated_at` ones their filters; `tags` has a GIN
 * index for `tags @> {tag}`; the lower-case name and email indexes (`text_pattern_ops`) serve
 * the `q` prefix search.
 */
export const contacts = pgTable(
  'contacts',
  {
    /** Public id: `ctc_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    /** E.164, e.g. `+16505551234`; null for a person known only by their BSUID. */
    phone: text('phone'),
    /**
     * The provider's business-scoped user id (BSUID, e.g. `US.13491208655302741918`), as given.
     * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
     */
    waUserId: text('wa_user_id'),
    /** The parent BSUID the provider sends for a managed business (`US.ENT.…`), when given. */
    parentWaUserId: text('parent_wa_user_id'),
    /** The person's WhatsApp username (`contacts[].profile.username`), when given. */
    username: text('username'),
    /** The person's WhatsApp profile name (`contacts[].profile.name`), as last received. */
    profileName: text('profile_name'),
    email: text('email'),
    firstName: text('first_name'),
    lastName: text('last_name'),
    attributes: jsonb('attributes')
      .$type<Record<string, string | number | boolean>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    tags: text('tags')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    consentWhatsapp: text('consent_whatsapp', { enum: CONSENT_STATES })
      .notNull()
      .default('unknown'),
    consentUpdatedAt: timestamp('consent_updated_at', { withTimezone: true, precision: 3 })
      .notNull()
      .defaultNow(),
    consentSource: text('consent_source', { enum: CONSENT_SOURCES }).notNull().default('api'),
    /** When the contact last wrote to the portal (opens the 24-hour service window); null until. */
    lastInboundAt: timestamp('last_inbound_at', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('contacts_portal_phone').on(t.portalId, t.phone.op('text_pattern_ops')),
    uniqueIndex('contacts_portal_wa_user_id').on(t.portalId, t.waUserId),
    check('contacts_phone_or_wa_user_id', sql`${t.phone} is not null or ${t.waUserId} is not null`),
    // Ascending on purpose: scanned backwards, they serve `ORDER BY created_at DESC, id DESC`
    // (PostgreSQL's DESC is NULLS FIRST; an index built `DESC NULLS LAST` would not match it).
    index('contacts_portal_page').on(t.portalId, t.createdAt, t.id),
    index('contacts_portal_consent_page').on(t.portalId, t.consentWhatsapp, t.createdAt, t.id),
    index('contacts_portal_updated').on(t.portalId, t.updatedAt),
    index('contacts_tags').using('gin', t.tags),
    index('contacts_portal_first_name').on(t.portalId, sql`lower(${t.firstName}) text_pattern_ops`),
    index('contacts_portal_last_name').on(t.portalId, sql`lower(${t.lastName}) text_pattern_ops`),
    index('contacts_portal_email').on(t.portalId, sql`lower(${t.email}) text_pattern_ops`),
  ],
);
