import { integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { contacts } from './contacts.ts';
import { portals } from './portals.ts';

/**
 * The WhatsApp customer service windows: when a contact last wrote to one business phone
 * number of the portal. The provider opens the 24-hour window between one customer and one
 * business phone number, so free text from another number of the same account is outside it.
 * Invariants: `last_inbound_at` only moves forward; every read filters by `portal_id`; a row
 * goes with its contact (erasure).
 *
 * @see https://developers.facebook.com/docs/whatsapp/pricing#customer-service-windows
 */
export const serviceWindows = pgTable(
  'service_windows',
  {
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    contactId: text('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    /** The provider's phone number id the person wrote to. */
    phoneNumberId: text('phone_number_id').notNull(),
    lastInboundAt: timestamp('last_inbound_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.contactId, t.phoneNumberId] })],
);
