/**
 * `/messaging/conversations` under the external API: the list, one conversation, its change
 * (status, snooze, assignee, labels) and its private notes. Parse → service → shape.
 *
 * @see docs/messaging.md "Conversations", "Working a conversation"
 */
import { principalOf } from '../../api-kit/request-principal.ts';
import { errorResponses, type ApiInstance } from '../../api-kit/schema-kit.ts';
import { AppError } from '../../platform/errors.ts';
import type { ConversationsService } from './conversations-service.ts';
import {
  ConversationEnvelopeSchema,
  ConversationPageSchema,
  ConversationParamsSchema,
  ConversationUpdateSchema,
  ListConversationsQuerySchema,
  ListNotesQuerySchema,
  NoteCreateSchema,
  NoteEnvelopeSchema,
  NotePageSchema,
} from './conversations-schemas.ts';

const CONVERSATION_ID = /^cnv_[0-9A-Za-z]{1,60}$/;
const notFound = () => new AppError('not_found', 'No conversation with this id.');

/** The id of the path, or `not_found` when it cannot be one (never a database read). */
function idOf(params: { id: string }): string {
  if (!CONVERSATION_ID.test(params.id)) throw notFound();
  return params.id;
}

/** The conversations' routes; registered by messages-routes.ts's plugin. */
export function conversationRoutes(api: ApiInstance, conversations: ConversationsService): void {
  api.get(
    '/messaging/conversations',
    {
      config: { requiredScopes: ['messaging:reports:read'] as const },
      schema: {
        summary: 'List conversations',
        description:
          'One row per contact and business number, newest activity first, a page at a time: ' +
          'the contact, the last message (either direction) with a short preview, the unread ' +
          'count, `windowExpiresAt` (null when the 24-hour service window is closed: ' +
          'templates only), and how the team works it (status, assignee, labels). Filters: ' +
          '`unread=true`, `window=open`, `status`, `assigneeId` (`usr_…` or `none`), `label`.',
        tags: ['Messaging'],
        querystring: ListConversationsQuerySchema,
        response: {
          200: { ...ConversationPageSchema, description: 'A page, newest activity first.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await conversations.listConversations(principalOf(request), request.query),
    }),
  );

  api.get(
    '/messaging/conversations/:id',
    {
      config: { requiredScopes: ['messaging:reports:read'] as const },
      schema: {
        summary: 'Get a conversation',
        description: 'One conversation, as the list shows it.',
        tags: ['Messaging'],
        params: ConversationParamsSchema,
        response: {
          200: { ...ConversationEnvelopeSchema, description: 'The conversation.' },
          ...errorResponses(['not_found']),
        },
      },
    },
    async (request) => {
      const c = await conversations.getConversation(principalOf(request), idOf(request.params));
      if (!c) throw notFound();
      return { success: true as const, data: c };
    },
  );

  api.patch(
    '/messaging/conversations/:id',
    {
      config: { requiredScopes: ['messaging:conversations:write'] as const },
      schema: {
        summary: 'Update a conversation',
        description:
          'Change its status (`snoozed` needs `snoozedUntil`, in the future), its assignee (a ' +
          'member of the portal, `usr_…`, or null) or its labels (the whole set). Fields left ' +
          'out stay as they are; a change announces `conversation.status_changed`, ' +
          '`conversation.assigned` or `conversation.labelled`; a reassignment is audited. ' +
          'A new message from the person reopens a resolved or snoozed conversation.',
        tags: ['Messaging'],
        params: ConversationParamsSchema,
        body: ConversationUpdateSchema,
        response: {
          200: { ...ConversationEnvelopeSchema, description: 'The conversation as it is now.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await conversations.updateConversation(
        principalOf(request),
        idOf(request.params),
        request.body,
        request.id,
      ),
    }),
  );

  api.post(
    '/messaging/conversations/:id/notes',
    {
      config: { requiredScopes: ['messaging:conversations:write'] as const },
      schema: {
        summary: 'Add a private note',
        description:
          'A note in the thread for the portal’s members: never sent to the person, sealed at ' +
          'rest, announced only as `conversation.note_added`.',
        tags: ['Messaging'],
        params: ConversationParamsSchema,
        body: NoteCreateSchema,
        response: {
          201: { ...NoteEnvelopeSchema, description: 'The note.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request, reply) => {
      const note = await conversations.notes.add(
        principalOf(request),
        idOf(request.params),
        request.body.body,
      );
      return reply.code(201).send({ success: true as const, data: note });
    },
  );

  api.get(
    '/messaging/conversations/:id/notes',
    {
      config: { requiredScopes: ['messaging:notes:read'] as const },
      schema: {
        summary: 'List private notes',
        description: 'The conversation’s private notes, newest first, a page at a time.',
        tags: ['Messaging'],
        params: ConversationParamsSchema,
        querystring: ListNotesQuerySchema,
        response: {
          200: { ...NotePageSchema, description: 'A page, newest first.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await conversations.notes.list(
        principalOf(request),
        idOf(request.params),
        request.query,
      ),
    }),
  );
}
