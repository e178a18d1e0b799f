import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { SealedValue } from '../../platform/keyring.ts';
import { CONSENT_SCOPES, CONSENT_SOURCES, CONSENT_STATES, contacts } from './contacts.ts';
import { portals } from './portals.ts';
import { users } from './users.ts';

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/** The kinds of media the Cloud API sends (its message types that carry a medium). */
export const MEDIA_KINDS = ['image', 'video', 'audio', 'document', 'sticker'] as const;

/**
 * Media, both directions. Inbound: what the provider told about a medium a person sent (its id,
 * type, checksum), one message each; the bytes are never stored, they are fetched from the
 * provider when asked for. Outbound: a medium the business uploaded to the provider
 * (`POST /messaging/media`) to send by id: no message yet, its kind, size, the sending number
 * and when the provider forgets it (`expires_at`); the file name is sealed like message content
 * (the medium id bound as associated data). Invariants: every read filters by `portal_id`; an
 * outbound row has its kind, size, phone number id and expiry; an inbound row belongs to one
 * message (two messages naming one provider media id have a row each).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media
 */
export const media = pgTable(
  'media',
  {
    /** Public id: `med_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    direction: text('direction', { enum: ['inbound', 'outbound'] })
      .notNull()
      .default('inbound'),
    /** The inbound message that carried it; null for an upload. */
    messageId: text('message_id'),
    /** The provider's media id. */
    providerMediaId: text('provider_media_id').notNull(),
    mimeType: text('mime_type').notNull(),
    /** Outbound: what the medium can be sent as. */
    kind: text('kind', { enum: MEDIA_KINDS }),
    /** Lower-case hex SHA-256 of the bytes, as the webhook gave it (base64 there); null if none. */
    sha256: text('sha256'),
    /** Bytes, once known (the provider's `file_size`; an upload's size). */
    fileSize: integer('file_size'),
    /** Outbound: the uploaded file's name, sealed (`message-content`, AAD the medium id). */
    fileName: jsonb('file_name').$type<SealedValue>(),
    /** Outbound: the business number it was uploaded through (provider's phone number id). */
    phoneNumberId: text('phone_number_id'),
    /** Outbound: when the provider no longer has it (30 days after the upload). */
    expiresAt: at('expires_at'),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [
    // An upload's provider id is the business's, one row each. An inbound medium is one row per
    // message: the provider reuses a media id when one medium comes in several messages.
    uniqueIndex('media_portal_provider_id')
      .on(t.portalId, t.providerMediaId)
      .where(sql`${t.direction} = 'outbound'`),
    index('media_portal_message').on(t.portalId, t.messageId),
    check(
      'media_outbound_complete',
      sql`${t.direction} = 'inbound' OR (${t.kind} IS NOT NULL AND ${t.fileSize} IS NOT NULL AND ${t.phoneNumberId} IS NOT NULL AND ${t.expiresAt} IS NOT NULL)`,
    ),
    check('media_inbound_message', sql`${t.direction} = 'outbound' OR ${t.messageId} IS NOT NULL`),
  ],
);

/** A conversation's status (docs/decisions/0064-conversations-worked-by-a-team.md). */
export const CONVERSATION_STATUSES = ['open', 'pending', 'resolved', 'snoozed'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

/**
 * One conversation per contact and business number: the newest activity in either direction,
 * the unread inbound count, and the service window; how the team works it (status, snooze,
 * assignee, labels). Maintained in the transaction of each inbound message, outbound send and
 * read (docs/messaging.md "Conversations"). Invariants: every read filters by `portal_id`;
 * `last_message_at` only moves forward; `unread_count` ≥ 0; `snoozed_until` is set exactly when
 * the status is `snoozed`; the assignee is a user of the same portal (checked on write).
 */
export const conversations = pgTable(
  'conversations',
  {
    /** Public id: `cnv_` + base62. */
    id: text('id').notNull().unique(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    contactId: text('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    /** The business number: the provider's phone number id. */
    phoneNumberId: text('phone_number_id').notNull(),
    /** The newest message, either direction (`msg_…`). */
    lastMessageId: text('last_message_id').notNull(),
    lastMessageAt: at('last_message_at').notNull(),
    lastDirection: text('last_direction', { enum: ['inbound', 'outbound'] }).notNull(),
    unreadCount: integer('unread_count').notNull().default(0),
    /** The person's newest message here: the service window runs 24 hours from it. */
    lastInboundAt: at('last_inbound_at'),
    /** When `conversation.window_closing` was emitted for the current window. */
    windowClosingNotifiedAt: at('window_closing_notified_at'),
    status: text('status', { enum: CONVERSATION_STATUSES }).notNull().default('open'),
    /** When a snooze ends (the sweep reopens it then, or a new inbound message sooner). */
    snoozedUntil: at('snoozed_until'),
    /** The member working it (`users.id`, public as `usr_<id>`); null: unassigned. */
    assigneeId: integer('assignee_id').references(() => users.id, { onDelete: 'set null' }),
    /** The team's labels (distinct from the contact's tags), trimmed, sorted, unique. */
    labels: text('labels')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
  },
  (t) => [
    primaryKey({ columns: [t.portalId, t.contactId, t.phoneNumberId] }),
    index('conversations_portal_page').on(t.portalId, t.lastMessageAt, t.id),
    index('conversations_portal_status_page').on(t.portalId, t.status, t.lastMessageAt, t.id),
    index('conversations_portal_assignee_page').on(t.portalId, t.assigneeId, t.lastMessageAt, t.id),
    index('conversations_window').on(t.lastInboundAt),
    index('conversations_snoozed')
      .on(t.snoozedUntil)
      .where(sql`${t.status} = 'snoozed'`),
    check('conversations_unread_not_negative', sql`${t.unreadCount} >= 0`),
    check(
      'conversations_snooze_until',
      sql`(${t.status} = 'snoozed') = (${t.snoozedUntil} IS NOT NULL)`,
    ),
  ],
);

/**
 * A member's private note in a conversation's thread: seen by members only, never sent to the
 * person, never in a tenant webhook but its own `conversation.note_added`. The body is sealed
 * like message content (purpose `conversation-note`, AAD the note id; db/sealed-columns.ts) and
 * goes with its conversation (and so with the contact's erasure).
 */
export const conversationNotes = pgTable(
  'conversation_notes',
  {
    /** Public id: `nte_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    /** The member who wrote it; null once that user is deleted. */
    authorId: integer('author_id').references(() => users.id, { onDelete: 'set null' }),
    body: jsonb('body').$type<SealedValue>().notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [index('conversation_notes_page').on(t.portalId, t.conversationId, t.createdAt, t.id)],
);

/**
 * Each member's read mark in a conversation: inbound messages stored after `read_at` are unread
 * for that member. Written when the member opens the thread on the inbox; independent of the
 * provider read receipt (`messages.read_at`, the portal's `auto_mark_read`).
 */
export const conversationReads = pgTable(
  'conversation_reads',
  {
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    readAt: at('read_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.conversationId, t.userId] })],
);

/**
 * The history of a contact's WhatsApp consent: each change, from what, to what, by which source,
 * and the inbound message that caused it (a keyword). Append-only; goes with its contact.
 */
export const consentChanges = pgTable(
  'consent_changes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    contactId: text('contact_id')
      .notNull()
      .references(() => contacts.id, { onDelete: 'cascade' }),
    fromState: text('from_state', { enum: CONSENT_STATES }).notNull(),
    toState: text('to_state', { enum: CONSENT_STATES }).notNull(),
    source: text('source', { enum: CONSENT_SOURCES }).notNull(),
    /**
     * What the consent covers: `whatsapp` (every message, `consent_whatsapp`) or `marketing`
     * (marketing templates from one business number, the person's own stop or resume).
     */
    scope: text('scope', { enum: CONSENT_SCOPES }).notNull().default('whatsapp'),
    /** For `marketing`: the business phone number id the stop or resume applies to. */
    phoneNumberId: text('phone_number_id'),
    /** The inbound message (`msg_…`) whose keyword made the change. */
    messageId: text('message_id'),
    occurredAt: at('occurred_at').notNull().defaultNow(),
  },
  (t) => [index('consent_changes_contact').on(t.portalId, t.contactId, t.occurredAt)],
);

/**
 * A portal's messaging settings; a portal without a row has the defaults (docs/messaging.md
 * "Opt-out keywords"). Keywords are stored upper-case and trimmed.
 */
export const messagingSettings = pgTable('messaging_settings', {
  portalId: integer('portal_id')
    .primaryKey()
    .references(() => portals.id, { onDelete: 'cascade' }),
  optOutKeywords: text('opt_out_keywords').array().notNull(),
  optInKeywords: text('opt_in_keywords').array().notNull(),
  /** A free-text reply sent after an opt-out keyword (inside the window it opened); null: none. */
  optOutReply: text('opt_out_reply'),
  optInReply: text('opt_in_reply'),
  /** Mark an inbound message read at the provider when it is opened on the inbox. */
  autoMarkRead: boolean('auto_mark_read').notNull().default(false),
  updatedAt: at('updated_at').notNull().defaultNow(),
});
