/**
 * What follows a change of a contact's WhatsApp consent, in the transaction that records it:
 * the change joins the consent history (consent-history.ts), and on a change to `opted_out`
 * the steps other features add (given at composition in services.ts: the webhooks'
 * `contact.opted_out`) run, only when the consent changes (not when it already was).
 * `setConsent` is the one write of a consent alone (a keyword the person sent).
 *
 * @see docs/decisions/0017-outbound-webhooks.md
 * @see docs/messaging.md "Opt-out keywords"
 */
import { and, eq, sql } from 'drizzle-orm';
import { contacts, type CONSENT_STATES } from '../db/schema/contacts.ts';
import { recordConsentChanges } from './consent-history.ts';
import type { ContactRow, Tx } from './contacts-repository.ts';

type ConsentState = (typeof CONSENT_STATES)[number];

export type OptedOutStep = (
  tx: Tx,
  optOut: { portalId: number; contactId: string; source: string; optedOutAt: Date },
) => Promise<void>;

/**
 * Record `before` → `after` in the consent history when the consent changed, then run `steps`
 * when it changed to `opted_out`.
 *
 * @param messageId the inbound message that caused the change (a keyword), if any.
 */
export async function runConsentSteps(
  tx: Tx,
  steps: readonly OptedOutStep[],
  before: { consentWhatsapp: string },
  after: {
    portalId: number;
    id: string;
    consentWhatsapp: string;
    consentSource: string;
    consentUpdatedAt: Date;
  },
  messageId?: string,
): Promise<void> {
  if (before.consentWhatsapp === after.consentWhatsapp) return;
  await recordConsentChanges(tx, [
    {
      portalId: after.portalId,
      contactId: after.id,
      from: before.consentWhatsapp as ConsentState,
      to: after.consentWhatsapp as ConsentState,
      source: after.consentSource as ContactRow['consentSource'],
      messageId,
      at: after.consentUpdatedAt,
    },
  ]);
  if (after.consentWhatsapp !== 'opted_out') return;
  for (const step of steps) {
    await step(tx, {
      portalId: after.portalId,
      contactId: after.id,
      source: after.consentSource,
      optedOutAt: after.consentUpdatedAt,
    });
  }
}

/**
 * Record the consent of contacts just created with one (from `unknown`): nothing for those
 * created `unknown`.
 */
export async function recordInitialConsent(
  tx: Tx,
  rows: readonly (Pick<ContactRow, 'portalId' | 'id' | 'consentWhatsapp' | 'consentSource'> & {
    consentUpdatedAt?: Date | undefined;
  })[],
): Promise<void> {
  await recordConsentChanges(
    tx,
    rows.map((r) => ({
      portalId: r.portalId,
      contactId: r.id,
      from: 'unknown',
      to: r.consentWhatsapp,
      source: r.consentSource,
      at: r.consentUpdatedAt,
    })),
  );
}

/**
 * Set a contact's consent to `to` with `source` (a keyword the person sent, `messageId`),
 * recording the change and running the opt-out `steps` as every consent change does; nothing
 * happens when the consent already is `to`.
 *
 * @returns whether the consent changed.
 */
export async function setConsent(
  tx: Tx,
  steps: readonly OptedOutStep[],
  change: {
    portalId: number;
    contactId: string;
    to: ConsentState;
    source: ContactRow['consentSource'];
    messageId?: string;
  },
): Promise<boolean> {
  const where = and(eq(contacts.portalId, change.portalId), eq(contacts.id, change.contactId));
  const [before] = await tx
    .select({ consentWhatsapp: contacts.consentWhatsapp })
    .from(contacts)
    .where(where)
    .for('update');
  if (!before || before.consentWhatsapp === change.to) return false;
  const [after] = await tx
    .update(contacts)
    .set({
      consentWhatsapp: change.to,
      consentSource: change.source,
      consentUpdatedAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .where(where)
    .returning();
  if (!after) return false;
  await runConsentSteps(tx, steps, before, after, change.messageId);
  return true;
}
