/**
 * The commands for a portal's provider connection: `partner onboard` runs the onboarding of the
 * connection again (subscribe Portico's app to each WABA's webhooks, register each number not
 * registered yet) and prints where each number stands — what the settings page's Retry does.
 *
 * @see docs/partner-connection.md "Onboarding"
 */
import { Type } from 'typebox';
import { UsageError } from '../platform/errors.ts';
import { defineCommand, Portal, portalOption } from './command.ts';

interface NumberState {
  phoneNumberId: string;
  wabaId: string;
  webhooksSubscribed: boolean;
  registered: boolean;
  lastError: string | null;
  nextAttemptAt: string | null;
}

export const partnerOnboard = defineCommand({
  name: 'partner onboard',
  description:
    "run the onboarding of the portal's connection again: subscribe the app to each WhatsApp " +
    'account, register each number not registered yet; prints where each number stands',
  args: Type.Object({ portal: Portal }),
  options: { portal: portalOption },
  run: async (services, a) => {
    const portalId = await services.accounts.portalIdFor(a.portal);
    const outcome = await services.partner.onboardConnection(portalId);
    if (!outcome.ran && outcome.reason === 'inactive')
      throw new UsageError(`Portal ${a.portal} has no active provider connection.`);
    const states = await services.partner.onboardingStates(portalId);
    const numbers: NumberState[] = [...states].map(([phoneNumberId, s]) => ({
      phoneNumberId,
      wabaId: s.wabaId,
      webhooksSubscribed: s.webhooksSubscribed,
      registered: s.registered,
      lastError: s.lastError,
      nextAttemptAt: s.nextAttemptAt?.toISOString() ?? null,
    }));
    return { ran: outcome.ran, busy: !outcome.ran && outcome.reason === 'claimed', numbers };
  },
  print: (r) => {
    const head = r.busy
      ? 'The onboarding is already running on another instance; the state so far:'
      : r.ran
        ? 'Onboarding done:'
        : 'The onboarding could not run (see the log); the state so far:';
    const lines = r.numbers.map((n) => {
      const ready = n.webhooksSubscribed && n.registered;
      const missing = [
        ...(n.webhooksSubscribed ? [] : ['webhooks not subscribed']),
        ...(n.registered ? [] : ['not registered']),
      ];
      return (
        `  ${n.phoneNumberId} (WABA ${n.wabaId}): ${ready ? 'ready' : missing.join(', ')}` +
        (n.lastError ? ` — ${n.lastError}` : '') +
        (n.nextAttemptAt && !n.registered ? ` Next attempt allowed at ${n.nextAttemptAt}.` : '')
      );
    });
    return [head, ...(lines.length > 0 ? lines : ['  (no numbers)'])].join('\n');
  },
});
