/**
 * `GET /messaging/conversations` under the external API: parse → service → shape.
 *
 * @see docs/messaging.md "Conversations"
 */
import { principalOf } from '../../api-kit/request-principal.ts';
import { errorResponses, type ApiInstance } from '../../api-kit/schema-kit.ts';
import type { ConversationsService } from './conversations-service.ts';
import { ConversationPageSchema, ListConversationsQuerySchema } from './conversations-schemas.ts';

/** The conversations list; registered by messages-routes.ts's plugin. */
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
          'count and `windowExpiresAt` (null when the 24-hour service window is closed: ' +
          'templates only). Filters: `unread=true`, `window=open`.',
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
}
