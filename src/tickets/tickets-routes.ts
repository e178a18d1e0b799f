/**
 * `/support/tickets` under the external API: parse → service → shape the response.
 *
 * @see docs/support.md
 */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../api-kit/request-principal.ts';
import { errorResponses, typed } from '../api-kit/schema-kit.ts';
import {
  CreateTicketBodySchema,
  CreateTicketHeadersSchema,
  ListTicketsQuerySchema,
  PAGE_LIMIT_DEFAULT,
  TicketEnvelopeSchema,
  TicketPageSchema,
  TicketParamsSchema,
} from './ticket-schemas.ts';
import { registerThreadRoutes } from './ticket-thread-routes.ts';
import type { CreateTicketInput, TicketsService, TicketStatus } from './tickets-service.ts';

const TAGS = ['Support tickets'];

/** The route plugin; pass it in the external API's `routes` option. */
export function ticketsRoutes(tickets: TicketsService) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    api.post(
      '/support/tickets',
      {
        config: { requiredScopes: ['support:tickets:write'] },
        schema: {
          summary: 'Create a support ticket',
          description:
            'Opens a ticket for the portal of the token, requested by the token owner. Portico ' +
            'API tokens and the provider app secret found in `subject` or `description` are ' +
            'replaced by `[REDACTED]` before anything is stored (`secretRedacted: true`); ' +
            'regenerate a token you pasted. Send an `Idempotency-Key` to retry safely.',
          tags: TAGS,
          headers: CreateTicketHeadersSchema,
          body: CreateTicketBodySchema,
          response: {
            201: {
              ...TicketEnvelopeSchema,
              description:
                'The ticket. A replay of an earlier request with the same Idempotency-Key ' +
                'carries the header `Idempotent-Replayed: true`.',
            },
            ...errorResponses([
              'invalid_request',
              'idempotency_conflict',
              'payload_too_large',
              'unsupported_media_type',
            ]),
          },
        },
      },
      async (request, reply) => {
        const result = await tickets.createTicket({
          principal: principalOf(request),
          input: request.body as CreateTicketInput,
          idempotencyKey: request.headers['idempotency-key'],
          requestId: request.id,
        });
        if (result.replayed) reply.header('idempotent-replayed', 'true');
        // A replay repeats the stored first response, and only a 201 is ever stored.
        return reply.code(result.status as 201).send(result.body);
      },
    );

    api.get(
      '/support/tickets',
      {
        config: { requiredScopes: ['support:tickets:read'] },
        schema: {
          summary: 'List support tickets',
          description:
            "The portal's tickets, newest first, a page at a time. Pass `nextCursor` back as " +
            '`cursor` for the next page until it is null; tickets created meanwhile appear on ' +
            'a new first page, never as duplicates or gaps in the pages being read.',
          tags: TAGS,
          querystring: ListTicketsQuerySchema,
          response: {
            200: { ...TicketPageSchema, description: 'A page of tickets, newest first.' },
            ...errorResponses(['invalid_request']),
          },
        },
      },
      async (request) => {
        const { limit, cursor, status } = request.query;
        const page = await tickets.listTickets(principalOf(request), {
          // Ajv filled the default; the fallback only satisfies the type.
          limit: limit ?? PAGE_LIMIT_DEFAULT,
          cursor,
          status: status as TicketStatus | undefined,
        });
        return { success: true as const, data: page };
      },
    );

    api.get(
      '/support/tickets/:id',
      {
        config: { requiredScopes: ['support:tickets:read'] },
        schema: {
          summary: 'Read a support ticket',
          description:
            "One ticket of the token's portal. Any other id, another portal's included, is 404.",
          tags: TAGS,
          params: TicketParamsSchema,
          response: {
            200: { ...TicketEnvelopeSchema, description: 'The ticket.' },
            ...errorResponses(['invalid_request', 'not_found']),
          },
        },
      },
      async (request) => {
        const ticket = await tickets.getTicket(principalOf(request), request.params.id);
        return { success: true as const, data: ticket };
      },
    );

    registerThreadRoutes(api, tickets);
  };
}
