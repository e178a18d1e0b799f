/**
 * Account signals, what the provider tells a business about its standing, sent to every app
 * whose WhatsApp grant covers the WABA (awaited, once each):
 *
 * - a phone number's quality rating → `phone_number_quality_update` `{display_phone_number,
 *   event: "FLAGGED" (to YELLOW or RED) | "UNFLAGGED" (back to GREEN), current_limit}`; its
 *   messaging limit tier → `{…, event: "UPGRADE" | "DOWNGRADE", old_limit, current_limit}`.
 *   `GET /{waba-id}/phone_numbers` then reports the new `quality_rating` / `messaging_limit_tier`.
 * - a template's quality → `message_template_quality_update` `{previous_quality_score,
 *   new_quality_score, message_template_id, message_template_name, message_template_language}`;
 *   pausing it → `message_template_status_update` `{event: "PAUSED", …, reason: null,
 *   other_info: {title: "FIRST_PAUSE", description}}`, resuming → `{event: "APPROVED", reason:
 *   "NONE"}`. The templates listing then reports the new `quality_score` / `status`.
 * - the account → `account_update` `{event: "ACCOUNT_VIOLATION", violation_info:
 *   {violation_type}}` or `{event: "ACCOUNT_RESTRICTION", restriction_info: [{restriction_type:
 *   "RESTRICTED_BIZ_INITIATED_MESSAGING", expiration}]}` (Unix seconds, 24 hours on), or
 *   `{event: "DISABLED_UPDATE", ban_info: {waba_ban_state: "SCHEDULE_FOR_DISABLE",
 *   waba_ban_date}}` (a week on).
 * - the rest of the account's standing (template categories, marketing preferences, alerts,
 *   capabilities, display names) → cloud-standing.ts.
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/webhooks/components
 * @see https://developers.facebook.com/docs/whatsapp/messaging-limits
 * @see https://developers.facebook.com/docs/whatsapp/message-templates/guidelines#template-pausing
 */
import {
  describePhoneNumber,
  wabaOfPhoneNumber,
  type DeliveryStatus,
  type QualityRating,
  type SandboxTemplate,
} from './cloud-state.ts';
import { appsOfWaba, deliverOnce, wabaNotification } from './cloud-webhooks.ts';
import type { SandboxState } from './sandbox-state.ts';

export const QUALITY_RATINGS = ['GREEN', 'YELLOW', 'RED'] as const;
/** The messaging limit tiers, lowest first. */
export const TIERS = ['TIER_250', 'TIER_2K', 'TIER_10K', 'TIER_100K', 'TIER_UNLIMITED'];

export type Deliveries = { appId: string; status: DeliveryStatus }[];
export type SignalOutcome = { ok: true; deliveries: Deliveries } | { ok: false; reason: string };

/**
 * A phone number's quality rating and messaging limit as Graph reports them now: the limit is
 * its business portfolio's (`whatsapp_business_manager_messaging_limit`), which the deprecated
 * `messaging_limit_tier` still answers, as the provider keeps both.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits
 */
export function currentNumber(state: SandboxState, phoneNumberId: string) {
  const limit = state.cloud.portfolioLimits.get(wabaOfPhoneNumber(phoneNumberId) ?? '');
  return {
    ...describePhoneNumber(phoneNumberId),
    ...state.cloud.numberSignals.get(phoneNumberId),
    ...(limit !== undefined && {
      messaging_limit_tier: limit,
      whatsapp_business_manager_messaging_limit: limit,
    }),
  };
}

/** A template's quality score as Graph reports it (UNKNOWN until rated). */
export const qualityOf = (t: SandboxTemplate): QualityRating => t.quality ?? 'UNKNOWN';

/** POST `field` with `value` about `wabaId` to every app of the WABA; their answers. */
export async function tell(state: SandboxState, wabaId: string, field: string, value: unknown) {
  const notification = wabaNotification(wabaId, field, value, state.now());
  return Promise.all(
    appsOfWaba(state, wabaId).map(async (appId) => ({
      appId,
      status: await deliverOnce(state, appId, field, notification),
    })),
  );
}

/** Change a number's quality rating and/or tier, and tell the apps (one webhook per change). */
export async function changeNumber(
  state: SandboxState,
  phoneNumberId: string,
  change: { quality_rating?: QualityRating | undefined; messaging_limit_tier?: string | undefined },
): Promise<SignalOutcome> {
  const wabaId = wabaOfPhoneNumber(phoneNumberId);
  if (!wabaId) return { ok: false, reason: 'unknown_number' };
  const tier = change.messaging_limit_tier;
  if (tier !== undefined && !TIERS.includes(tier)) return { ok: false, reason: 'unknown_tier' };
  const before = currentNumber(state, phoneNumberId);
  const signals = { ...state.cloud.numberSignals.get(phoneNumberId) };
  const deliveries: Deliveries = [];
  const base = { display_phone_number: before.digits };
  if (change.quality_rating !== undefined && change.quality_rating !== before.quality_rating) {
    signals.quality_rating = change.quality_rating;
    state.cloud.numberSignals.set(phoneNumberId, { ...signals });
    const event = change.quality_rating === 'GREEN' ? 'UNFLAGGED' : 'FLAGGED';
    const current_limit = before.messaging_limit_tier;
    deliveries.push(
      ...(await tell(state, wabaId, 'phone_number_quality_update', {
        ...base,
        event,
        current_limit,
      })),
    );
  }
  if (tier !== undefined && tier !== before.messaging_limit_tier) {
    // The portfolio's: every number of the WABA reports it from now on.
    state.cloud.portfolioLimits.set(wabaId, tier);
    const up = TIERS.indexOf(tier) > TIERS.indexOf(before.messaging_limit_tier);
    const value = {
      ...base,
      event: up ? 'UPGRADE' : 'DOWNGRADE',
      old_limit: before.messaging_limit_tier,
      current_limit: tier,
      max_daily_conversations_per_business: tier,
    };
    deliveries.push(...(await tell(state, wabaId, 'phone_number_quality_update', value)));
  }
  return { ok: true, deliveries };
}

/** Change a template's quality score, or pause or resume it, and tell the apps. */
export async function changeTemplate(
  state: SandboxState,
  wabaId: string,
  templateId: string,
  change: { quality: QualityRating } | { pause: boolean },
): Promise<SignalOutcome> {
  const t = state.cloud.templates.get(wabaId)?.find((x) => x.id === templateId);
  if (!t) return { ok: false, reason: 'unknown_template' };
  const about = {
    message_template_id: Number(t.id),
    message_template_name: t.name,
    message_template_language: t.language,
  };
  if ('quality' in change) {
    const previous = qualityOf(t);
    t.quality = change.quality;
    const value = { previous_quality_score: previous, new_quality_score: change.quality, ...about };
    return {
      ok: true,
      deliveries: await tell(state, wabaId, 'message_template_quality_update', value),
    };
  }
  if (change.pause ? t.status !== 'APPROVED' : t.status !== 'PAUSED')
    return { ok: false, reason: change.pause ? 'not_approved' : 'not_paused' };
  t.status = change.pause ? 'PAUSED' : 'APPROVED';
  const value = change.pause
    ? {
        event: 'PAUSED',
        ...about,
        reason: null,
        other_info: {
          title: 'FIRST_PAUSE',
          description: 'Your message template has been paused for 3 hours due to low quality.',
        },
      }
    : { event: 'APPROVED', ...about, reason: 'NONE' };
  return {
    ok: true,
    deliveries: await tell(state, wabaId, 'message_template_status_update', value),
  };
}

/** The account events the sandbox sends. */
export const ACCOUNT_EVENTS = [
  'ACCOUNT_VIOLATION',
  'ACCOUNT_RESTRICTION',
  'DISABLED_UPDATE',
  'PARTNER_ADDED',
] as const;

/**
 * Tell the apps of `wabaId` about a policy violation, a 24-hour messaging restriction, or that
 * the business shared the WABA with them (`PARTNER_ADDED`, with `waba_info`).
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/account_update
 */
export async function accountUpdate(
  state: SandboxState,
  wabaId: string,
  event: (typeof ACCOUNT_EVENTS)[number],
): Promise<SignalOutcome> {
  if (appsOfWaba(state, wabaId).length === 0) return { ok: false, reason: 'unknown_waba' };
  const value =
    event === 'PARTNER_ADDED'
      ? { event, waba_info: { waba_id: wabaId, owner_business_id: `9${wabaId.slice(4)}` } }
      : event === 'ACCOUNT_VIOLATION'
        ? { event, violation_info: { violation_type: 'SCAM' } }
        : event === 'DISABLED_UPDATE'
          ? {
              event,
              ban_info: {
                waba_ban_state: 'SCHEDULE_FOR_DISABLE',
                waba_ban_date: new Date(state.now() + 7 * 86_400_000).toISOString().slice(0, 10),
              },
            }
          : {
              event,
              restriction_info: [
                {
                  restriction_type: 'RESTRICTED_BIZ_INITIATED_MESSAGING',
                  expiration: Math.floor(state.now() / 1000) + 24 * 3600,
                },
              ],
            };
  return { ok: true, deliveries: await tell(state, wabaId, 'account_update', value) };
}
