/**
 * A person's own stop (or resume) of marketing messages from one business number, as the
 * provider's `user_preferences` webhook reports it: kept per contact and phone number id
 * (`marketing_preferences`), recorded in the consent history (scope `marketing`, source
 * `provider`), and read by a send's checks (a marketing template to a person who stopped is
 * refused, 422 `marketing_stopped`). A phone the portal does not know becomes a contact (consent
 * unknown, source `provider`), as an inbound message's sender does. A change older than the one
 * kept is ignored (webhooks may arrive out of order).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/user_preferences
 * @see docs/messaging.md "Account signals"
 */
import { and, eq, sql } from 'drizzle-orm';
import { marketingPreferences } from '../db/schema/account-signals.ts';
import { contacts } from '../db/schema/contacts.ts';
import { newContactId } from './contact-id.ts';
import { recordConsentChanges } from './consent-history.ts';
import type { Db, Tx } from './contacts-repository.ts';

/** One preference change to record. */
export interface MarketingPreferenceChange {
  portalId: number;
  /** The person, E.164. */
  phone: string;
  phoneNumberId: string;
  stopped: boolean;
  at: Date;
}

/**
 * Record a change in `tx`.
 *
 * @returns the contact and whether the preference changed (false for a repeat or an older one).
 */
export async function recordMarketingPreference(
  tx: Tx,
  c: MarketingPreferenceChange,
): Promise<{ contactId: string; changed: boolean }> {
  await tx
    .insert(contacts)
    .values({ id: newContactId(), portalId: c.portalId, phone: c.phone, consentSource: 'provider' })
    .onConflictDoNothing();
  const [contact] = await tx
    .select({ id: contacts.id })
    .from(contacts)
    .where(and(eq(contacts.portalId, c.portalId), eq(contacts.phone, c.phone)));
  const contactId = contact!.id;
  const [before] = await tx
    .select()
    .from(marketingPreferences)
    .where(
      and(
        eq(marketingPreferences.portalId, c.portalId),
        eq(marketingPreferences.contactId, contactId),
        eq(marketingPreferences.phoneNumberId, c.phoneNumberId),
      ),
    )
    .for('update');
  if (before && (before.changedAt >= c.at || before.stopped === c.stopped)) {
    if (before.changedAt < c.at)
      await tx
        .update(marketingPreferences)
        .set({ changedAt: c.at })
        .where(
          and(
            eq(marketingPreferences.portalId, c.portalId),
            eq(marketingPreferences.contactId, contactId),
            eq(marketingPreferences.phoneNumberId, c.phoneNumberId),
          ),
        );
    return { contactId, changed: false };
  }
  await tx
    .insert(marketingPreferences)
    .values({
      portalId: c.portalId,
      contactId,
      phoneNumberId: c.phoneNumberId,
      stopped: c.stopped,
      changedAt: c.at,
    })
    .onConflictDoUpdate({
      target: [
        marketingPreferences.portalId,
        marketingPreferences.contactId,
        marketingPreferences.phoneNumberId,
      ],
      set: { stopped: sql`excluded.stopped`, changedAt: sql`excluded.changed_at` },
    });
  await recordConsentChanges(tx, [
    {
      portalId: c.portalId,
      contactId,
      from: before ? (before.stopped ? 'opted_out' : 'opted_in') : 'unknown',
      to: c.stopped ? 'opted_out' : 'opted_in',
      source: 'provider',
      scope: 'marketing',
      phoneNumberId: c.phoneNumberId,
      at: c.at,
    },
  ]);
  return { contactId, changed: true };
}

/** Whether the contact stopped marketing messages from this business number. */
export async function stoppedMarketing(
  db: Db,
  portalId: number,
  contactId: string,
  phoneNumberId: string,
): Promise<boolean> {
  const [row] = await db
    .select({ stopped: marketingPreferences.stopped })
    .from(marketingPreferences)
    .where(
      and(
        eq(marketingPreferences.portalId, portalId),
        eq(marketingPreferences.contactId, contactId),
        eq(marketingPreferences.phoneNumberId, phoneNumberId),
      ),
    );
  return row?.stopped ?? false;
}
