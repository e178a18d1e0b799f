/**
 * The account-standing signals of the provider's WhatsApp webhooks, parsed (pure), each as its
 * reference page documents the payload:
 *
 * - `template_category_update`: an impending change `{message_template_id, …_name, …_language,
 *   new_category (the current one), correct_category (the one it moves to),
 *   category_update_timestamp}`, or a done one `{…, previous_category, new_category}`.
 * - `user_preferences`: `{metadata: {phone_number_id}, contacts[], user_preferences: [{wa_id,
 *   detail, category: "marketing_messages", value: "stop" | "resume", timestamp}]}`.
 * - `account_alerts`: `{entity_type, entity_id, alert_info: {alert_severity, alert_status,
 *   alert_type, alert_description}}`.
 * - `account_update` restrictions and bans: `{event: "ACCOUNT_RESTRICTION", restriction_info:
 *   [{restriction_type, expiration}]}`, `{event: "ACCOUNT_VIOLATION", violation_info:
 *   {violation_type}}`, `{event: "DISABLED_UPDATE", ban_info: {waba_ban_state, waba_ban_date}}`.
 * - `business_capability_update`: `{max_daily_conversations_per_business (-1: unlimited),
 *   max_phone_numbers_per_business, max_phone_numbers_per_waba, …}`.
 * - `phone_number_name_update`: `{display_phone_number, decision, requested_verified_name,
 *   rejection_reason}`.
 *
 * Unknown fields are allowed; a value that does not fit is skipped (null), never fatal.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/template_category_update
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/user_preferences
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/account_alerts
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/account_update
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/business_capability_update
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/phone_number_name_update
 */
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type {
  AccountStandingEvent,
  TemplateCategoryEvent,
  UserPreferenceEvent,
} from './provider-webhook-events.ts';

/** The changes a standing signal asks of Portico. */
export type StandingChange =
  | { kind: 'template_category'; wabaId: string; event: TemplateCategoryEvent }
  | { kind: 'user_preferences'; wabaId: string; events: UserPreferenceEvent[] }
  | { kind: 'account_standing'; wabaId: string; event: AccountStandingEvent };

const Word = (max: number) => Type.String({ minLength: 1, maxLength: max });
const Id = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]{1,30}$' })]);
const Seconds = Type.Union([
  Type.Integer({ minimum: 0 }),
  Type.String({ pattern: '^[0-9]{1,12}$' }),
]);
const Category = Type.Union(['MARKETING', 'UTILITY', 'AUTHENTICATION'].map((c) => Type.Literal(c)));
const CategoryValue = Type.Object({
  message_template_id: Id,
  message_template_name: Word(512),
  message_template_language: Word(32),
  new_category: Category,
  previous_category: Type.Optional(Category),
  correct_category: Type.Optional(Category),
  category_update_timestamp: Type.Optional(Seconds),
});
const PreferencesValue = Type.Object({
  metadata: Type.Object({ phone_number_id: Type.String({ pattern: '^[0-9]{1,30}$' }) }),
  contacts: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 1000 })),
  user_preferences: Type.Array(Type.Unknown(), { maxItems: 1000 }),
});
const Preference = Type.Object({
  wa_id: Type.String({ pattern: '^[0-9]{1,20}$' }),
  category: Type.Literal('marketing_messages'),
  value: Type.Union([Type.Literal('stop'), Type.Literal('resume')]),
  timestamp: Seconds,
});
const Contact = Type.Object({
  wa_id: Type.String(),
  profile: Type.Optional(Type.Object({ name: Type.Optional(Type.String({ maxLength: 256 })) })),
});
const AlertValue = Type.Object({
  entity_type: Word(64),
  entity_id: Type.Union([Type.Integer({ minimum: 0 }), Word(64)]),
  alert_info: Type.Object({
    alert_severity: Word(32),
    alert_status: Word(32),
    alert_type: Word(128),
    alert_description: Type.Optional(Type.String({ maxLength: 2000 })),
  }),
});
const RestrictionValue = Type.Object({
  event: Type.Literal('ACCOUNT_RESTRICTION'),
  restriction_info: Type.Array(
    Type.Object({
      restriction_type: Word(128),
      expiration: Type.Optional(Type.Union([Seconds, Word(64)])),
    }),
    { maxItems: 20 },
  ),
});
const ViolationValue = Type.Object({
  event: Type.Literal('ACCOUNT_VIOLATION'),
  violation_info: Type.Object({ violation_type: Word(128) }),
});
const BanValue = Type.Object({
  event: Type.Literal('DISABLED_UPDATE'),
  ban_info: Type.Object({ waba_ban_state: Word(64), waba_ban_date: Type.Optional(Word(64)) }),
});
const Limit = Type.Union([Type.Integer(), Type.String({ pattern: '^-?[0-9]{1,12}$' })]);
const CapabilityValue = Type.Object({
  max_daily_conversations_per_business: Type.Optional(Limit),
  max_daily_conversation_per_phone: Type.Optional(Limit),
  max_phone_numbers_per_business: Type.Optional(Limit),
  max_phone_numbers_per_waba: Type.Optional(Limit),
});
const NameValue = Type.Object({
  display_phone_number: Type.String({ pattern: '^\\+?[0-9][0-9 ()-]{3,30}$' }),
  decision: Word(32),
  requested_verified_name: Type.Optional(Type.String({ maxLength: 512 })),
  rejection_reason: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
});

const is = <T extends TSchema>(schema: T, v: unknown): v is Static<T> => Value.Check(schema, v);
const one = (change: StandingChange) => ({ changes: [change], skipped: 0, skippedIds: [] });
const digits = (n: string) => n.replace(/[^0-9]/g, '');

/** Unix seconds (number or digits) or an ISO time as a Date; undefined when neither. */
function instant(v: string | number | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = typeof v === 'number' || /^[0-9]+$/.test(v) ? new Date(Number(v) * 1000) : new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** A capability limit as a number; -1 (unlimited) as null. */
const limit = (v: string | number | undefined) =>
  v === undefined ? undefined : Number(v) < 0 ? null : Number(v);

const ALERT_SEVERITY: Record<string, AccountStandingEvent['severity']> = {
  CRITICAL: 'critical',
  WARNING: 'warning',
  INFORMATIONAL: 'info',
};

function standing(wabaId: string, e: Omit<AccountStandingEvent, 'wabaId'>) {
  return one({ kind: 'account_standing', wabaId, event: { wabaId, ...e } });
}

function accountUpdate(wabaId: string, value: unknown) {
  if (is(RestrictionValue, value)) {
    const ends = value.restriction_info
      .map((r) => instant(r.expiration)?.getTime())
      .filter((t): t is number => t !== undefined);
    return standing(wabaId, {
      field: 'account_update',
      event: value.event,
      severity: 'critical',
      details: {
        restrictions: value.restriction_info.map((r) => ({
          type: r.restriction_type,
          expiresAt: instant(r.expiration)?.toISOString() ?? null,
        })),
      },
      ...(ends.length > 0 && { expiresAt: new Date(Math.max(...ends)) }),
    });
  }
  if (is(ViolationValue, value))
    return standing(wabaId, {
      field: 'account_update',
      event: value.event,
      severity: 'warning',
      details: { violationType: value.violation_info.violation_type },
    });
  if (is(BanValue, value))
    return standing(wabaId, {
      field: 'account_update',
      event: value.event,
      severity: value.ban_info.waba_ban_state === 'REINSTATE' ? 'info' : 'critical',
      details: {
        banState: value.ban_info.waba_ban_state,
        banDate: value.ban_info.waba_ban_date ?? null,
      },
    });
  return undefined;
}

function preferences(wabaId: string, value: Static<typeof PreferencesValue>) {
  const names = new Map<string, string>();
  for (const c of value.contacts ?? [])
    if (is(Contact, c) && c.profile?.name !== undefined) names.set(c.wa_id, c.profile.name);
  const events: UserPreferenceEvent[] = [];
  let skipped = 0;
  for (const p of value.user_preferences) {
    const timestamp = is(Preference, p) ? instant(p.timestamp) : undefined;
    if (!is(Preference, p) || timestamp === undefined) {
      skipped++;
      continue;
    }
    const profileName = names.get(p.wa_id);
    events.push({
      wabaId,
      phoneNumberId: value.metadata.phone_number_id,
      waId: p.wa_id,
      preference: p.value,
      timestamp,
      ...(profileName !== undefined && { profileName }),
    });
  }
  const changes: StandingChange[] =
    events.length > 0 ? [{ kind: 'user_preferences', wabaId, events }] : [];
  return { changes, skipped, skippedIds: [] };
}

/**
 * One change of an entry, if it is a standing signal.
 *
 * @param time the entry's `time` (Unix seconds): when a done category change applies.
 * @returns the parsed change; null for a standing signal whose value does not fit (skipped);
 *   undefined for a change that is not one (the caller parses it: `PARTNER_ADDED`, …).
 */
export function parseStandingSignal(
  wabaId: string,
  change: { field: string; value: unknown },
  time: number | undefined,
): { changes: StandingChange[]; skipped: number; skippedIds: string[] } | null | undefined {
  const { field, value } = change;
  switch (field) {
    case 'template_category_update': {
      if (!is(CategoryValue, value)) return null;
      const impending = value.correct_category !== undefined;
      const effectiveAt = impending
        ? instant(value.category_update_timestamp)
        : (instant(time) ?? new Date());
      if (!effectiveAt) return null;
      return one({
        kind: 'template_category',
        wabaId,
        event: {
          wabaId,
          templateId: String(value.message_template_id),
          name: value.message_template_name,
          language: value.message_template_language,
          previousCategory: impending ? value.new_category : (value.previous_category ?? null),
          category: impending ? value.correct_category! : value.new_category,
          effectiveAt,
          impending,
        },
      });
    }
    case 'user_preferences':
      return is(PreferencesValue, value) ? preferences(wabaId, value) : null;
    case 'account_alerts': {
      if (!is(AlertValue, value)) return null;
      const info = value.alert_info;
      return standing(wabaId, {
        field,
        event: info.alert_type,
        severity: ALERT_SEVERITY[info.alert_severity] ?? 'warning',
        details: {
          entityType: value.entity_type,
          entityId: String(value.entity_id),
          status: info.alert_status,
          ...(info.alert_description !== undefined && { description: info.alert_description }),
        },
      });
    }
    case 'account_update':
      return accountUpdate(wabaId, value);
    case 'business_capability_update': {
      if (!is(CapabilityValue, value)) return null;
      const perBusiness = limit(
        value.max_daily_conversations_per_business ?? value.max_daily_conversation_per_phone,
      );
      return standing(wabaId, {
        field,
        event: 'CAPABILITY_UPDATE',
        severity: 'info',
        details: {
          ...(perBusiness !== undefined && { maxDailyConversationsPerBusiness: perBusiness }),
          ...(value.max_phone_numbers_per_business !== undefined && {
            maxPhoneNumbersPerBusiness: limit(value.max_phone_numbers_per_business),
          }),
          ...(value.max_phone_numbers_per_waba !== undefined && {
            maxPhoneNumbersPerWaba: limit(value.max_phone_numbers_per_waba),
          }),
        },
      });
    }
    case 'phone_number_name_update': {
      if (!is(NameValue, value)) return null;
      const reason = value.rejection_reason;
      return standing(wabaId, {
        field,
        event: value.decision,
        severity: value.decision === 'APPROVED' ? 'info' : 'warning',
        displayPhoneNumber: digits(value.display_phone_number),
        details: {
          decision: value.decision,
          requestedVerifiedName: value.requested_verified_name ?? null,
          rejectionReason:
            reason === undefined || reason === null || reason === 'NONE' ? null : reason,
        },
      });
    }
    default:
      return undefined;
  }
}
