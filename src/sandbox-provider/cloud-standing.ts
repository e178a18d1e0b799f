/**
 * The rest of the account's standing, sent to every app whose WhatsApp grant covers the WABA
 * (awaited, once each), each in the payload its reference page documents:
 *
 * - a template's category → `template_category_update`: announced ahead `{message_template_id,
 *   message_template_name, message_template_language, new_category (the current one),
 *   correct_category (the one it moves to), category_update_timestamp}` (a day on), or done
 *   `{…, previous_category, new_category}` (the templates listing then reports the new one).
 * - a person stops or resumes marketing messages from a number → `user_preferences`
 *   `{messaging_product, metadata, contacts: [{profile, wa_id}], user_preferences: [{wa_id,
 *   detail, category: "marketing_messages", value: "stop" | "resume", timestamp}]}`; while
 *   stopped, a marketing template from that number to them fails with 131050.
 * - an alert → `account_alerts` `{entity_type: "BUSINESS", entity_id, alert_info:
 *   {alert_severity, alert_status: "ACTIVE", alert_type, alert_description}}`.
 * - the portfolio's messaging limit → `business_capability_update`
 *   `{max_daily_conversations_per_business, max_phone_numbers_per_business,
 *   max_phone_numbers_per_waba}` (-1: unlimited); the numbers then report the new
 *   `whatsapp_business_manager_messaging_limit`.
 * - a display name decision → `phone_number_name_update` `{display_phone_number, decision,
 *   requested_verified_name, rejection_reason}`.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/template_category_update
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/user_preferences
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/account_alerts
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/business_capability_update
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/phone_number_name_update
 */
import { currentNumber, tell, TIERS, type SignalOutcome } from './cloud-signals.ts';
import { describePhoneNumber, wabaOfPhoneNumber, type SandboxTemplate } from './cloud-state.ts';
import { appsOfWaba } from './cloud-webhooks.ts';
import type { SandboxState } from './sandbox-state.ts';

export const CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
type Category = (typeof CATEGORIES)[number];

/** The alert types the sandbox raises, with their severity and the provider's description. */
export const ALERTS = {
  INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED: [
    'WARNING',
    'Additional verification is required for your business',
  ],
  INCREASED_CAPABILITIES_ELIGIBILITY_FAILED: [
    'CRITICAL',
    'Your business is not eligible for a higher messaging limit',
  ],
  OBA_APPROVED: ['INFORMATIONAL', 'Your Official Business Account request was approved'],
} as const;
export type AlertType = keyof typeof ALERTS;

export const NAME_DECISIONS = ['APPROVED', 'DEFERRED', 'REJECTED'] as const;

/** A day, in ms: how far ahead an impending category change is announced. */
const DAY_MS = 86_400_000;

const seconds = (ms: number) => Math.floor(ms / 1000);
const wabaOutcome = (state: SandboxState, wabaId: string) =>
  appsOfWaba(state, wabaId).length === 0 ? { ok: false as const, reason: 'unknown_waba' } : null;

/** The people a day of a tier, as `business_capability_update` gives them (-1: unlimited). */
export function tierPeople(tier: string): number {
  const m = /^TIER_([0-9]+)(K?)$/.exec(tier);
  return m ? Number(m[1]) * (m[2] ? 1000 : 1) : -1;
}

/**
 * Move a template to `category`: done now, or (`impending`) announced for a day on, when the
 * listing changes too.
 */
export async function changeTemplateCategory(
  state: SandboxState,
  wabaId: string,
  templateId: string,
  change: { category: Category; impending?: boolean | undefined },
): Promise<SignalOutcome> {
  const t: SandboxTemplate | undefined = state.cloud
    .templatesOf(wabaId)
    .find((x) => x.id === templateId);
  if (!t) return { ok: false, reason: 'unknown_template' };
  if (t.category === change.category) return { ok: false, reason: 'same_category' };
  const about = {
    message_template_id: Number(t.id),
    message_template_name: t.name,
    message_template_language: t.language,
  };
  const value = change.impending
    ? {
        ...about,
        correct_category: change.category,
        new_category: t.category,
        category_update_timestamp: seconds(state.now() + DAY_MS),
      }
    : { ...about, previous_category: t.category, new_category: change.category };
  if (!change.impending) t.category = change.category;
  return { ok: true, deliveries: await tell(state, wabaId, 'template_category_update', value) };
}

/** A person (`waId`, digits) stops or resumes marketing messages from a business number. */
export async function userPreference(
  state: SandboxState,
  phoneNumberId: string,
  waId: string,
  value: 'stop' | 'resume',
): Promise<SignalOutcome> {
  const wabaId = wabaOfPhoneNumber(phoneNumberId);
  if (!wabaId) return { ok: false, reason: 'unknown_number' };
  if (!/^[0-9]{6,20}$/.test(waId)) return { ok: false, reason: 'bad_wa_id' };
  const key = `${phoneNumberId}:${waId}`;
  if (value === 'stop') state.cloud.marketingStopped.add(key);
  else state.cloud.marketingStopped.delete(key);
  const number = describePhoneNumber(phoneNumberId);
  const payload = {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: number.digits, phone_number_id: phoneNumberId },
    contacts: [{ profile: { name: 'Sandbox Person' }, wa_id: waId }],
    user_preferences: [
      {
        wa_id: waId,
        detail:
          value === 'stop'
            ? 'User requested to stop marketing messages'
            : 'User requested to resume marketing messages',
        category: 'marketing_messages',
        value,
        timestamp: seconds(state.now()),
      },
    ],
  };
  return { ok: true, deliveries: await tell(state, wabaId, 'user_preferences', payload) };
}

/** Whether the person stopped marketing messages from the number (a send then fails, 131050). */
export const stoppedMarketing = (state: SandboxState, phoneNumberId: string, waId: string) =>
  state.cloud.marketingStopped.has(`${phoneNumberId}:${waId}`);

/** Raise an `account_alerts` alert about the WABA's business. */
export async function accountAlert(
  state: SandboxState,
  wabaId: string,
  type: AlertType,
): Promise<SignalOutcome> {
  const refused = wabaOutcome(state, wabaId);
  if (refused) return refused;
  const [severity, description] = ALERTS[type];
  const value = {
    entity_type: 'BUSINESS',
    entity_id: `5${wabaId.slice(4)}`,
    alert_info: {
      alert_severity: severity,
      alert_status: 'ACTIVE',
      alert_type: type,
      alert_description: description,
    },
  };
  return { ok: true, deliveries: await tell(state, wabaId, 'account_alerts', value) };
}

/** Set the portfolio's messaging limit and send `business_capability_update`. */
export async function businessCapability(
  state: SandboxState,
  wabaId: string,
  tier: string,
): Promise<SignalOutcome> {
  const refused = wabaOutcome(state, wabaId);
  if (refused) return refused;
  if (!TIERS.includes(tier)) return { ok: false, reason: 'unknown_tier' };
  state.cloud.portfolioLimits.set(wabaId, tier);
  const value = {
    max_daily_conversation_per_phone: tierPeople(tier),
    max_daily_conversations_per_business: tierPeople(tier),
    max_phone_numbers_per_business: 20,
    max_phone_numbers_per_waba: 2,
  };
  return { ok: true, deliveries: await tell(state, wabaId, 'business_capability_update', value) };
}

/** Decide on a number's display name and send `phone_number_name_update`. */
export async function phoneNumberName(
  state: SandboxState,
  phoneNumberId: string,
  decision: (typeof NAME_DECISIONS)[number],
): Promise<SignalOutcome> {
  const wabaId = wabaOfPhoneNumber(phoneNumberId);
  if (!wabaId) return { ok: false, reason: 'unknown_number' };
  const number = currentNumber(state, phoneNumberId);
  const value = {
    display_phone_number: number.digits,
    decision,
    requested_verified_name: number.verified_name,
    rejection_reason: decision === 'REJECTED' ? 'INVALID_FORMAT' : 'NONE',
  };
  return { ok: true, deliveries: await tell(state, wabaId, 'phone_number_name_update', value) };
}
