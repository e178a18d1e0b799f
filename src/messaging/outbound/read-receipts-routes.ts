/**
 * `POST /messaging/messages/{id}/read` under the external API: mark a person's message read at
 * the provider and in Portico (read-receipts.ts). Thin: principal → service → envelope.
 *
 * @see docs/messaging.md "Read receipts"
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../api-kit/request-principal.ts';
import { Envelope, errorResponses, Iso, typed } from '../../api-kit/schema-kit.ts';
import { MessageParamsSchema } from '../store/messages-schemas.ts';
import type { ReadReceipts } from './read-receipts.ts';

const ReadReceiptSchema = Envelope(
  Type.Object({
    id: Type.String({ description: 'The inbound message (`msg_…`).' }),
    readAt: Iso('When Portico recorded it read (the first time, on a repeat).'),
  }),
  { title: 'ReadReceipt' },
);

/** The route plugin; pass it in the external API's `routes` option. */
export function readReceiptsRoutes(receipts: Pick<ReadReceipts, 'markRead'>) {
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
            ...errorResponses([
              'invalid_request',
              'not_found',
              'not_connected',
              'provider_error',
              'provider_timeout',
            ]),
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
  };
}
