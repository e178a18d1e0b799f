/**
 * `POST /messaging/messages/{id}/read` under the external API: mark a person's message read at
 * the provider and in Portico (read-receipts.ts); `POST /messaging/messages/{id}/typing`: the
 * same, with the typing indicator shown to the person. Thin: principal → service → envelope.
 *
 * @see docs/messaging.md "Read receipts"
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../api-kit/request-principal.ts';
import { Envelope, errorResponses, Iso, typed } from '../../api-kit/schema-kit.ts';
import { MessageParamsSchema } from '../store/messages-schemas.ts';
import type { ReadReceipts } from './read-receipts.ts';

/** What both answers say: the message, and when Portico recorded it read. */
const ReadFields = {
  id: Type.String({ description: 'The inbound message (`msg_…`).' }),
  readAt: Iso('When Portico recorded it read (the first time, on a repeat).'),
};

const ReadReceiptSchema = Envelope(Type.Object(ReadFields), { title: 'ReadReceipt' });

const TypingIndicatorSchema = Envelope(
  Type.Object({
    ...ReadFields,
    typingUntil: Iso(
      'When the person stops seeing the indicator at the latest: 25 seconds on; a reply ends ' +
        'it sooner.',
    ),
  }),
  { title: 'TypingIndicator' },
);

/** The errors of both routes: the message is not the portal's inbound one, or the provider failed. */
const ReadErrors = errorResponses([
  'invalid_request',
  'not_found',
  'not_connected',
  'provider_error',
  'provider_timeout',
]);

/** The route plugin; pass it in the external API's `routes` option. */
export function readReceiptsRoutes(receipts: Pick<ReadReceipts, 'markRead' | 'showTyping'>) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    api.post(
      '/messaging/messages/:id/read',
      {
        config: { requiredScopes: ['messaging:send'] as const },
        schema: {
          summary: 'Mark an inbound message read',
          description:
            'Sends the provider a read receipt for a message a person sent (they see blue ' +
            'ticks on it and on every earlier message of the thread) and records it: the ' +
            "message and the thread's earlier unread messages get `readAt`, the conversation's " +
            'unread count goes down by as many. Repeating it changes nothing and returns the ' +
            "first `readAt`. An outbound message's id, or another portal's, is 404.",
          tags: ['Messaging'],
          params: MessageParamsSchema,
          response: {
            200: { ...ReadReceiptSchema, description: 'The message is read.' },
            ...ReadErrors,
          },
        },
      },
      async (request) => {
        const receipt = await receipts.markRead(principalOf(request).portalId, request.params.id);
        return {
          success: true as const,
          data: { id: receipt.id, readAt: receipt.readAt.toISOString() },
        };
      },
    );
    api.post(
      '/messaging/messages/:id/typing',
      {
        config: { requiredScopes: ['messaging:send'] as const },
        schema: {
          summary: 'Show the typing indicator',
          description:
            'Tells the person who sent this message that the business is typing (WhatsApp ' +
            'shows it until the business replies or 25 seconds pass) and marks the message ' +
            'read, as the provider does with it: blue ticks, `readAt` on it and on the ' +
            "thread's earlier unread messages. Send it only when a reply follows. Repeating it " +
            "shows the indicator again. An outbound message's id, or another portal's, is 404.",
          tags: ['Messaging'],
          params: MessageParamsSchema,
          response: {
            200: { ...TypingIndicatorSchema, description: 'The person sees the business typing.' },
            ...ReadErrors,
          },
        },
      },
      async (request) => {
        const shown = await receipts.showTyping(principalOf(request).portalId, request.params.id);
        return {
          success: true as const,
          data: {
            id: shown.id,
            readAt: shown.readAt.toISOString(),
            typingUntil: shown.typingUntil.toISOString(),
          },
        };
      },
    );
  };
}
