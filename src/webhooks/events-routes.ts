/**
 * `/events` and `/webhooks/endpoints/{id}/…` under the external API: parse → service → shape
 * the response. All need `events:read`: a replay sends only events that scope can read, to an
 * endpoint the portal's administrator registered, and changes no data
 * (docs/decisions/0039-event-replay.md).
 *
 * @see docs/how-to/catch-up-on-missed-events.md
 */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../api-kit/request-principal.ts';
import { errorResponses, typed, type ApiInstance } from '../api-kit/schema-kit.ts';
import { AppError } from '../platform/errors.ts';
import {
  DeliveriesQuerySchema,
  DeliveryPageSchema,
  EndpointParamsSchema,
  EVENTS_LIMIT_DEFAULT,
  EventLogPageSchema,
  EventsQuerySchema,
  HISTORY_LIMIT_DEFAULT,
  ReplayBodySchema,
  ReplayEnvelopeSchema,
  ReplayParamsSchema,
} from './event-log-schemas.ts';
import { EVENT_TYPES, isEventType } from './webhook-events.ts';
import type { WebhooksService } from './webhooks-service.ts';

const SCOPES = { requiredScopes: ['events:read'] as const };

/** `a,b` → `['a', 'b']`, each a known event type. @throws AppError `invalid_request`. */
function typesParam(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const types = [...new Set(value.split(','))];
  const unknown = types.filter((t) => !isEventType(t));
  if (unknown.length > 0) {
    const message = `unknown event type(s) ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}`;
    throw new AppError('invalid_request', `The types ${message}.`, {
      details: [{ field: 'querystring.types', message }],
    });
  }
  return types;
}

type Reads = Pick<WebhooksService, 'readEvents' | 'replay' | 'getReplay' | 'deliveryHistory'>;

/** The route plugin; pass it in the external API's `routes` option. */
export function eventsRoutes(webhooks: Reads) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    logRoute(api, webhooks);
    replayRoutes(api, webhooks);
    historyRoute(api, webhooks);
  };
}

/** `GET /events`. */
function logRoute(api: ApiInstance, webhooks: Reads): void {
  api.get(
    '/events',
    {
      config: SCOPES,
      schema: {
        summary: 'Read the event log',
        description:
          'Every event Portico emitted to the portal in the last `EVENTS_RETENTION_DAYS` days ' +
          '(30 by default), subscribed endpoint or not: the same `id` (the `webhook-id`), ' +
          '`type`, `timestamp` and `data` as the webhook. In one strict order, the same for ' +
          'every reader: poll with `since` set to the last `nextCursor` and you get every ' +
          'event exactly once, also while several instances write at once. An event is ' +
          'listed once its transaction and every older one have ended (usually milliseconds).',
        tags: ['Events'],
        querystring: EventsQuerySchema,
        response: {
          200: { ...EventLogPageSchema, description: 'The events after `since`, in order.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => {
      const { since, types, limit } = request.query;
      const page = await webhooks.readEvents(principalOf(request).portalId, {
        since,
        types: typesParam(types),
        limit: limit ?? EVENTS_LIMIT_DEFAULT,
      });
      return { success: true as const, data: page };
    },
  );
}

/** A replay, and its progress. */
function replayRoutes(api: ApiInstance, webhooks: Reads): void {
  api.post(
    '/webhooks/endpoints/:id/replay',
    {
      config: SCOPES,
      schema: {
        summary: 'Replay events to an endpoint',
        description:
          'Queues the events of a time range (`since`, `until`) or a cursor range (`after`, ' +
          '`upTo`) again to the endpoint — optionally only some `types`, optionally only ' +
          'those that did not reach it (`failedOnly`). Each is a new delivery with the ' +
          "event's original `webhook-id` and payload, signed with the endpoint's current " +
          'secret, so a receiver that deduplicates on `webhook-id` is safe. Deliveries start ' +
          'at `WEBHOOK_REPLAY_PER_SECOND` a second (10 by default), oldest first, and are ' +
          'retried on the usual schedule; follow them with the replay’s `progress`. At most ' +
          '10 000 events per replay (`continueAfter` says where to go on).',
        tags: ['Webhooks'],
        params: EndpointParamsSchema,
        body: ReplayBodySchema,
        response: {
          202: { ...ReplayEnvelopeSchema, description: 'The replay, queued.' },
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
    async (request, reply) => {
      const principal = principalOf(request);
      const replay = await webhooks.replay(principal.portalId, request.params.id, request.body, {
        actor: { type: 'user', id: String(principal.userId) },
        requestId: request.id,
      });
      return reply.code(202).send({ success: true as const, data: replay });
    },
  );

  api.get(
    '/webhooks/endpoints/:id/replays/:replayId',
    {
      config: SCOPES,
      schema: {
        summary: 'Read a replay’s progress',
        description: 'The replay with its deliveries counted by status now.',
        tags: ['Webhooks'],
        params: ReplayParamsSchema,
        response: {
          200: { ...ReplayEnvelopeSchema, description: 'The replay.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => {
      const { id, replayId } = request.params;
      const replay = await webhooks.getReplay(principalOf(request).portalId, id, replayId);
      return { success: true as const, data: replay };
    },
  );
}

/** An endpoint's delivery history. */
function historyRoute(api: ApiInstance, webhooks: Reads): void {
  api.get(
    '/webhooks/endpoints/:id/deliveries',
    {
      config: SCOPES,
      schema: {
        summary: 'List an endpoint’s deliveries',
        description:
          "The endpoint's delivery history, newest first, a page at a time, kept as long as " +
          'its events; filter by `status` and `types`.',
        tags: ['Webhooks'],
        params: EndpointParamsSchema,
        querystring: DeliveriesQuerySchema,
        response: {
          200: { ...DeliveryPageSchema, description: 'A page of deliveries, newest first.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => {
      const { limit, cursor, status, types } = request.query;
      const page = await webhooks.deliveryHistory(
        principalOf(request).portalId,
        request.params.id,
        { limit: limit ?? HISTORY_LIMIT_DEFAULT, cursor, status, types: typesParam(types) },
      );
      return { success: true as const, data: page };
    },
  );
}
