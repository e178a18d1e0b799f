/**
 * Steps other features add to a contact's opt-out (given at composition in services.ts): the
 * webhooks' `contact.opted_out`. They run in the transaction that records the opt-out, only
 * when the consent changes to `opted_out` (not when it already was).
 *
 * @see docs/decisions/0017-outbound-webhooks.md
 */
import type { Tx } from './contacts-repository.ts';

export type OptedOutStep = (
  tx: Tx,
  optOut: { portalId: number; contactId: string; source: string; optedOutAt: Date },
) => Promise<void>;

/** Run `steps` when `before` → `after` is a change to `opted_out`. */
export async function runOptedOutSteps(
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
): Promise<void> {
  if (before.consentWhatsapp === 'opted_out' || after.consentWhatsapp !== 'opted_out') return;
  for (const step of steps) {
    await step(tx, {
      portalId: after.portalId,
      contactId: after.id,
      source: after.consentSource,
      optedOutAt: after.consentUpdatedAt,
    });
  }
}
