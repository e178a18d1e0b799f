/**
 * Request and response schemas of `/messaging/conversations`: the list, one conversation, its
 * change (status, snooze, assignee, labels) and its private notes (validation, types and OpenAPI
 * from one definition).
 *
 * @see docs/messaging.md "Conversations"
 */
import { Type, type Static } from 'typebox';
import { Envelope, Iso, Nullable, Page } from '../../api-kit/schema-kit.ts';
import { CONVERSATION_STATUSES } from '../../db/schema/conversations.ts';
import { PRINTABLE_TEXT_PATTERN } from '../../platform/plain-text.ts';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../store/messages-schemas.ts';

/** The preview's length bound (characters, an ellipsis included). */
export const PREVIEW_MAX = 80;

/** Most labels on one conversation, and a label's length bound (characters). */
export const LABELS_MAX = 20;
export const LABEL_MAX = 50;
/** A note's length bound (characters). */
export const NOTE_MAX = 4096;

/** A member as the API names them: `usr_` and the user id. */
export const MEMBER_ID_PATTERN = '^usr_[1-9][0-9]{0,9}$';

const StatusSchema = Type.Enum(CONVERSATION_STATUSES, {
  description:
    '`open` (to be worked), `pending` (waiting on someone), `resolved` (done; a new message ' +
    'from the person reopens it), `snoozed` (hidden until `snoozedUntil` or a new message).',
});
const MemberId = Type.String({
  pattern: MEMBER_ID_PATTERN,
  description: 'A member of the portal (`usr_…`, as `GET /auth/verify` names users).',
});
const Label = Type.String({
  minLength: 1,
  maxLength: LABEL_MAX,
  pattern: PRINTABLE_TEXT_PATTERN,
  description: `A label, 1–${LABEL_MAX} characters (trimmed).`,
});

export const ConversationSchema = Type.Object(
  {
    id: Type.String({ description: 'Conversation id (`cnv_…`).' }),
    contact: Type.Object(
      {
        id: Type.String({ description: 'Contact id (`ctc_…`).' }),
        name: Nullable(
          Type.String({
            description:
              'First and last name when the contact has one, else the WhatsApp profile name ' +
              'or username.',
          }),
        ),
        phone: Nullable(
          Type.String({ description: 'E.164; null for a person known only by `waUserId`.' }),
        ),
        waUserId: Nullable(
          Type.String({ description: "The person's business-scoped user id (BSUID)." }),
        ),
        username: Nullable(Type.String({ description: "The person's WhatsApp username." })),
      },
      { description: 'The person.' },
    ),
    phoneNumberId: Type.String({ description: 'The business phone number (its phone number id).' }),
    lastMessage: Type.Object(
      {
        id: Type.String({ description: 'Message id (`msg_…`), either direction.' }),
        direction: Type.Enum(['inbound', 'outbound'] as const),
        type: Type.String({ description: 'The message type (`text`, `image`, `template`, …).' }),
        preview: Nullable(
          Type.String({
            description: `Up to ${PREVIEW_MAX} characters of its text, caption or kind; null once its content expired or was erased.`,
          }),
        ),
        at: Iso('When it was sent or received.'),
      },
      { description: 'The newest message, either direction.' },
    ),
    unreadCount: Type.Integer({ minimum: 0, description: 'Inbound messages not read yet.' }),
    windowExpiresAt: Nullable(
      Iso('When the 24-hour service window closes; null when it is closed (templates only).'),
    ),
    lastActivityAt: Iso('The newest message’s time (the order of the list).'),
    status: StatusSchema,
    snoozedUntil: Nullable(Iso('When the snooze ends (status `snoozed` only).')),
    assigneeId: Nullable(MemberId, { description: 'The member working it; null: unassigned.' }),
    labels: Type.Array(Type.String(), {
      description: 'The team’s labels (distinct from the contact’s tags), sorted.',
    }),
  },
  {
    title: 'Conversation',
    description: 'The messages between one contact and one business number.',
  },
);
export type Conversation = Static<typeof ConversationSchema>;

export const ConversationPageSchema = Page(ConversationSchema, {
  items: 'Newest activity first.',
  title: 'ConversationPage',
});

export const ListConversationsQuerySchema = Type.Object(
  {
    limit: Type.Integer({
      minimum: 1,
      maximum: PAGE_LIMIT_MAX,
      default: PAGE_LIMIT_DEFAULT,
      description: `Page size, 1–${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_DEFAULT}).`,
    }),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'The previous page’s nextCursor.' }),
    ),
    unread: Type.Optional(
      Type.Boolean({ description: '`true`: only conversations with unread messages.' }),
    ),
    window: Type.Optional(
      Type.Enum(['open'] as const, {
        description: '`open`: only conversations whose service window is open (free text allowed).',
      }),
    ),
    status: Type.Optional(StatusSchema),
    assigneeId: Type.Optional(
      Type.String({
        pattern: `${MEMBER_ID_PATTERN}|^none$`,
        description: 'Only those assigned to this member (`usr_…`), or `none`: unassigned.',
      }),
    ),
    label: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: LABEL_MAX,
        description: 'Only those with this label.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ListConversationsQuery = Static<typeof ListConversationsQuerySchema>;

export const ConversationEnvelopeSchema = Envelope(ConversationSchema, {
  title: 'ConversationResponse',
});

export const ConversationParamsSchema = Type.Object({
  id: Type.String({
    maxLength: 100,
    description: 'Conversation id (`cnv_…`).',
    examples: ['cnv_4hT2kPq9Wm'],
  }),
});

export const ConversationUpdateSchema = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    snoozedUntil: Type.Optional(
      Iso('With `status: "snoozed"`: when the snooze ends, in the future (at most a year).'),
    ),
    assigneeId: Type.Optional(
      Nullable(MemberId, { description: 'A member of the portal (`usr_…`), or null: nobody.' }),
    ),
    labels: Type.Optional(
      Type.Array(Label, {
        maxItems: LABELS_MAX,
        description: `The whole set of labels, up to ${LABELS_MAX} (duplicates dropped).`,
      }),
    ),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    title: 'ConversationUpdate',
    description: 'What to change; fields left out stay as they are.',
    examples: [{ status: 'pending', assigneeId: 'usr_7', labels: ['billing', 'vip'] }],
  },
);
export type ConversationUpdate = Static<typeof ConversationUpdateSchema>;

export const NoteSchema = Type.Object(
  {
    id: Type.String({ description: 'Note id (`nte_…`).' }),
    conversationId: Type.String({ description: 'Conversation id (`cnv_…`).' }),
    authorId: Nullable(MemberId, { description: 'Who wrote it; null once that user is gone.' }),
    body: Type.String({ description: 'The note, as written.' }),
    createdAt: Iso('When it was written.'),
  },
  {
    title: 'ConversationNote',
    description: 'A private note: seen by the portal’s members only, never sent to the person.',
  },
);
export type Note = Static<typeof NoteSchema>;

export const NoteCreateSchema = Type.Object(
  {
    body: Type.String({
      minLength: 1,
      maxLength: NOTE_MAX,
      pattern: '\\S',
      description: `The note, 1–${NOTE_MAX} characters, not only white space.`,
    }),
  },
  {
    additionalProperties: false,
    title: 'ConversationNoteCreate',
    examples: [{ body: 'Called back on Monday: the refund is on its way.' }],
  },
);

export const NoteEnvelopeSchema = Envelope(NoteSchema, { title: 'ConversationNoteResponse' });
export const NotePageSchema = Page(NoteSchema, {
  items: 'Newest first.',
  title: 'ConversationNotePage',
});
export const ListNotesQuerySchema = Type.Object(
  {
    limit: Type.Integer({
      minimum: 1,
      maximum: PAGE_LIMIT_MAX,
      default: PAGE_LIMIT_DEFAULT,
      description: `Page size, 1–${PAGE_LIMIT_MAX} (default ${PAGE_LIMIT_DEFAULT}).`,
    }),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'The previous page’s nextCursor.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListNotesQuery = Static<typeof ListNotesQuerySchema>;
