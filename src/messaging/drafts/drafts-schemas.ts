/**
 * Schemas of `/messaging/drafts`: a composed message (the fields of `POST /messaging/messages`:
 * `type`, `text.body` or `template.{name, language, parameters}`, `from`) and its recipients.
 *
 * @see docs/messaging.md
 */
import { Type, type Static } from 'typebox';
import { PHONE_INPUT_MAX } from '../../contacts/phone.ts';
import { Envelope, Iso, Nullable, Page } from '../../api-kit/schema-kit.ts';
import { ContactParameterSchema } from './draft-personalisation.ts';

export const TEXT_BODY_MAX = 4096;
const RECIPIENTS_MAX = 1000;
const PARAMETERS_MAX = 100;
const DRAFT_PAGE_MAX = 100;
const DRAFT_PAGE_DEFAULT = 20;
/** The most contacts a tag may expand to when a draft is sent. */
export const TAG_RECIPIENTS_MAX = 10_000;

const TextSchema = Type.Object(
  {
    body: Type.String({
      minLength: 1,
      maxLength: TEXT_BODY_MAX,
      description: `1–${TEXT_BODY_MAX} characters.`,
    }),
  },
  { additionalProperties: false },
);

const TemplateRefSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9_]{1,512}$' }),
    language: Type.String({ pattern: '^[a-z]{2,3}(_[A-Z]{2})?$', description: 'e.g. `en_US`.' }),
    parameters: Type.Array(
      Type.Union([Type.String({ minLength: 1, maxLength: 1024 }), ContactParameterSchema]),
      {
        maxItems: PARAMETERS_MAX,
        default: [],
        description:
          "The body's variables in order: `{{1}}`, `{{2}}`, …; each a text, or a field of " +
          'each recipient\'s contact resolved when the draft is sent (`{"contact": "firstName", ' +
          '"fallback": "there"}`, `{"contact": "attributes.plan"}`).',
      },
    ),
  },
  { additionalProperties: false },
);

const RecipientsSchema = Type.Object(
  {
    contactIds: Type.Array(Type.String({ pattern: '^ctc_[0-9A-Za-z]{1,60}$' }), {
      maxItems: RECIPIENTS_MAX,
      uniqueItems: true,
      default: [],
    }),
    phones: Type.Array(Type.String({ minLength: 1, maxLength: PHONE_INPUT_MAX }), {
      maxItems: RECIPIENTS_MAX,
      default: [],
      description: 'With the country code, any notation; stored in E.164.',
    }),
    tag: Nullable(
      Type.String({
        minLength: 1,
        maxLength: 50,
        description: `Every contact with this tag when sent (at most ${TAG_RECIPIENTS_MAX}).`,
      }),
    ),
  },
  { additionalProperties: false },
);

const MessageType = Type.Union([Type.Literal('text'), Type.Literal('template')]);
const FromSchema = Type.String({
  pattern: '^[0-9]{1,40}$',
  description: 'The phone number id to send from; needed only when the account has several.',
});

export const NewDraftBodySchema = Type.Object(
  {
    type: MessageType,
    text: Type.Optional(TextSchema),
    template: Type.Optional(TemplateRefSchema),
    recipients: Type.Optional(Type.Partial(RecipientsSchema, { additionalProperties: false })),
    from: Type.Optional(Nullable(FromSchema)),
  },
  {
    additionalProperties: false,
    examples: [
      {
        type: 'template',
        template: {
          name: 'appointment_reminder',
          language: 'en_US',
          parameters: [{ contact: 'firstName', fallback: 'there' }, 'Friday 10:00'],
        },
        recipients: { contactIds: ['ctc_7hGq2LmZ9xKa'], phones: ['+16505551234'] },
      },
    ],
  },
);
export type NewDraftBody = Static<typeof NewDraftBodySchema>;

export const PatchDraftBodySchema = Type.Partial(NewDraftBodySchema, {
  additionalProperties: false,
  examples: [{ recipients: { tag: 'customer' } }],
});
export type PatchDraftBody = Static<typeof PatchDraftBodySchema>;

const DraftSchema = Type.Object(
  {
    id: Type.String({ description: '`drf_` + base62.' }),
    type: MessageType,
    text: Type.Optional(TextSchema),
    template: Type.Optional(TemplateRefSchema),
    recipients: RecipientsSchema,
    from: Nullable(Type.String()),
    sentAt: Nullable(Iso('When it was sent; a sent draft cannot change or be sent again.')),
    sendResult: Nullable(
      Type.Object({ queued: Type.Integer(), refused: Type.Integer() }, { description: 'Counts.' }),
    ),
    createdAt: Iso('Created.'),
    updatedAt: Iso('Last changed.'),
  },
  { title: 'Draft' },
);
export type Draft = Static<typeof DraftSchema>;

export const DraftEnvelopeSchema = Envelope(DraftSchema, { title: 'DraftEnvelope' });
export const DraftPageSchema = Page(DraftSchema, { items: 'Newest first.', title: 'DraftPage' });

export const ListDraftsQuerySchema = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: DRAFT_PAGE_MAX, default: DRAFT_PAGE_DEFAULT }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'nextCursor.' })),
  sent: Type.Optional(Type.Boolean({ description: 'Only sent (true) or unsent (false) drafts.' })),
});
export type ListDraftsQuery = Static<typeof ListDraftsQuerySchema>;

export const DraftParamsSchema = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Draft id (`drf_…`).',
    examples: ['drf_2mV8sKq4YtPe'],
  }),
});

export const SendResultSchema = Envelope(
  Type.Object({
    queued: Type.Integer({ description: 'Messages queued, one per recipient.' }),
    refused: Type.Array(
      Type.Object({
        recipient: Type.String({ description: 'The contact id or the phone (E.164).' }),
        code: Type.String({ description: 'The error code a single send would have answered.' }),
        message: Type.String(),
      }),
    ),
    sentAt: Nullable(Iso('Null when nothing was queued: the draft stays unsent.')),
  }),
  { title: 'DraftSendResult' },
);
