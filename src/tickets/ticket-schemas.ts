/**
 * Request and response schemas of `/support/tickets` (validation, types and OpenAPI from one
 * definition).
 *
 * @see docs/support.md
 */
import { Type, type Static } from 'typebox';
import { TICKET_PRIORITIES, TICKET_STATUSES } from '../db/schema/support-tickets.ts';
import { Envelope, Iso, Nullable, Page } from '../api-kit/schema-kit.ts';
import { PRINTABLE_TEXT_PATTERN } from '../platform/plain-text.ts';

export const SUBJECT_MAX = 200;
export const DESCRIPTION_MAX = 10_000;
export const CATEGORY_MAX = 100;
export const TAGS_MAX = 10;
export const TAG_MAX = 50;
export const PAGE_LIMIT_MAX = 100;
export const PAGE_LIMIT_DEFAULT = 20;
export const IDEMPOTENCY_KEY_MAX = 255;

const literals = <const T extends readonly string[]>(values: T, options: Record<string, unknown>) =>
  Type.Enum(values, options);

const PRIORITY = 'How urgent the request is.';
const STATUS =
  'Where the ticket stands: `new` → `open` (an agent took it) → `pending` (waiting on you) → ' +
  '`solved` → `closed` (7 days after solved, or when you close it; final).';
export const PrioritySchema = literals(TICKET_PRIORITIES, {
  title: 'TicketPriority',
  description: PRIORITY,
});
export const StatusSchema = literals(TICKET_STATUSES, {
  title: 'TicketStatus',
  description: STATUS,
});

const NullableTime = (description: string) =>
  Nullable(Type.String({ format: 'date-time' }), { description: `${description} ISO 8601, UTC.` });

export const TicketSchema = Type.Object(
  {
    id: Type.String({ pattern: '^tkt_[0-9A-Za-z]+$', description: 'Ticket id (`tkt_…`).' }),
    subject: Type.String({
      description: 'Subject; any secret found was replaced by `[REDACTED]`.',
    }),
    description: Type.String({
      description: 'Description; any secret found was replaced by `[REDACTED]`.',
    }),
    priority: PrioritySchema,
    status: StatusSchema,
    category: Nullable(Type.String(), { description: 'Category, or null.' }),
    tags: Type.Array(Type.String(), { description: 'Tags, in the order given.' }),
    requester: Type.Object(
      { userId: Type.Integer({ description: 'The user that owns the API token used.' }) },
      { description: 'Who asked: the owner of the API token that created the ticket.' },
    ),
    secretRedacted: Type.Boolean({
      description:
        'True when an API token or the provider app secret was found in the request (subject, ' +
        'description, category, tags or `Idempotency-Key`) and replaced by `[REDACTED]`; ' +
        'regenerate that token (or rotate the secret).',
    }),
    assignee: Type.Union([Type.String(), Type.Null()], {
      description: 'Display name of the support agent working on it; null while unassigned.',
    }),
    firstResponseAt: NullableTime('When support first replied; null until then.'),
    solvedAt: NullableTime(
      'When support last set it `solved`; null unless solved or closed since.',
    ),
    commentCount: Type.Integer({ minimum: 0, description: 'Comments in the thread.' }),
    lastCommentAt: NullableTime('When the last comment was added; null when there is none.'),
    createdAt: Iso('ISO 8601, UTC.'),
    updatedAt: Iso('ISO 8601, UTC.'),
  },
  { title: 'Ticket', description: 'A support ticket.' },
);
export type Ticket = Static<typeof TicketSchema>;

/** Text of 1 to `max` characters with at least one non-space character. */
const Text = (max: number, description: string) =>
  Type.String({ minLength: 1, maxLength: max, pattern: '\\S', description });

export const CreateTicketBodySchema = Type.Object(
  {
    subject: Type.String({
      minLength: 1,
      maxLength: SUBJECT_MAX,
      pattern: PRINTABLE_TEXT_PATTERN,
      description:
        `Subject, 1–${SUBJECT_MAX} characters; no control characters nor bidirectional ` +
        'formatting characters (such as U+202E).',
    }),
    description: Text(DESCRIPTION_MAX, `Description, 1–${DESCRIPTION_MAX} characters.`),
    priority: Type.Optional(
      literals(TICKET_PRIORITIES, {
        default: 'normal',
        description: `${PRIORITY} Default normal.`,
      }),
    ),
    category: Type.Optional(Text(CATEGORY_MAX, `Category, 1–${CATEGORY_MAX} characters.`)),
    tags: Type.Optional(
      Type.Array(Text(TAG_MAX, `A tag, 1–${TAG_MAX} characters.`), {
        maxItems: TAGS_MAX,
        uniqueItems: true,
        description: `Up to ${TAGS_MAX} distinct tags.`,
      }),
    ),
  },
  {
    title: 'CreateTicketRequest',
    additionalProperties: false,
    examples: [
      {
        subject: 'Messages stuck in queued',
        description: 'Since 09:00 UTC our template messages stay queued; the connection is active.',
        priority: 'high',
        category: 'messaging',
        tags: ['whatsapp'],
      },
    ],
  },
);
export { Text as TextField };

export const IdempotencyHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: IDEMPOTENCY_KEY_MAX,
      description:
        `Optional, 1–${IDEMPOTENCY_KEY_MAX} characters (a UUID is a good choice). A retry with ` +
        'the same key and the same body within 24 hours returns the first response and creates ' +
        'nothing; the same key with a different body is refused with 409 `idempotency_conflict`.',
    }),
  ),
});
export const CreateTicketHeadersSchema = IdempotencyHeadersSchema;

/** The `limit` and `cursor` of a paged list's query (the tickets, a ticket's comments). */
export const PageQueryFields = {
  // Optional: the server fills the default (Ajv's useDefaults), so a client need not send it.
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: PAGE_LIMIT_MAX,
      default: PAGE_LIMIT_DEFAULT,
      description: `Page size, 1–${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_DEFAULT}).`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The `nextCursor` of the previous page; omit for the first page.',
    }),
  ),
};

export const ListTicketsQuerySchema = Type.Object({
  ...PageQueryFields,
  status: Type.Optional(literals(TICKET_STATUSES, { description: 'Only tickets in this status.' })),
});

export const TicketParamsSchema = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Ticket id (`tkt_…`).',
    examples: ['tkt_4QxY7dLm2Zp9'],
  }),
});

export const TicketEnvelopeSchema = Envelope(TicketSchema, { title: 'TicketEnvelope' });

export const TicketPageSchema = Page(TicketSchema, { items: 'Newest first.', title: 'TicketPage' });
