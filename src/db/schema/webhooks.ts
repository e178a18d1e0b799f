import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import type { SealedValue } from '../../platform/keyring.ts';
import { portals } from './portals.ts';

/**
 * A portal's outbound webhook endpoints (Standard Webhooks). Invariants: the signing secret
 * (`whsec_…`) is held only sealed by the keyring (AES-256-GCM, the portal id as additional
 * authenticated data), never in clear; during a rotation the previous secret stays sealed
 * beside it until `previous_secret_expires_at` (24 h), and deliveries carry both signatures.
 * A disabled endpoint says why (`disabled_reason`, plain words). `failing_since` is the first
 * failed attempt of the current failing streak (null after a success): 5 days of it disable the
 * endpoint. Every read filters by `portal_id`.
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 * @see docs/webhooks.md
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    /** Public id: `ep_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /** The event types delivered to this endpoint (catalogue: webhooks/webhook-events.ts). */
    eventTypes: text('event_types').array().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    disabledReason: text('disabled_reason'),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    /** The signing secret, sealed (`SealedValue`, purpose `webhook-secret`). */
    secret: jsonb('secret').$type<SealedValue>().notNull(),
    /** The secret before the last rotation, sealed, while it signs too (see the expiry). */
    previousSecret: jsonb('previous_secret').$type<SealedValue>(),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true }),
    failingSince: timestamp('failing_since', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_portal').on(t.portalId, t.createdAt)],
);

/**
 * A PostgreSQL `xid8`: a 64-bit transaction id, never wrapping (PostgreSQL 13+, PGlite), read as
 * its decimal text.
 *
 * @see https://www.postgresql.org/docs/current/functions-info.html#FUNCTIONS-PG-SNAPSHOT
 */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

/**
 * One event: `payload` is the `{type, timestamp, data}` object sent, stored with `data` sealed
 * by the keyring (`{type, timestamp, sealedData}`, the portal and event id as associated data;
 * see webhooks/event-payload.ts), since `message.received` and `message.reaction` carry what a
 * person wrote. `contact_id` and `contact_phone` (the data's `contactId` and `from`, when it has
 * them) stay plain so a contact's erasure finds the events about them. Its id is the
 * `webhook-id` header, the same on every attempt and every endpoint.
 *
 * The table is also the portal's event log (`GET /events`, replays): every event is written,
 * subscribed endpoint or not, and kept `EVENTS_RETENTION_DAYS`. Its order is
 * `(writer_xid, position)`: the writing transaction's id, then the order within it; a reader
 * is served only rows whose `writer_xid` is below its snapshot's xmin, so a row committed later
 * always sorts after every row already served (docs/decisions/0038-event-log-order.md).
 */
export const webhookEvents = pgTable(
  'webhook_events',
  {
    /** `evt_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /** The contact the event is about (`ctc_…`), when its data names one. */
    contactId: text('contact_id'),
    /** The person's phone (E.164), when its data has a `from`. */
    contactPhone: text('contact_phone'),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** The order of events written by one transaction (and a unique handle of the row). */
    position: bigint('position', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
    /** The writing transaction's id (`pg_current_xact_id()`): the log's first sort key. */
    writerXid: xid8('writer_xid')
      .notNull()
      .default(sql`pg_current_xact_id()`),
  },
  (t) => [
    index('webhook_events_portal').on(t.portalId, t.createdAt),
    index('webhook_events_log').on(t.portalId, t.writerXid, t.position),
    // The retention sweep, across portals.
    index('webhook_events_created').on(t.createdAt),
  ],
);

/**
 * A replay: the events of a range queued again to one endpoint, each as a new delivery with the
 * event's own id as `webhook-id`. `criteria` is the request as given (range, types, failed
 * only), for the page and the API; progress is counted from the deliveries that carry its id.
 */
export const webhookReplays = pgTable(
  'webhook_replays',
  {
    /** `rpl_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    criteria: jsonb('criteria').$type<Record<string, unknown>>().notNull(),
    /** Events queued. */
    eventCount: integer('event_count').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [index('webhook_replays_endpoint').on(t.endpointId, t.createdAt)],
);

/**
 * One event's delivery to one endpoint: what the settings page shows (status code, attempts,
 * next retry, latency). `status` is `pending` until a 2xx (`succeeded`) or the end of the
 * schedule, a 410 or a disabled endpoint (`failed`). `last_error` is a short fixed phrase
 * (`timeout`, `refused address`, `HTTP 500`…), never a response body.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    /** `dlv_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    eventId: text('event_id')
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    /** Milliseconds from the request's start to the response's headers (or the failure). */
    lastLatencyMs: integer('last_latency_ms'),
    lastAttemptAt: timestamp('last_attempt_at', { withTimezone: true }),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** The replay that queued this delivery (`rpl_…`), or null. */
    replayId: text('replay_id').references(() => webhookReplays.id, { onDelete: 'set null' }),
  },
  (t) => [
    index('webhook_deliveries_endpoint').on(t.endpointId, t.createdAt),
    index('webhook_deliveries_event').on(t.eventId),
    index('webhook_deliveries_replay')
      .on(t.replayId)
      .where(sql`${t.replayId} is not null`),
  ],
);

/**
 * Per-portal webhook settings: the `credit.low` threshold (minor units of the credit's
 * currency; null: no `credit.low` events).
 */
export const webhookSettings = pgTable('webhook_settings', {
  portalId: integer('portal_id')
    .primaryKey()
    .references(() => portals.id, { onDelete: 'cascade' }),
  creditLowThresholdMinor: bigint('credit_low_threshold_minor', { mode: 'number' }),
});
