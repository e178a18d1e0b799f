/**
 * Request and response schemas of `/events` and `/webhooks/endpoints/{id}/…` (validation, types
 * and OpenAPI from one definition), with an example for each named schema.
 *
 * @see docs/reference/external-api.md
 * @see docs/how-to/catch-up-on-missed-events.md
 */
import { Type } from 'typebox';
import { Envelope, Iso, Nullable, Page } from '../api-kit/schema-kit.ts';
import { DELIVERY_STATUSES } from './delivery-history.ts';

export const EVENTS_LIMIT_MAX = 1000;
export const EVENTS_LIMIT_DEFAULT = 100;
export const HISTORY_LIMIT_MAX = 100;
export const HISTORY_LIMIT_DEFAULT = 50;

const CURSOR_EXAMPLE = 'NzU4OTIuMTIz';

/** A comma-separated list of event types (`message.status,ticket.created`). */
const TypesParam = Type.String({
  minLength: 1,
  maxLength: 1000,
  pattern: '^[a-z_.]+(,[a-z_.]+)*$',
  description:
    'Only events of these types, comma-separated (`message.status,ticket.created`); every ' +
    'type is named in docs/reference/webhook-events.md.',
});

export const LoggedEventSchema = Type.Object(
  {
    id: Type.String({
      pattern: '^evt_[0-9A-Za-z]+$',
      description: "The event's id: the `webhook-id` of every delivery of it.",
    }),
    type: Type.String({ description: 'The event type (docs/reference/webhook-events.md).' }),
    timestamp: Iso('When the change happened: the webhook payload’s `timestamp`.'),
    data: Nullable(Type.Object({}, { additionalProperties: true }), {
      description:
        "The webhook payload's `data`, exactly as delivered; null only when the stored data " +
        'can no longer be decrypted (its key was removed).',
    }),
    cursor: Type.String({
      description: 'The cursor just after this event: pass it as `since` to read what follows.',
    }),
  },
  {
    title: 'Event',
    description: 'One event of the log: the webhook payload with its `webhook-id`.',
    examples: [
      {
        id: 'evt_4fQ9xK2mLp7Rt3Vb',
        type: 'ticket.created',
        timestamp: '2026-11-23T18:20:00.000Z',
        data: { ticketId: 'tkt_4QxY', priority: 'normal', createdAt: '2026-11-23T18:20:00.000Z' },
        cursor: CURSOR_EXAMPLE,
      },
    ],
  },
);

export const EventLogPageSchema = Envelope(
  Type.Object({
    items: Type.Array(LoggedEventSchema, { description: 'In the log’s order, oldest first.' }),
    nextCursor: Type.String({
      description:
        'Pass as `since` on the next call: the cursor of the last event, or the one given when ' +
        'no event followed it. Never null: keep it and poll from it.',
    }),
    hasMore: Type.Boolean({
      description: 'More events can be read now: call again at once with `nextCursor`.',
    }),
  }),
  {
    title: 'EventLogPage',
    examples: [
      {
        success: true,
        data: {
          items: [
            {
              id: 'evt_4fQ9xK2mLp7Rt3Vb',
              type: 'ticket.created',
              timestamp: '2026-11-23T18:20:00.000Z',
              data: { ticketId: 'tkt_4QxY', priority: 'normal' },
              cursor: CURSOR_EXAMPLE,
            },
          ],
          nextCursor: CURSOR_EXAMPLE,
          hasMore: false,
        },
      },
    ],
  },
);

export const EventsQuerySchema = Type.Object({
  since: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'A cursor from an earlier answer (`nextCursor`, or an event’s `cursor`): the events ' +
        'after it. Absent: from the oldest event kept.',
    }),
  ),
  types: Type.Optional(TypesParam),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: EVENTS_LIMIT_MAX,
      default: EVENTS_LIMIT_DEFAULT,
      description: `Events at most, 1–${EVENTS_LIMIT_MAX}.`,
    }),
  ),
});

const EndpointId = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'Endpoint id (`ep_…`).',
  examples: ['ep_3fTn7QpX1vWs'],
});

export const EndpointParamsSchema = Type.Object({ id: EndpointId });

export const ReplayParamsSchema = Type.Object({
  id: EndpointId,
  replayId: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Replay id (`rpl_…`).',
    examples: ['rpl_8cXa2MdK6uHy'],
  }),
});

export const ReplayBodySchema = Type.Object(
  {
    since: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Time range: events created at or after this instant (ISO 8601).',
      }),
    ),
    until: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Time range: events created before this instant; default now.',
      }),
    ),
    after: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Cursor range: events after this cursor of `GET /events`.',
      }),
    ),
    upTo: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Cursor range: events up to this cursor, included; default the latest.',
      }),
    ),
    types: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 50,
        uniqueItems: true,
        description: 'Only these types, each one the endpoint subscribes to; default all of them.',
      }),
    ),
    failedOnly: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Only the events that did not reach the endpoint: none of their deliveries to it ' +
          'succeeded or is still being retried (it failed, or the endpoint was disabled then).',
      }),
    ),
  },
  {
    title: 'ReplayRequest',
    additionalProperties: false,
    description:
      'A time range (`since`, `until`) or a cursor range (`after`, `upTo`): one of them.',
    examples: [{ since: '2026-11-23T00:00:00.000Z', failedOnly: true }],
  },
);

const ReplayExample = {
  id: 'rpl_8Hs2kQ4nWc9Lx1Zp',
  endpointId: 'ep_2Jd8fL0qPz6Wm4Ty',
  criteria: {
    since: '2026-11-23T00:00:00.000Z',
    until: '2026-11-24T09:00:00.000Z',
    types: ['message.status', 'ticket.created'],
    failedOnly: true,
  },
  eventCount: 42,
  progress: { pending: 30, succeeded: 12, failed: 0 },
  status: 'running',
  continueAfter: null,
  createdAt: '2026-11-24T09:00:00.000Z',
};

export const ReplaySchema = Type.Object(
  {
    id: Type.String({ pattern: '^rpl_[0-9A-Za-z]+$', description: 'Replay id (`rpl_…`).' }),
    endpointId: Type.String({ description: 'The endpoint (`ep_…`).' }),
    criteria: Type.Object(
      {
        since: Type.Optional(Iso('Time range start (included).')),
        until: Type.Optional(Iso('Time range end (excluded).')),
        after: Type.Optional(Type.String({ description: 'Cursor range start (excluded).' })),
        upTo: Type.Optional(Type.String({ description: 'Cursor range end (included).' })),
        types: Type.Array(Type.String(), { description: 'The types replayed.' }),
        failedOnly: Type.Boolean({ description: 'Only events that had not reached it.' }),
      },
      { description: 'What was asked, defaults filled in.' },
    ),
    eventCount: Type.Integer({ minimum: 0, description: 'Events queued.' }),
    progress: Type.Object(
      {
        pending: Type.Integer({ minimum: 0, description: 'Not yet delivered (or retrying).' }),
        succeeded: Type.Integer({ minimum: 0, description: 'Delivered (2xx).' }),
        failed: Type.Integer({ minimum: 0, description: 'Failed after the retry schedule.' }),
      },
      { description: 'Its deliveries by status, now.' },
    ),
    status: Type.Enum(['running', 'finished'] as const, {
      description: '`running` while a delivery is pending.',
    }),
    continueAfter: Nullable(Type.String(), {
      description:
        'Set when the range held more than 10 000 events: the cursor of the last one queued. ' +
        'Replay again with `after` set to it for the rest.',
    }),
    createdAt: Iso('When it was asked.'),
  },
  {
    title: 'WebhookReplay',
    description:
      'Events queued again to one endpoint, each with its original `webhook-id`, paced ' +
      '(`WEBHOOK_REPLAY_PER_SECOND`).',
    examples: [ReplayExample],
  },
);

export const ReplayEnvelopeSchema = Envelope(ReplaySchema, {
  title: 'WebhookReplayEnvelope',
  examples: [{ success: true, data: ReplayExample }],
});

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ pattern: '^dlv_[0-9A-Za-z]+$', description: 'Delivery id (`dlv_…`).' }),
    endpointId: Type.String({ description: 'The endpoint (`ep_…`).' }),
    eventId: Type.String({ description: 'The event (`evt_…`), its `webhook-id`.' }),
    eventType: Type.String({ description: 'The event type.' }),
    status: Type.Enum(DELIVERY_STATUSES, {
      description: '`pending` (being tried), `succeeded` (2xx) or `failed` (schedule over).',
    }),
    attempts: Type.Integer({ minimum: 0, description: 'Attempts made.' }),
    lastStatusCode: Nullable(Type.Integer(), { description: 'HTTP status of the last attempt.' }),
    lastError: Nullable(Type.String(), {
      description: 'Why the last attempt failed, in a short phrase (`timeout`, `HTTP 500`…).',
    }),
    lastLatencyMs: Nullable(Type.Integer(), { description: 'Milliseconds of the last attempt.' }),
    lastAttemptAt: Nullable(Iso('When the last attempt was made.')),
    nextAttemptAt: Nullable(Iso('When the next attempt is due (pending only).')),
    createdAt: Iso('When the delivery was queued.'),
    replayId: Nullable(Type.String(), { description: 'The replay that queued it (`rpl_…`).' }),
  },
  {
    title: 'WebhookDelivery',
    description: 'One event’s delivery to one endpoint.',
    examples: [
      {
        id: 'dlv_7Gk2mP9sQw3Nx5Vb',
        endpointId: 'ep_2Jd8fL0qPz6Wm4Ty',
        eventId: 'evt_4fQ9xK2mLp7Rt3Vb',
        eventType: 'ticket.created',
        status: 'failed',
        attempts: 8,
        lastStatusCode: 503,
        lastError: 'HTTP 503; retries exhausted',
        lastLatencyMs: 120,
        lastAttemptAt: '2026-11-23T20:00:00.000Z',
        nextAttemptAt: null,
        createdAt: '2026-11-22T18:20:00.000Z',
        replayId: null,
      },
    ],
  },
);

export const DeliveryPageSchema = Page(DeliverySchema, {
  items: 'Newest first.',
  title: 'WebhookDeliveryPage',
});

export const DeliveriesQuerySchema = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: HISTORY_LIMIT_MAX,
      default: HISTORY_LIMIT_DEFAULT,
      description: `Deliveries per page, 1–${HISTORY_LIMIT_MAX}.`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The `nextCursor` of the previous page.',
    }),
  ),
  status: Type.Optional(
    Type.Enum(DELIVERY_STATUSES, { description: 'Only deliveries in this status.' }),
  ),
  types: Type.Optional(TypesParam),
});
