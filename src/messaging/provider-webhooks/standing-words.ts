/**
 * One line in Portico's words for each account-standing signal, as the banner on /settings shows
 * it: what happened, with the provider's codes (never a person's data: these signals name only
 * the business, its numbers and its limits).
 *
 * @see docs/messaging.md "Account signals"
 */
import type { AccountStandingEvent } from '../../partner/cloud-api/provider-webhook-events.ts';

const str = (v: unknown) =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : null;

/** A limit in words: null is unlimited. */
const limitWords = (v: unknown) =>
  v === null ? 'unlimited' : `${Number(v).toLocaleString('en-US')} people a day`;

/** The banner's line for `e`. */
export function standingSummary(e: AccountStandingEvent, display: string | null): string {
  const d = e.details;
  switch (e.field) {
    case 'account_alerts':
      return `${str(d.description) ?? 'The provider raised an alert'} (${e.event}, ${str(d.status)}).`;
    case 'business_capability_update':
      return 'maxDailyConversationsPerBusiness' in d
        ? `The business portfolio's messaging limit is now ${limitWords(d.maxDailyConversationsPerBusiness)}.`
        : "The business portfolio's capabilities changed.";
    case 'phone_number_name_update': {
      const name = str(d.requestedVerifiedName) ?? 'the requested name';
      const reason = str(d.rejectionReason);
      return (
        `The display name “${name}” of ${display ?? 'a business number'}: ${e.event}` +
        (reason ? ` (${reason}).` : '.')
      );
    }
    case 'account_update':
      if (e.event === 'ACCOUNT_RESTRICTION') {
        const list = (d.restrictions as { type: string }[]).map((r) => r.type).join(', ');
        const until = e.expiresAt ? ` until ${e.expiresAt.toISOString()}` : '';
        return `The WhatsApp Business Account is restricted${until}: ${list}.`;
      }
      if (e.event === 'ACCOUNT_VIOLATION')
        return `The provider reported a policy violation: ${str(d.violationType)}.`;
      if (d.banState === 'REINSTATE') return 'The WhatsApp Business Account is reinstated.';
      if (d.banState === 'SCHEDULE_FOR_DISABLE')
        return `The WhatsApp Business Account is scheduled to be disabled${d.banDate ? ` on ${str(d.banDate)}` : ''}.`;
      return `The WhatsApp Business Account is disabled (${str(d.banState)}).`;
  }
}
