/**
 * The webhook events about a portal's WhatsApp account and its people: templates, phone numbers,
 * consent and service windows (a part of the catalogue in webhook-events.ts, which spreads them
 * into `EVENT_SCHEMAS`).
 *
 * @see docs/reference/webhook-events.md
 */
import { Type, type TSchema } from 'typebox';

/** An ISO 8601 UTC time. */
export const Iso = (description: string) => Type.String({ format: 'date-time', description });
export const Nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });
export const Change = <T extends TSchema>(value: T, description: string) =>
  Type.Optional(Type.Object({ from: value, to: value }, { description }));

export const ACCOUNT_EVENT_SCHEMAS = {
  'template.status_updated': Type.Object(
    {
      templateId: Type.String({ description: "The provider's template id." }),
      name: Type.String(),
      language: Type.String(),
      status: Type.Optional(
        Type.String({
          description:
            '`APPROVED`, `REJECTED`, `PAUSED`, `DISABLED`, …; absent when only the quality changed.',
        }),
      ),
      wabaId: Type.String({ description: 'The WhatsApp Business Account of the template.' }),
      reason: Type.Optional(
        Type.String({
          description:
            "The provider's reason, when it gives one (for `PAUSED`: `FIRST_PAUSE`, `SECOND_PAUSE`, …).",
        }),
      ),
      qualityScore: Type.Optional(
        Type.Object(
          {
            from: Type.String({ description: 'The previous score.' }),
            to: Type.String({ description: 'The new score.' }),
          },
          {
            description: 'Only when its quality score changed (GREEN, YELLOW, RED, UNKNOWN).',
          },
        ),
      ),
    },
    {
      description:
        'The provider reviewed, paused or disabled a template, or rated its quality (a low rating can pause it).',
      examples: [
        {
          templateId: '5938271',
          name: 'order_shipped',
          language: 'en_US',
          status: 'APPROVED',
          wabaId: '102034567801',
        },
        {
          templateId: '5938271',
          name: 'order_shipped',
          language: 'en_US',
          wabaId: '102034567801',
          qualityScore: { from: 'GREEN', to: 'YELLOW' },
        },
      ],
    },
  ),
  'phone_number.quality_updated': Type.Object(
    {
      phoneNumberId: Nullable(
        Type.String(),
        'The phone number id (as in GET /messaging/numbers) when Portico knows it; match ' +
          '`displayPhoneNumber` otherwise.',
      ),
      displayPhoneNumber: Type.String({
        description: 'The number in E.164, as the provider names it in the signal.',
      }),
      wabaId: Type.String({ description: 'The WhatsApp Business Account of the number.' }),
      event: Type.String({
        description:
          "The provider's word: `FLAGGED` (quality low: the tier may go down), `UNFLAGGED` " +
          '(quality back), `UPGRADE` / `DOWNGRADE` (messaging limit tier), `ONBOARDING`, ' +
          '`THROUGHPUT_UPGRADE`, …',
      }),
      messagingLimitTier: Nullable(
        Type.String(),
        'The messaging limit tier now (`TIER_250`, `TIER_1K`, …, `TIER_UNLIMITED`), when given.',
      ),
      previousMessagingLimitTier: Type.Optional(
        Type.String({ description: 'The tier before, for a tier change.' }),
      ),
    },
    {
      description:
        "A business number's quality rating or messaging limit tier changed at the provider; " +
        'GET /messaging/numbers shows the new `qualityRating` and `messagingLimitTier`.',
      examples: [
        {
          phoneNumberId: '1020345678011',
          displayPhoneNumber: '+15550783881',
          wabaId: '102034567801',
          event: 'DOWNGRADE',
          messagingLimitTier: 'TIER_250',
          previousMessagingLimitTier: 'TIER_1K',
        },
      ],
    },
  ),
  'contact.opted_out': Type.Object(
    {
      contactId: Type.String({ description: 'The contact (`ctc_…`).' }),
      source: Type.String({ description: 'How: `api`, `import`, `web`, `provider`, `keyword`.' }),
      optedOutAt: Iso('When.'),
    },
    {
      description: "A contact's WhatsApp consent changed to `opted_out`.",
      examples: [{ contactId: 'ctc_8fJ2a', source: 'api', optedOutAt: '2026-11-23T18:10:00.000Z' }],
    },
  ),
  'conversation.window_closing': Type.Object(
    {
      conversationId: Type.String({ description: 'The conversation (`cnv_…`).' }),
      contactId: Type.String({ description: 'The contact (`ctc_…`).' }),
      phoneNumberId: Type.String({ description: 'The business phone number.' }),
      expiresAt: Iso('When the 24-hour service window closes (then templates only).'),
    },
    {
      description:
        "A conversation's service window closes in an hour: the last chance for free text. " +
        'Sent once per window; a new message from the person opens a new one.',
      examples: [
        {
          conversationId: 'cnv_4hT2k',
          contactId: 'ctc_8fJ2a',
          phoneNumberId: '1020345678011',
          expiresAt: '2026-11-24T18:05:00.000Z',
        },
      ],
    },
  ),
};
