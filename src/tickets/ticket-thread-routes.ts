/**
 * A ticket's thread and the customer's changes under the external API:
 * `GET|POST /support/tickets/{id}/comments` and `PATCH /support/tickets/{id}`.
 *
 * @see docs/support.md "The API"
 */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../api-kit/request-principal.ts';
import { errorResponses } from '../platform/error-envelope.ts';
import {
  IdempotencyHeadersSchema,
  PAGE_LIMIT_DEFAULT,
  TicketEnvelopeSchema,
  TicketParamsSchema,
} from './ticket-schemas.ts';
import {
  CommentEnvelopeSchema,
  CommentPageSchema,
  CreateCommentBodySchema,
  ListCommentsQuerySchema,
  UpdateTicketBodySchema,
  type CreateCommentBody,
  type ListCommentsQuery,
  type UpdateTicketBody,
} from './ticket-thread-schemas.ts';
import type { TicketThreadService } from './ticket-thread-service.ts';

const TAGS = ['Support tickets'];

/** Registered by tickets-routes.ts beside the ticket routes. */
export function registerThreadRoutes(api: FastifyInstance, thread: TicketThreadService): void {
  api.get<{ Params: { id: string }; Querystring: ListCommentsQuery }>(
    '/support/tickets/:id/comments',
    {
      config: { requiredScopes: ['support:tickets:read'] },
      schema: {
        summary: 'List the comments of a support ticket',
        description:
          "The ticket's thread, oldest first, a page at a time (`nextCursor` as `cursor`). " +
          "Support's comments carry the agent's display name. Another portal's ticket is 404.",
        tags: TAGS,
        params: TicketParamsSchema,
        querystring: ListCommentsQuerySchema,
        response: {
          200: { ...CommentPageSchema, description: 'A page of comments, oldest first.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => {
      const page = await thread.listComments(principalOf(request), request.params.id, {
        limit: request.query.limit ?? PAGE_LIMIT_DEFAULT,
        cursor: request.query.cursor,
      });
      return { success: true as const, data: page };
    },
  );

  api.post<{
    Params: { id: string };
    Body: CreateCommentBody;
    Headers: { 'idempotency-key'?: string };
  }>(
    '/support/tickets/:id/comments',
    {
      config: { requiredScopes: ['support:tickets:write'] },
      schema: {
        summary: 'Comment on a support ticket',
        description:
          'Adds your comment to the thread. A `pending` or `solved` ticket reopens (`open`); a ' +
          'closed ticket takes no comments (409 `conflict`). Secrets are redacted as in a new ' +
          'ticket. Send an `Idempotency-Key` to retry safely.',
        tags: TAGS,
        params: TicketParamsSchema,
        headers: IdempotencyHeadersSchema,
        body: CreateCommentBodySchema,
        response: {
          201: {
            ...CommentEnvelopeSchema,
            description: 'The comment. A replay carries the header `Idempotent-Replayed: true`.',
          },
          ...errorResponses([
            'invalid_request',
            'not_found',
            'conflict',
            'idempotency_conflict',
            'payload_too_large',
            'unsupported_media_type',
          ]),
        },
      },
    },
    async (request, reply) => {
      const result = await thread.addComment({
        principal: principalOf(request),
        ticketId: request.params.id,
        body: request.body.body,
        idempotencyKey: request.headers['idempotency-key'],
        requestId: request.id,
      });
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(result.status).send(result.body);
    },
  );

  api.patch<{ Params: { id: string }; Body: UpdateTicketBody }>(
    '/support/tickets/:id',
    {
      config: { requiredScopes: ['support:tickets:write'] },
      schema: {
        summary: 'Update a support ticket',
        description:
          'Close it (`status: closed`, final), reopen a `pending` or `solved` one ' +
          '(`status: open`), or change its priority while it is not solved. A move the ' +
          'lifecycle does not allow is 409 `conflict`, naming the current status.',
        tags: TAGS,
        params: TicketParamsSchema,
        body: UpdateTicketBodySchema,
        response: {
          200: { ...TicketEnvelopeSchema, description: 'The ticket after the change.' },
          ...errorResponses([
            'invalid_request',
            'not_found',
            'conflict',
            'payload_too_large',
            'unsupported_media_type',
          ]),
        },
      },
    },
    async (request) => {
      const ticket = await thread.updateTicket(
        principalOf(request),
        request.params.id,
        request.body,
      );
      return { success: true as const, data: ticket };
    },
  );
}
