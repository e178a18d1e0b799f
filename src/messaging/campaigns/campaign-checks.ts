/**
 * What a campaign is checked against before it is stored and again before it starts: a
 * schedule to come, an audience that is not empty, the sender number onboarded and its
 * throughput (the pace may not exceed it), the template approved — not paused — in the sender's
 * WABA, priced at the category the provider bills for it now.
 *
 * @see https://developers.facebook.com/docs/whatsapp/throughput
 * @see docs/decisions/0063-campaigns.md
 */
import type { Database } from '../../db/client.ts';
import { AppError } from '../../platform/errors.ts';
import type { ProviderAdapter } from '../provider/provider-adapter.ts';
import { senderOf } from '../provider/sender-number.ts';
import { categoryAt } from '../provider-webhooks/account-standing.ts';
import { countAudience } from './campaign-audience.ts';
import type { CampaignFields } from './campaigns-repository.ts';
import { DEFAULT_PACE, type CampaignTemplate } from './campaigns-schemas.ts';

export type TemplateCategory = 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';

/** What the checks read: storage, the provider's catalog, the clock. */
export interface CheckContext {
  db: Database;
  provider: Pick<ProviderAdapter, 'catalog'>;
  now: () => Date;
}

/** 400 `invalid_request` naming `field`. */
export function invalid(field: string, message: string, text: string): AppError {
  return new AppError('invalid_request', text, { details: [{ field, message }] });
}

/**
 * The sender and template as they stand at the provider now.
 *
 * @throws AppError `invalid_request` (unknown `from`, pace above the throughput),
 *   `number_not_ready`, `template_not_approved`, `not_connected`, `provider_error`.
 */
export async function checkSendable(
  ctx: CheckContext,
  portalId: number,
  f: { from: string; template: CampaignTemplate; pacePerSecond: number },
): Promise<{ category: TemplateCategory }> {
  const catalog = await ctx.provider.catalog(portalId);
  const sender = senderOf(catalog.numbers, f.from, 'from');
  const { onboarding } = sender;
  if (!onboarding.webhooksSubscribed || !onboarding.registered)
    throw new AppError(
      'number_not_ready',
      `The sender number ${sender.id} cannot send yet: its onboarding is not finished ` +
        '(webhooks subscription and Cloud API registration). Retry it on the settings page.',
    );
  const throughput = sender.throughputPerSecond ?? DEFAULT_PACE;
  if (f.pacePerSecond > throughput)
    throw invalid(
      'body.pace.perSecond',
      `is above the sender number's throughput of ${throughput} messages per second`,
      `The pace of ${f.pacePerSecond} messages per second is above the sender number's ` +
        `throughput of ${throughput} messages per second (its throughput limit).`,
    );
  const template = (await catalog.templates()).find(
    (t) =>
      t.wabaId === sender.wabaId &&
      t.name === f.template.name &&
      t.language === f.template.language,
  );
  if (!template || template.status !== 'APPROVED')
    throw new AppError(
      'template_not_approved',
      `The template "${f.template.name}" (${f.template.language}) is ` +
        `${template ? template.status.toLowerCase() : 'not found'} in the WABA of the sender ` +
        'number; a campaign needs an approved template.',
    );
  return { category: await categoryAt(ctx.db, portalId, template, ctx.now()) };
}

/** @throws AppError `invalid_request` for a schedule in the past or an empty audience. */
export async function checkFields(
  ctx: CheckContext,
  portalId: number,
  f: CampaignFields,
): Promise<void> {
  if (f.scheduleAt && f.scheduleAt.getTime() <= ctx.now().getTime())
    throw invalid(
      'body.schedule.at',
      'is in the past',
      `The schedule ${f.scheduleAt.toISOString()} is in the past; give a time to come, or no schedule to start at once.`,
    );
  if ((await countAudience(ctx.db, portalId, f.audience)) === 0)
    throw invalid(
      'body.audience',
      'has no contact',
      'The audience has no contact: nobody would receive the campaign.',
    );
  await checkSendable(ctx, portalId, {
    from: f.fromPhoneNumberId,
    template: f.template,
    pacePerSecond: f.pacePerSecond,
  });
}
