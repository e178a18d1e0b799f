/**
 * Schemas of `/messaging/campaigns`: a campaign (a name, the sender number, an approved
 * template with its parameters — fixed, or per recipient from contact fields with fallbacks, as
 * drafts take them —, an audience, a schedule and a pace), its counts and cost, and its report.
 *
 * @see docs/how-to/send-a-campaign.md
 * @see docs/decisions/0063-campaigns.md
 */
import { Type, type Static } from 'typebox';
import { Envelope, Iso, Nullable, Page } from '../../api-kit/schema-kit.ts';
import { CAMPAIGN_STATUSES, SKIP_REASONS } from '../../db/schema/campaigns.ts';
import { ContactParameterSchema } from '../drafts/draft-personalisation.ts';
import { TemplateComponentSchema } from '../templates/template-send.ts';

/** Meta's default throughput of a number (messages per second): the default pace. */
export const DEFAULT_PACE = 80;
/** The highest pace a campaign may ask for (Meta's highest throughput). */
export const PACE_MAX = 1000;
const PARAMETERS_MAX = 100;
const CONTACT_IDS_MAX = 10_000;
const PAGE_MAX = 100;
const PAGE_DEFAULT = 20;

const CampaignTemplateSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9_]{1,512}$', description: 'The approved template.' }),
    language: Type.String({ pattern: '^[a-z]{2,3}(_[A-Z]{2})?$', description: 'e.g. `en_US`.' }),
    parameters: Type.Optional(
      Type.Array(
        Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), ContactParameterSchema]),
        {
          maxItems: PARAMETERS_MAX,
          description:
            "The body's variables in order: `{{1}}`, `{{2}}`, …; each a text, or a field of " +
            'each recipient\'s contact (`{"contact": "firstName", "fallback": "there"}`).',
        },
      ),
    ),
    components: Type.Optional(
      Type.Array(TemplateComponentSchema, {
        maxItems: 12,
        description: 'Fixed parameters of the header and buttons, as `POST /messaging/messages`.',
      }),
    ),
  },
  { additionalProperties: false, title: 'CampaignTemplate' },
);
export type CampaignTemplate = Static<typeof CampaignTemplateSchema>;

const AudienceSchema = Type.Union(
  [
    Type.Object(
      {
        tag: Type.String({ minLength: 1, maxLength: 50, description: 'Every contact tagged so.' }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        contactIds: Type.Array(Type.String({ pattern: '^ctc_[0-9A-Za-z]{1,60}$' }), {
          minItems: 1,
          maxItems: CONTACT_IDS_MAX,
          description: `Contacts by id (at most ${CONTACT_IDS_MAX}); one listed twice is counted as a duplicate.`,
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      { all: Type.Literal(true, { description: 'Every contact who opted in to WhatsApp.' }) },
      { additionalProperties: false },
    ),
  ],
  { title: 'CampaignAudience' },
);

const ScheduleSchema = Type.Object(
  { at: Iso('When it starts once started (in the future); without a schedule it starts at once.') },
  { additionalProperties: false, title: 'CampaignSchedule' },
);

const PaceSchema = Type.Object(
  {
    perSecond: Type.Integer({
      minimum: 1,
      maximum: PACE_MAX,
      description: `Messages handed to the provider per second (default ${DEFAULT_PACE}); at most the sender number's throughput.`,
    }),
  },
  { additionalProperties: false, title: 'CampaignPace' },
);

export const NewCampaignBodySchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    from: Type.String({ pattern: '^[0-9]{1,40}$', description: 'The sender phone number id.' }),
    template: CampaignTemplateSchema,
    audience: AudienceSchema,
    schedule: Type.Optional(Nullable(ScheduleSchema)),
    pace: Type.Optional(PaceSchema),
  },
  {
    additionalProperties: false,
    title: 'NewCampaign',
    examples: [
      {
        name: 'November offers',
        from: '1000123001',
        template: {
          name: 'monthly_offer',
          language: 'en_US',
          parameters: [{ contact: 'firstName', fallback: 'there' }],
        },
        audience: { tag: 'customer' },
        schedule: { at: '2026-12-01T09:00:00.000Z' },
        pace: { perSecond: 40 },
      },
    ],
  },
);
export type NewCampaignBody = Static<typeof NewCampaignBodySchema>;

export const PatchCampaignBodySchema = Type.Partial(NewCampaignBodySchema, {
  additionalProperties: false,
  title: 'CampaignChange',
  examples: [{ pace: { perSecond: 20 } }],
});
export type PatchCampaignBody = Static<typeof PatchCampaignBodySchema>;

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const CampaignCountsSchema = Type.Object(
  {
    recipients: Count('Recipients kept in the snapshot.'),
    skipped: Count('Candidates left out when the audience was resolved (see `skippedBy`).'),
    queued: Count('Handed to the send path and not yet sent.'),
    sent: Count('Accepted by the provider (delivered and read included).'),
    delivered: Count('Delivered (read included).'),
    read: Count('Read.'),
    failed: Count('Failed at the provider, or refused by the send path.'),
    replied: Count('Recipients who wrote back within 7 days of their message.'),
    optedOut: Count('Recipients who opted out after the campaign started.'),
  },
  { title: 'CampaignCounts' },
);
export type CampaignCounts = Static<typeof CampaignCountsSchema>;

const SkippedBySchema = Type.Object(
  Object.fromEntries(SKIP_REASONS.map((r) => [r, Type.Optional(Type.Integer())])) as Record<
    (typeof SKIP_REASONS)[number],
    ReturnType<typeof Type.Optional<ReturnType<typeof Type.Integer>>>
  >,
  {
    title: 'CampaignSkippedBy',
    description:
      'Skipped candidates by reason: `opted_out`, `erased` (no such contact), ' +
      '`marketing_stopped` (the person stopped marketing from the sender number), `invalid` ' +
      '(no phone for an authentication template), `duplicate`, `missing_parameter` (a contact ' +
      'field without value or fallback).',
  },
);

export const CampaignSchema = Type.Object(
  {
    id: Type.String({ description: '`cmp_` + base62.' }),
    name: Type.String(),
    from: Type.String(),
    template: CampaignTemplateSchema,
    audience: AudienceSchema,
    schedule: Nullable(ScheduleSchema),
    pace: PaceSchema,
    status: Type.Enum(CAMPAIGN_STATUSES, {
      description: '`draft`, `scheduled`, `running`, `paused`, `completed` or `cancelled`.',
    }),
    statusReason: Nullable(
      Type.String({
        description:
          'Why it paused by itself (`insufficient_credit`, `messaging_limit_reached`, ' +
          '`number_not_ready`, `template_not_approved`, `not_connected`), or null.',
      }),
    ),
    category: Nullable(Type.String({ description: "The template's category when resolved." })),
    counts: CampaignCountsSchema,
    skippedBy: SkippedBySchema,
    cost: Type.Object(
      {
        estimated: Nullable(Type.Integer({ description: 'Recipients × price, minor units.' })),
        spent: Type.Integer({ description: 'Price of the messages sent, minor units.' }),
        currency: Nullable(Type.String({ description: 'ISO 4217.' })),
      },
      { title: 'CampaignCost' },
    ),
    startedAt: Nullable(Iso('When it began sending.')),
    finishedAt: Nullable(Iso('When it completed or was cancelled.')),
    createdAt: Iso('Created.'),
    updatedAt: Iso('Last changed.'),
  },
  { title: 'Campaign' },
);
export type Campaign = Static<typeof CampaignSchema>;

export const CampaignEnvelopeSchema = Envelope(CampaignSchema, { title: 'CampaignEnvelope' });
export const CampaignPageSchema = Page(CampaignSchema, {
  items: 'Newest first.',
  title: 'CampaignPage',
});

export const ListCampaignsQuerySchema = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: PAGE_MAX, default: PAGE_DEFAULT }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'nextCursor.' })),
  status: Type.Optional(Type.Enum(CAMPAIGN_STATUSES)),
});
export type ListCampaignsQuery = Static<typeof ListCampaignsQuerySchema>;

export const CampaignParamsSchema = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Campaign id (`cmp_…`).',
    examples: ['cmp_2mV8sKq4YtPe'],
  }),
});

export const StartQuerySchema = Type.Object({
  confirmCost: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'The estimate (minor units) the caller accepted; a start whose estimate is higher ' +
        'than this is refused with 409 `conflict` and the new estimate.',
    }),
  ),
});

const ReportRecipientSchema = Type.Object(
  {
    seq: Type.Integer({ description: 'Position in the snapshot, from 1.' }),
    contactId: Nullable(Type.String({ description: 'Null once the contact is erased.' })),
    outcome: Type.String({
      description:
        '`skipped`, `pending`, `refused`, `queued`, `sent`, `delivered`, `read`, `failed` or ' +
        '`cancelled`.',
    }),
    reason: Nullable(
      Type.String({ description: 'The skip reason, refusal code or provider error code.' }),
    ),
    messageId: Nullable(Type.String()),
  },
  { title: 'CampaignReportRecipient' },
);
export type ReportRecipient = Static<typeof ReportRecipientSchema>;

export const ReportQuerySchema = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
  after: Type.Optional(
    Type.Integer({ minimum: 0, description: 'The last `seq` of the previous page.' }),
  ),
});

export const CampaignReportSchema = Envelope(
  Type.Object({
    campaign: CampaignSchema,
    failedBy: Type.Array(
      Type.Object({ code: Type.String(), count: Type.Integer() }, { title: 'CampaignFailure' }),
      { description: 'Failures and refusals by code, most first.' },
    ),
    recipients: Type.Array(ReportRecipientSchema, { description: 'A page, by `seq`.' }),
    nextAfter: Nullable(Type.Integer({ description: 'Pass as `after`; null on the last page.' })),
  }),
  { title: 'CampaignReport' },
);
