/**
 * Request and response schemas of a ticket's thread (`/support/tickets/{id}/comments`) and of
 * `PATCH /support/tickets/{id}`.
 *
 * @see docs/support.md "The API"
 */
import { Type, type Static } from 'typebox';
import { TICKET_PRIORITIES } from '../db/schema/support-tickets.ts';
import { CUSTOMER_STATUSES } from './ticket-lifecycle.ts';
import { PageQueryFields, TextField } from './ticket-schemas.ts';

export const COMMENT_MAX = 10_000;

export const CommentSchema = Type.Object(
  {
    id: Type.String({ pattern: '^cmt_[0-9A-Za-z]+$', description: 'Comment id (`cmt_…`).' }),
    ticketId: Type.String({ description: 'The ticket it belongs to.' }),
    body: Type.String({ description: 'The text; any secret found was replaced by `[REDACTED]`.' }),
    author: Type.Object(
      {
        type: Type.Enum(['customer', 'agent'], {
          description: '`customer`: someone of your portal; `agent`: Portico support.',
        }),
        userId: Type.Union([Type.Integer(), Type.Null()], {
          description: 'The user of your portal who wrote it; null for support.',
        }),
        name: Type.Union([Type.String(), Type.Null()], {
          description: "The support agent's display name; null for your own users.",
        }),
      },
      { description: 'Who wrote it.' },
    ),
    secretRedacted: Type.Boolean({
      description: 'True when a secret was found in the body or `Idempotency-Key` and redacted.',
    }),
    createdAt: Type.String({ format: 'date-time', description: 'ISO 8601, UTC.' }),
  },
  { title: 'TicketComment', description: 'One comment of a ticket’s thread.' },
);
export type TicketComment = Static<typeof CommentSchema>;

export const CreateCommentBodySchema = Type.Object(
  { body: TextField(COMMENT_MAX, `The comment, 1–${COMMENT_MAX} characters.`) },
  {
    title: 'CreateCommentRequest',
    additionalProperties: false,
    examples: [{ body: 'It works again since 10:15 UTC, thank you.' }],
  },
);
export type CreateCommentBody = Static<typeof CreateCommentBodySchema>;

export const CommentEnvelopeSchema = Type.Object(
  { success: Type.Literal(true), data: CommentSchema },
  { title: 'TicketCommentEnvelope' },
);

export const CommentPageSchema = Type.Object(
  {
    success: Type.Literal(true),
    data: Type.Object({
      items: Type.Array(CommentSchema, { description: 'Oldest first.' }),
      nextCursor: Type.Union([Type.String(), Type.Null()], {
        description: 'Pass as `cursor` to get the next page; null on the last page.',
      }),
    }),
  },
  { title: 'TicketCommentPage' },
);

export const ListCommentsQuerySchema = Type.Object({
  ...PageQueryFields,
});
export type ListCommentsQuery = Static<typeof ListCommentsQuerySchema>;

export const UpdateTicketBodySchema = Type.Object(
  {
    status: Type.Optional(
      Type.Enum(CUSTOMER_STATUSES, {
        description:
          '`closed` closes it (final); `open` reopens a `pending` or `solved` ticket. Any other ' +
          'move is 409 `conflict`, naming the current status.',
      }),
    ),
    priority: Type.Optional(
      Type.Enum(TICKET_PRIORITIES, {
        description: 'A new priority; only while the ticket is neither solved nor closed.',
      }),
    ),
  },
  {
    title: 'UpdateTicketRequest',
    additionalProperties: false,
    minProperties: 1,
    examples: [{ status: 'closed' }],
  },
);
export type UpdateTicketBody = Static<typeof UpdateTicketBodySchema>;
