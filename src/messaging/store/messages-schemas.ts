/**
 * Request and response schemas of `/messaging/messages`, `/messaging/reports/summary` and
 * `/messaging/credit` (validation, types and OpenAPI from one definition).
 *
 * @see docs/messaging.md
 * @see docs/messaging.md
 */
import { Type, type Static } from 'typebox';
import { CREDIT_TRANSACTION_KINDS } from '../../db/schema/credit.ts';
import { MESSAGE_STATUSES, MESSAGE_TYPES } from '../../db/schema/messages.ts';
import { Envelope, Iso, Nullable, Page } from '../../api-kit/schema-kit.ts';
import { InboundMessageSchema } from './inbound-schemas.ts';
import { TemplateComponentSchema } from '../templates/template-send.ts';
import {
  AudioObjectSchema,
  ContextSchema,
  DocumentObjectSchema,
  ImageObjectSchema,
  InteractiveObjectSchema,
  LocationObjectSchema,
  ReactionObjectSchema,
  StickerObjectSchema,
  TextObjectSchema,
  VideoObjectSchema,
} from './send-kinds-schemas.ts';

export {
  SendMessageBodySchema,
  TEMPLATE_PARAMETER_MAX,
  TEMPLATE_PARAMETERS_MAX,
  TEXT_BODY_MAX,
  type SendMessageBody,
} from './send-kinds-schemas.ts';
export const PAGE_LIMIT_MAX = 100;
export const PAGE_LIMIT_DEFAULT = 20;

const Text = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, description });

const MessageStatusSchema = Type.Enum(MESSAGE_STATUSES, {
  description: 'queued → sent → delivered → read, or failed (never backwards).',
});

/** Each free-form kind's object, as accepted (media by our `med_…` id or its link). */
const kindObjects = {
  text: Type.Optional(TextObjectSchema),
  image: Type.Optional(ImageObjectSchema),
  video: Type.Optional(VideoObjectSchema),
  audio: Type.Optional(AudioObjectSchema),
  document: Type.Optional(DocumentObjectSchema),
  sticker: Type.Optional(StickerObjectSchema),
  location: Type.Optional(LocationObjectSchema),
  interactive: Type.Optional(InteractiveObjectSchema),
  reaction: Type.Optional(ReactionObjectSchema),
};

export const MessageSchema = Type.Object(
  {
    id: Type.String({ description: 'Message id (`msg_…`).' }),
    direction: Type.Literal('outbound'),
    to: Type.String({
      description: 'E.164, or the WhatsApp user id (BSUID) of a person known without a phone.',
    }),
    contactId: Nullable(Type.String({ description: 'The contact, when the number is one.' })),
    from: Type.String({ description: 'The sender phone number id.' }),
    type: Type.Enum(MESSAGE_TYPES, {
      description: 'Its kind: the object of that name says what it says (absent once erased).',
    }),
    ...kindObjects,
    template: Type.Optional(
      Type.Object({
        name: Type.String(),
        language: Type.String(),
        parameters: Type.Array(Type.String()),
        components: Type.Optional(Type.Array(TemplateComponentSchema)),
      }),
    ),
    context: Type.Optional(ContextSchema),
    status: MessageStatusSchema,
    providerMessageId: Nullable(Type.String({ description: "The provider's id (wamid)." })),
    queuedAt: Iso('When it was accepted.'),
    sentAt: Nullable(Iso('When the provider sent it.')),
    deliveredAt: Nullable(Iso('When it reached the phone.')),
    readAt: Nullable(Iso('When it was read.')),
    failedAt: Nullable(Iso('When it failed.')),
    error: Nullable(
      Type.Object(
        {
          code: Type.Union([Type.Integer(), Type.String()], {
            description:
              "The provider's error code, an integer as the provider sends it (e.g. `131026`); or Portico's own reason as a string: `not_connected`, `delivery_failed` (it could not be handed to the provider).",
          }),
          title: Type.String(),
        },
        {
          description: 'Why it failed.',
        },
      ),
    ),
    price: Type.Object(
      {
        amount: Type.Integer({ description: 'Minor units (e.g. cents).' }),
        currency: Type.String({ description: 'ISO 4217.' }),
      },
      { description: 'Reserved at send, captured when sent, released when failed.' },
    ),
    pricing: Type.Object(
      {
        billable: Nullable(
          Type.Boolean({ description: 'Whether the provider bills it; null until it says.' }),
        ),
        category: Nullable(
          Type.String({
            description:
              'The category the provider bills it at (`marketing`, `utility`, ' +
              '`authentication`, `authentication_international`, `service`, ' +
              '`marketing_lite`); null until a status says.',
          }),
        ),
        pricingModel: Nullable(
          Type.String({ description: "The provider's pricing model (`PMP`: per message)." }),
        ),
        type: Nullable(
          Type.String({
            description: '`regular`, `free_customer_service` or `free_entry_point`.',
          }),
        ),
        charged: Nullable(
          Type.Integer({
            description:
              'What Portico charged, minor units of `price.currency`: the price of the ' +
              'billed category (0 when not billable), the reserved price when the provider ' +
              'gave no pricing; null while queued.',
          }),
        ),
      },
      {
        description:
          "The provider's pricing from its status webhooks beside Portico's charge " +
          '(docs/decisions/0056-billed-pricing.md).',
      },
    ),
  },
  { title: 'Message', description: 'An outbound WhatsApp message.' },
);
export type Message = Static<typeof MessageSchema>;

export const MessageEnvelopeSchema = Envelope(MessageSchema, { title: 'MessageEnvelope' });

/** A message of either direction, told apart by `direction`. */
const AnyMessageSchema = Type.Union([MessageSchema, InboundMessageSchema], {
  title: 'AnyMessage',
  description: 'An outbound (`direction: "outbound"`) or inbound (`"inbound"`) message.',
});

export const AnyMessageEnvelopeSchema = Envelope(AnyMessageSchema, {
  title: 'AnyMessageEnvelope',
});

export const MessagePageSchema = Page(AnyMessageSchema, {
  items:
    'Newest first: outbound by the time it was queued, inbound by the time the person sent it.',
  title: 'MessagePage',
});

const Limit = Type.Integer({
  minimum: 1,
  maximum: PAGE_LIMIT_MAX,
  default: PAGE_LIMIT_DEFAULT,
  description: `Page size, 1–${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_DEFAULT}).`,
});
const Cursor = Type.Optional(Text(200, 'The previous page’s nextCursor.'));

export const ListMessagesQuerySchema = Type.Object(
  {
    limit: Limit,
    cursor: Cursor,
    direction: Type.Optional(
      Type.Enum(['inbound', 'outbound'] as const, { description: 'Only this direction.' }),
    ),
    contactId: Type.Optional(Text(64, 'Only messages to or from this contact (`ctc_…`).')),
    phoneNumberId: Type.Optional(
      Text(64, 'Only messages sent from or written to this business phone number id.'),
    ),
    status: Type.Optional(
      Type.Enum(MESSAGE_STATUSES, { description: 'Only outbound messages with this status.' }),
    ),
    to: Type.Optional(Text(40, 'Only outbound messages to this E.164 phone.')),
    since: Type.Optional(
      Iso('Only messages queued (outbound) or sent (inbound) at or after this instant.'),
    ),
    until: Type.Optional(Iso('Only messages queued or sent before this instant.')),
  },
  { additionalProperties: false },
);
export type ListMessagesQuery = Static<typeof ListMessagesQuerySchema>;

export const MessageParamsSchema = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Message id (`msg_…`).',
    examples: ['msg_5kJd8RwP3nLx'],
  }),
});

export const SummaryQuerySchema = Type.Object(
  {
    since: Type.Optional(
      Iso('Start of the period (inclusive); by default 30 days (24 hours by hour) before `until`.'),
    ),
    until: Type.Optional(
      Iso('End of the period (exclusive), by default now; at most 366 days after `since`.'),
    ),
    granularity: Type.Enum(['day', 'hour'] as const, {
      default: 'day',
      description: 'One bucket per UTC day or hour.',
    }),
  },
  { additionalProperties: false },
);
export type SummaryQuery = Static<typeof SummaryQuerySchema>;

const Counts = Type.Object({
  queued: Type.Integer(),
  sent: Type.Integer(),
  delivered: Type.Integer(),
  read: Type.Integer(),
  failed: Type.Integer(),
});

const SummaryPeriodSchema = Type.Object(
  {
    start: Iso('Start of the bucket (UTC).'),
    total: Type.Integer({ description: 'Messages queued in the bucket.' }),
    counts: Type.Object(Counts.properties, { description: 'By current status.' }),
    deliveryRate: Nullable(
      Type.Number({
        description: '(delivered + read) / (total − queued), 0–1; null when nothing was sent yet.',
      }),
    ),
    cost: Type.Object({
      amount: Type.Integer({ description: 'Captured price of sent messages, minor units.' }),
      currency: Type.String(),
    }),
  },
  { title: 'SummaryPeriod' },
);
export type SummaryPeriod = Static<typeof SummaryPeriodSchema>;

export const SummarySchema = Envelope(
  Type.Object({
    since: Iso('As asked.'),
    until: Iso('As asked.'),
    granularity: Type.Enum(['day', 'hour'] as const),
    periods: Type.Array(SummaryPeriodSchema, {
      description: 'Buckets with messages, oldest first.',
    }),
  }),
  { title: 'MessageSummary' },
);

const CreditSchema = Type.Object(
  {
    balance: Type.Integer({ description: 'Minor units owned (including reserved).' }),
    reserved: Type.Integer({ description: 'Minor units held by queued messages.' }),
    currency: Type.String({ description: 'ISO 4217.' }),
  },
  { title: 'Credit' },
);
export type Credit = Static<typeof CreditSchema>;
export const CreditEnvelopeSchema = Envelope(CreditSchema, { title: 'CreditEnvelope' });

const CreditTransactionSchema = Type.Object(
  {
    id: Type.String({ description: 'Transaction id (`ctx_…`).' }),
    kind: Type.Enum(CREDIT_TRANSACTION_KINDS, {
      description:
        'topup (operator), reserve (send), capture (sent), release (failed, or billed below ' +
        'the reservation), charge (billed above the reservation), refund (billed below what ' +
        'was captured).',
    }),
    amount: Type.Integer({ description: 'Minor units, positive.' }),
    currency: Type.String(),
    messageId: Nullable(Type.String()),
    note: Nullable(Type.String()),
    createdAt: Iso('ISO 8601, UTC.'),
  },
  { title: 'CreditTransaction' },
);
export type CreditTransaction = Static<typeof CreditTransactionSchema>;
export const CreditTransactionPageSchema = Page(CreditTransactionSchema, {
  items: 'Newest first.',
  title: 'CreditTransactionPage',
});

export const PageQuerySchema = Type.Object(
  { limit: Limit, cursor: Cursor },
  { additionalProperties: false },
);
