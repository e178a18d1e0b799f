import { sql } from 'drizzle-orm';
import {
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { SealedValue } from '../../platform/keyring.ts';
import { contacts } from './contacts.ts';
import { portals } from './portals.ts';

/** A message's statuses, in their only order: queued → sent → delivered → read, or failed. */
export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'read', 'failed'] as const;

/**
 * What a message is: a free-form kind (sent only inside the 24-hour service window) or an
 * approved template. The column has no database CHECK: a new kind needs no migration.
 */
export const MESSAGE_TYPES = [
  'text',
  'image',
  'video',
  'audio',
  'document',
  'sticker',
  'location',
  'interactive',
  'reaction',
  'template',
] as const;

/** Template categories (the provider's), which set a template message's price. */
export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * Outbound WhatsApp messages of a portal (docs/messaging.md). Invariants: every read filters by
 * `portal_id`; `to` is E.164; `from` is the provider's phone number id the message is (or was)
 * sent from; `status` only moves forward (queued → sent → delivered → read, or → failed from
 * queued or sent), each status's time set once; `provider_message_id` (the wamid) is unique
 * within a portal and set before the delivery job completes. `price_minor` is the price
 * reserved at send time in minor units of `currency`. `text_body` is stored for the sender's
 * own reading (the API returns it) and never logged. Times have millisecond precision so the
 * keyset cursor compares exactly.
 */
export const messages = pgTable(
  'messages',
  {
    /** Public id: `msg_` + base62; also the provider's `biz_opaque_callback_data`. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    /** The contact the message went to, when it was addressed by contact or its phone is one. */
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    /** E.164, e.g. `+16505551234`. */
    to: text('to').notNull(),
    /** The sender: the provider's phone number id. */
    from: text('from').notNull(),
    type: text('type', { enum: MESSAGE_TYPES }).notNull(),
    /** The text of a `text` row stored without `content` (older rows); else null. Never logged. */
    textBody: text('text_body'),
    templateName: text('template_name'),
    /** A template's language code, e.g. `en_US`. */
    templateLanguage: text('template_language'),
    templateCategory: text('template_category', { enum: TEMPLATE_CATEGORIES }),
    /** The template body's variables, in order. */
    templateParameters: jsonb('template_parameters').$type<string[]>(),
    /**
     * The message's content (the text, a template's parameters) sealed with the keyring, the
     * portal and message id bound as associated data; null once expired or erased.
     */
    content: jsonb('content').$type<SealedValue>(),
    status: text('status', { enum: MESSAGE_STATUSES }).notNull().default('queued'),
    /** The provider's message id (wamid), once the provider accepted the message. */
    providerMessageId: text('provider_message_id'),
    /**
     * When the delivery worker committed its intent to call the provider, before the call; null
     * again when the provider answered with a failure (nothing was sent). Set with no wamid on
     * a queued message, it is an attempt whose outcome is unknown: never sent again
     * (docs/messaging.md "Retries and failures").
     */
    sendAttemptedAt: at('send_attempted_at'),
    queuedAt: at('queued_at').notNull().defaultNow(),
    sentAt: at('sent_at'),
    deliveredAt: at('delivered_at'),
    readAt: at('read_at'),
    failedAt: at('failed_at'),
    /** The provider's error code (e.g. `131026`) or Portico's (`not_connected`) when failed. */
    errorCode: text('error_code'),
    errorTitle: text('error_title'),
    /** The price reserved for this message, in minor units of `currency`. */
    priceMinor: integer('price_minor').notNull(),
    currency: text('currency').notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('messages_portal_wamid').on(t.portalId, t.providerMessageId),
    // Ascending: scanned backwards they serve `ORDER BY created_at DESC, id DESC` (see contacts).
    index('messages_portal_page').on(t.portalId, t.createdAt, t.id),
    index('messages_portal_status_page').on(t.portalId, t.status, t.createdAt, t.id),
    index('messages_portal_to_page').on(t.portalId, t.to, t.createdAt, t.id),
    // A contact's messages and a conversation's thread (docs/messaging.md "Conversations").
    index('messages_portal_contact_page').on(t.portalId, t.contactId, t.createdAt, t.id),
    // The retention sweep: messages whose content is still there, oldest first.
    index('messages_content_expiry')
      .on(t.createdAt)
      .where(sql`${t.content} IS NOT NULL`),
    // The settlement sweep: queued messages by the time of their send attempt.
    index('messages_queued_attempts')
      .on(t.sendAttemptedAt)
      .where(sql`${t.status} = 'queued'`),
    check('messages_price_not_negative', sql`${t.priceMinor} >= 0`),
  ],
);
