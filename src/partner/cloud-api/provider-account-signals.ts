/**
 * The account signals of the provider's WhatsApp webhooks, parsed (pure): what the provider tells
 * a business about its standing.
 *
 * - `phone_number_quality_update` `{display_phone_number, event, current_limit?, old_limit?}`: a
 *   number was flagged or unflagged for its quality (`FLAGGED`, `UNFLAGGED`), its messaging limit
 *   tier moved (`UPGRADE`, `DOWNGRADE`), or its throughput (`ONBOARDING`, `THROUGHPUT_UPGRADE`).
 *   The webhook names the number by its display number only (digits), never by its id.
 * - `message_template_quality_update` `{previous_quality_score, new_quality_score,
 *   message_template_id, message_template_name, message_template_language}`.
 * - `message_template_status_update` with `event: "PAUSED"`: the pause's kind is in
 *   `other_info.title` (`FIRST_PAUSE`, `SECOND_PAUSE`, …), `reason` being null; it becomes the
 *   status event's `reason`. Every other status update is provider-webhook-payload.ts's.
 *
 * The account's standing (template categories, marketing preferences, alerts, restrictions,
 * capabilities, display names) is provider-standing-signals.ts's. Unknown fields are allowed (the
 * provider adds fields without notice); a value that does not fit is skipped, never fatal.
 *
 * @see https://developers.facebook.com/docs/graph-api/webhooks/reference/whatsapp-business-account/#phone_number_quality_update
 * @see https://developers.facebook.com/docs/graph-api/webhooks/reference/whatsapp-business-account/#message_template_quality_update
 * @see https://developers.facebook.com/docs/whatsapp/message-templates/guidelines#template-pausing
 */
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { parseStandingSignal, type StandingChange } from './provider-standing-signals.ts';
import type {
  PhoneNumberQualityEvent,
  TemplateQualityEvent,
  TemplateStatusEvent,
} from './provider-webhook-events.ts';

/** The changes an account signal asks of Portico. */
export type AccountSignalChange =
  | { kind: 'phone_quality'; wabaId: string; event: PhoneNumberQualityEvent }
  | { kind: 'template_quality'; wabaId: string; event: TemplateQualityEvent }
  | StandingChange;

/** What a signal parses to: its own changes, or a template's status (a pause). */
type SignalChange =
  AccountSignalChange | { kind: 'template'; wabaId: string; event: TemplateStatusEvent };

const Word = (max: number) => Type.String({ minLength: 1, maxLength: max });
const TemplateId = Type.Union([
  Type.Integer({ minimum: 0 }),
  Type.String({ pattern: '^[0-9]{1,30}$' }),
]);
const PhoneQualityValue = Type.Object({
  display_phone_number: Type.String({ pattern: '^\\+?[0-9][0-9 ()-]{3,30}$' }),
  event: Word(64),
  current_limit: Type.Optional(Word(64)),
  old_limit: Type.Optional(Word(64)),
});
const TemplateQualityValue = Type.Object({
  previous_quality_score: Word(32),
  new_quality_score: Word(32),
  message_template_id: TemplateId,
  message_template_name: Word(512),
  message_template_language: Word(32),
});
const PausedValue = Type.Object({
  event: Type.Literal('PAUSED'),
  message_template_id: TemplateId,
  message_template_name: Word(512),
  message_template_language: Word(32),
  reason: Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()])),
  other_info: Type.Optional(Type.Object({ title: Type.Optional(Word(64)) })),
});

const is = <T extends TSchema>(schema: T, v: unknown): v is Static<T> => Value.Check(schema, v);
const one = (change: SignalChange) => ({ changes: [change], skipped: 0, skippedIds: [] });

/**
 * One change of an entry, if it is an account signal.
 *
 * @returns the parsed change; null for an account signal whose value does not fit (skipped);
 *   undefined for a change that is not one (the caller parses it).
 */
export function parseAccountSignal(
  wabaId: string,
  change: { field: string; value: unknown },
  time?: number,
): { changes: SignalChange[]; skipped: number; skippedIds: string[] } | null | undefined {
  const standing = parseStandingSignal(wabaId, change, time);
  if (standing !== undefined) return standing;
  const { field, value } = change;
  if (field === 'phone_number_quality_update') {
    if (!is(PhoneQualityValue, value)) return null;
    const event: PhoneNumberQualityEvent = {
      wabaId,
      displayPhoneNumber: value.display_phone_number.replace(/[^0-9]/g, ''),
      event: value.event,
      ...(value.current_limit !== undefined && { messagingLimitTier: value.current_limit }),
      ...(value.old_limit !== undefined && { previousMessagingLimitTier: value.old_limit }),
    };
    return one({ kind: 'phone_quality', wabaId, event });
  }
  if (field === 'message_template_quality_update') {
    if (!is(TemplateQualityValue, value)) return null;
    const event: TemplateQualityEvent = {
      wabaId,
      templateId: String(value.message_template_id),
      name: value.message_template_name,
      language: value.message_template_language,
      qualityScore: value.new_quality_score,
      previousQualityScore: value.previous_quality_score,
    };
    return one({ kind: 'template_quality', wabaId, event });
  }
  if (field === 'message_template_status_update' && is(PausedValue, value)) {
    const reason = value.reason ?? value.other_info?.title;
    const event: TemplateStatusEvent = {
      wabaId,
      templateId: String(value.message_template_id),
      name: value.message_template_name,
      language: value.message_template_language,
      status: 'PAUSED',
      ...(reason !== undefined && reason !== 'NONE' && { reason }),
    };
    return one({ kind: 'template', wabaId, event });
  }
  return undefined;
}
