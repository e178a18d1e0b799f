/**
 * Request and response schemas of `GET /messaging/conversations` (validation, types and
 * OpenAPI from one definition).
 *
 * @see docs/messaging.md "Conversations"
 */
import { Type, type Static } from 'typebox';
import { Iso, Nullable, Page } from '../../api-kit/schema-kit.ts';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX } from '../store/messages-schemas.ts';

/** The preview's length bound (characters, an ellipsis included). */
export const PREVIEW_MAX = 80;

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
  },
  { additionalProperties: false },
);
export type ListConversationsQuery = Static<typeof ListConversationsQuerySchema>;
