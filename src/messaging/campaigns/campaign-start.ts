/**
 * Starting a draft campaign: the checks again, the audience resolved once into the stored
 * snapshot (campaign-audience.ts; one start at a time per campaign), the estimate (recipients ×
 * the price of the template's category), the confirmation of a dearer estimate, the credit
 * (402 with the shortfall), then `scheduled` or `running`.
 *
 * @see docs/decisions/0063-campaigns.md
 */
import { AppError } from '../../platform/errors.ts';
import { readCredit } from '../credit/credit-ledger.ts';
import type { MessagingPrices } from '../outbound/message-sending.ts';
import { resolveAudience } from './campaign-audience.ts';
import { checkSendable, invalid, type CheckContext } from './campaign-checks.ts';
import { actorOf, move, type CampaignCaller, type MoveDeps } from './campaign-lifecycle.ts';
import {
  claimResolution,
  moveCampaign,
  releaseResolution,
  type CampaignRow,
} from './campaigns-repository.ts';

/** A resolution older than this is taken over (its instance died), in seconds. */
const RESOLUTION_STALE_S = 600;

export interface StartContext extends CheckContext, MoveDeps {
  prices: MessagingPrices;
}

const wrongStatus = (status: string) =>
  new AppError('conflict', `A ${status} campaign cannot be started.`);

/**
 * Start a draft: checks again, resolves the audience into the snapshot, prices it, and
 * moves it to `scheduled` (a schedule to come) or `running`.
 *
 * @param confirmCost the estimate the caller accepted, minor units: a higher one is refused.
 * @throws AppError `conflict` (not a draft, being started, or an estimate above
 *   `confirmCost`); `invalid_request` (nobody eligible, a schedule passed); `insufficient_credit`
 *   (402, the shortfall in its message and details); and as `checkSendable`.
 */
export async function startCampaign(
  ctx: StartContext,
  principal: CampaignCaller,
  current: CampaignRow,
  confirmCost?: number,
): Promise<CampaignRow> {
  const { id } = current;
  const { db, keyring, now } = ctx;
  if (current.status !== 'draft') throw wrongStatus(current.status);
  const { category } = await checkSendable(ctx, principal.portalId, {
    from: current.fromPhoneNumberId,
    template: current.template,
    pacePerSecond: current.pacePerSecond,
  });
  if (!(await claimResolution(db, principal.portalId, id, RESOLUTION_STALE_S)))
    throw new AppError('conflict', 'The campaign is being started already.');
  try {
    const resolved = await resolveAudience(db, {
      campaignId: id,
      portalId: principal.portalId,
      audience: current.audience,
      fromPhoneNumberId: current.fromPhoneNumberId,
      category,
      parameters: current.template.parameters ?? [],
    });
    const price = ctx.prices[category];
    const estimate = resolved.recipients * price;
    await moveCampaign(db, keyring, principal.portalId, id, ['draft'], 'draft', {
      category,
      estimatedCostMinor: estimate,
      currency: ctx.prices.currency,
      recipients: resolved.recipients,
      skipped: resolved.skipped,
      skippedBy: resolved.skippedBy,
      resolvedAt: now(),
    });
    if (resolved.recipients === 0)
      throw invalid(
        'audience',
        'has nobody eligible',
        `Nobody in the audience can receive the campaign (${resolved.skipped} skipped); see skippedBy.`,
      );
    if (confirmCost !== undefined && estimate > confirmCost)
      throw new AppError(
        'conflict',
        `The estimate is now ${estimate} (${category} × ${resolved.recipients} recipients), ` +
          `above the ${confirmCost} confirmed; start again with confirmCost=${estimate}.`,
        { details: [{ field: 'querystring.confirmCost', message: `estimate is ${estimate}` }] },
      );
    const credit = await readCredit(db, principal.portalId, ctx.prices.currency);
    const available = credit.balance - credit.reserved;
    if (estimate > available)
      throw new AppError(
        'insufficient_credit',
        `The campaign is estimated at ${estimate} minor units of ${credit.currency} ` +
          `(${resolved.recipients} recipients × ${price}), but ${available} are available: ` +
          `${estimate - available} short. Ask your operator to top up the credit.`,
        {
          details: [{ field: 'credit', message: `short by ${estimate - available} minor units` }],
        },
      );
    const scheduled = current.scheduleAt !== null && current.scheduleAt > now();
    const row = await move(ctx, {
      portalId: principal.portalId,
      id,
      from: ['draft'],
      to: scheduled ? 'scheduled' : 'running',
      type: scheduled ? 'campaign.scheduled' : 'campaign.started',
      actor: actorOf(principal),
      set: scheduled ? {} : { startedAt: now(), nextBatchAt: now() },
    });
    if (!row) throw wrongStatus('changed');
    return row;
  } finally {
    await releaseResolution(db, principal.portalId, id);
  }
}
