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

/** The fields every account-standing event carries. */
const STANDING = {
  wabaId: Type.String({ description: 'The WhatsApp Business Account.' }),
  event: Type.String({ description: "The provider's word for what happened." }),
  severity: Type.Enum(['critical', 'warning', 'info'] as const, {
    description: 'How /settings shows it.',
  }),
  summary: Type.String({ description: 'What happened, in words (as the /settings banner).' }),
};

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
  'template.category_changed': Type.Object(
    {
      templateId: Type.String({ description: "The provider's template id." }),
      name: Type.String(),
      language: Type.String(),
      wabaId: Type.String({ description: 'The WhatsApp Business Account of the template.' }),
      previousCategory: Nullable(
        Type.String(),
        'The category before (`MARKETING`, `UTILITY`, `AUTHENTICATION`), when the provider says.',
      ),
      category: Type.String({ description: 'The category from `effectiveAt` on.' }),
      effectiveAt: Iso(
        'When the new category applies: a send on or after it is priced at `category`.',
      ),
      impending: Type.Boolean({
        description: 'true: announced ahead (it applies at `effectiveAt`); false: done.',
      }),
    },
    {
      description:
        'The provider moved a template to another category, or will on `effectiveAt`; sends of it are priced at the new category from then.',
      examples: [
        {
          templateId: '5938271',
          name: 'order_shipped',
          language: 'en_US',
          wabaId: '102034567801',
          previousCategory: 'UTILITY',
          category: 'MARKETING',
          effectiveAt: '2026-12-01T00:00:00.000Z',
          impending: true,
        },
      ],
    },
  ),
  'contact.marketing_preference_changed': Type.Object(
    {
      contactId: Type.String({ description: 'The contact (`ctc_…`).' }),
      phoneNumberId: Type.String({ description: 'The business number it applies to.' }),
      preference: Type.Enum(['stopped', 'resumed'] as const, {
        description:
          '`stopped`: marketing templates from the number to the person are refused (422 ' +
          '`marketing_stopped`); `resumed`: allowed again.',
      }),
      changedAt: Iso('When the person changed it, as the provider reports.'),
    },
    {
      description:
        'A person stopped or resumed marketing messages from a business number in WhatsApp; the ' +
        "contact's consent history shows it (scope `marketing`, source `provider`).",
      examples: [
        {
          contactId: 'ctc_8fJ2a',
          phoneNumberId: '1020345678011',
          preference: 'stopped',
          changedAt: '2026-11-23T18:10:00.000Z',
        },
      ],
    },
  ),
  'account.alert': Type.Object(
    {
      ...STANDING,
      entityType: Type.String({ description: '`BUSINESS`, `WABA` or `PHONE_NUMBER`.' }),
      entityId: Type.String({ description: 'The id of what the alert is about.' }),
      status: Type.String({ description: "The alert's status: `ACTIVE` or `NONE`." }),
      description: Type.Optional(Type.String({ description: "The provider's description." })),
    },
    {
      description:
        'The provider alerted the business (`account_alerts`): a messaging limit increase denied, ' +
        'deferred or needing more information, an Official Business Account decision, a profile ' +
        'photo removed. Shown on /settings.',
      examples: [
        {
          wabaId: '102034567801',
          event: 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED',
          severity: 'warning',
          summary:
            'Additional verification is required for your business (INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED, ACTIVE).',
          entityType: 'BUSINESS',
          entityId: '506914307656634',
          status: 'ACTIVE',
          description: 'Additional verification is required for your business',
        },
      ],
    },
  ),
  'account.updated': Type.Object(
    {
      ...STANDING,
      restrictions: Type.Optional(
        Type.Array(
          Type.Object({
            type: Type.String({ description: 'e.g. `RESTRICTED_BIZ_INITIATED_MESSAGING`.' }),
            expiresAt: Nullable(Iso('When it lifts.'), 'When it lifts, when the provider says.'),
          }),
          { description: '`ACCOUNT_RESTRICTION`: what is restricted.' },
        ),
      ),
      violationType: Type.Optional(
        Type.String({ description: '`ACCOUNT_VIOLATION`: the policy, e.g. `SCAM`.' }),
      ),
      banState: Type.Optional(
        Type.String({
          description: '`DISABLED_UPDATE`: `SCHEDULE_FOR_DISABLE`, `DISABLE` or `REINSTATE`.',
        }),
      ),
      banDate: Type.Optional(Nullable(Type.String(), '`DISABLED_UPDATE`: the date it applies.')),
      expiresAt: Type.Optional(Iso('When the restriction lifts (the latest of them).')),
    },
    {
      description:
        'The WhatsApp Business Account was restricted (`ACCOUNT_RESTRICTION`), reported for a ' +
        'policy violation (`ACCOUNT_VIOLATION`) or disabled, scheduled to be, or reinstated ' +
        '(`DISABLED_UPDATE`). Shown on /settings.',
      examples: [
        {
          wabaId: '102034567801',
          event: 'ACCOUNT_RESTRICTION',
          severity: 'critical',
          summary:
            'The WhatsApp Business Account is restricted until 2026-11-24T18:00:00.000Z: RESTRICTED_BIZ_INITIATED_MESSAGING.',
          restrictions: [
            { type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiresAt: '2026-11-24T18:00:00.000Z' },
          ],
          expiresAt: '2026-11-24T18:00:00.000Z',
        },
      ],
    },
  ),
  'account.capability_updated': Type.Object(
    {
      ...STANDING,
      maxDailyConversationsPerBusiness: Type.Optional(
        Nullable(
          Type.Integer(),
          "The business portfolio's messaging limit: people a day outside a service window " +
            '(null: unlimited).',
        ),
      ),
      maxPhoneNumbersPerBusiness: Type.Optional(
        Nullable(Type.Integer(), 'Phone numbers the portfolio may have (null: unlimited).'),
      ),
      maxPhoneNumbersPerWaba: Type.Optional(
        Nullable(Type.Integer(), 'Phone numbers a WABA may have (null: unlimited).'),
      ),
    },
    {
      description:
        "The business portfolio's capabilities changed (`business_capability_update`): its " +
        'messaging limit, shared by every number of the portfolio, or how many numbers it may have.',
      examples: [
        {
          wabaId: '102034567801',
          event: 'CAPABILITY_UPDATE',
          severity: 'info',
          summary: "The business portfolio's messaging limit is now 10,000 people a day.",
          maxDailyConversationsPerBusiness: 10000,
          maxPhoneNumbersPerBusiness: 20,
        },
      ],
    },
  ),
  'phone_number.name_updated': Type.Object(
    {
      phoneNumberId: Nullable(
        Type.String(),
        'The phone number id when Portico knows it; match `displayPhoneNumber` otherwise.',
      ),
      displayPhoneNumber: Type.String({ description: 'The number in E.164.' }),
      wabaId: Type.String({ description: 'The WhatsApp Business Account of the number.' }),
      decision: Type.String({ description: '`APPROVED`, `DEFERRED` or `REJECTED`.' }),
      requestedVerifiedName: Nullable(Type.String(), 'The display name that was reviewed.'),
      rejectionReason: Nullable(Type.String(), "The provider's reason for a rejection."),
    },
    {
      description:
        "The provider decided on a business number's display name (`phone_number_name_update`). " +
        'Shown on /settings.',
      examples: [
        {
          phoneNumberId: '1020345678011',
          displayPhoneNumber: '+15550783881',
          wabaId: '102034567801',
          decision: 'REJECTED',
          requestedVerifiedName: 'Lucky Shrub',
          rejectionReason: 'INVALID_FORMAT',
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
