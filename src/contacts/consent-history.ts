/**
 * The history of a contact's WhatsApp consent (`consent_changes`): every change of
 * `consent_whatsapp` (scope `whatsapp`), and the person's own stops and resumes of marketing
 * messages from a business number (scope `marketing`, marketing-preferences.ts), whatever wrote it (the API, an import, a page, the provider, a keyword the
 * person sent), recorded in the transaction of the change with the state before and after, the
 * source and, for a keyword, the inbound message. A contact created with a consent other than
 * `unknown` records the change from `unknown`. Read newest first on `GET /crm/contacts/{id}`
 * (`consentHistory`, the newest {@link CONSENT_HISTORY_MAX}).
 *
 * @see docs/messaging.md "Opt-out keywords"
 * @see docs/decisions/0027-conversations.md
 */
import { and, desc, eq } from 'drizzle-orm';
import { consentChanges } from '../db/schema/conversations.ts';
import type { ConsentChange as ApiConsentChange } from './contact-schemas.ts';
import type { ContactRow, Db } from './contacts-repository.ts';

type ConsentState = ContactRow['consentWhatsapp'];

/** How many changes `GET /crm/contacts/{id}` shows, newest first. */
export const CONSENT_HISTORY_MAX = 20;

export type ConsentChangeRow = typeof consentChanges.$inferSelect;

/** One change to record. */
export interface ConsentChange {
  portalId: number;
  contactId: string;
  from: ConsentState;
  to: ConsentState;
  source: ConsentChangeRow['source'];
  /** The inbound message (`msg_…`) whose keyword made the change. */
  messageId?: string | null | undefined;
  /** `marketing`: the person's stop or resume of marketing from `phoneNumberId`. */
  scope?: ConsentChangeRow['scope'] | undefined;
  phoneNumberId?: string | undefined;
  /** When; by default the transaction's time. */
  at?: Date | undefined;
}

/** Record the changes that are changes (`from` ≠ `to`); the others are skipped. */
export async function recordConsentChanges(
  tx: Db,
  changes: readonly ConsentChange[],
): Promise<void> {
  const rows = changes
    .filter((c) => c.from !== c.to)
    .map((c) => ({
      portalId: c.portalId,
      contactId: c.contactId,
      fromState: c.from,
      toState: c.to,
      source: c.source,
      messageId: c.messageId ?? null,
      scope: c.scope ?? 'whatsapp',
      phoneNumberId: c.phoneNumberId ?? null,
      ...(c.at && { occurredAt: c.at }),
    }));
  if (rows.length > 0) await tx.insert(consentChanges).values(rows);
}

/** The newest `limit` changes of one contact of the portal, newest first. */
export async function readConsentHistory(
  db: Db,
  portalId: number,
  contactId: string,
  limit = CONSENT_HISTORY_MAX,
): Promise<ConsentChangeRow[]> {
  return db
    .select()
    .from(consentChanges)
    .where(and(eq(consentChanges.portalId, portalId), eq(consentChanges.contactId, contactId)))
    .orderBy(desc(consentChanges.occurredAt), desc(consentChanges.id))
    .limit(limit);
}

/** A history row as the API shows it. */
export function toConsentChange(row: ConsentChangeRow): ApiConsentChange {
  return {
    from: row.fromState,
    to: row.toState,
    source: row.source,
    scope: row.scope,
    phoneNumberId: row.phoneNumberId,
    messageId: row.messageId,
    at: row.occurredAt.toISOString(),
  };
}
