import { sql } from 'drizzle-orm';
import {
  boolean,
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

/** Which way a message went: written by the person (`inbound`) or sent by the business. */
export const MESSAGE_DIRECTIONS = ['inbound', 'outbound'] as const;

const at = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * WhatsApp messages of a portal, both directions, one row each (docs/messaging.md "Messages",
 * docs/decisions/0048-one-message-table.md). Invariants: every read filters by `portal_id`;
 * `wa_id` is the person's address and `phone_number_id` the business number whichever way the
 * message went; `created_at` is the message's time in every list and thread (the keyset order
 * `(portal_id, created_at, id)`): when an outbound message was created, when the person sent an
 * inbound one (the provider's `timestamp`). Times have millisecond precision so the keyset
 * cursor compares exactly. `content` is the message's content sealed with the keyring, the
 * portal and message id bound as associated data; null once expired or erased; nothing else in
 * a row is message content except an older outbound row's `text_body` and
 * `template_parameters`. The provider's message id (wamid) is unique within a portal and
 * direction.
 *
 * Outbound only (null on an inbound row; the CHECKs hold it): `status` moves only forward
 * (queued → sent → delivered → read, or → failed from queued or sent), each status's time set
 * once; the wamid is set before the delivery job completes; `price_minor` is the price reserved
 * at send time in minor units of `currency`. Inbound only (null on an outbound row): the
 * medium, the context (reply or reaction), `stored_at`; an inbound row always has its wamid.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components#messages-object
 */
export const messages = pgTable(
  'messages',
  {
    /**
     * Public id: `msg_` + base62, one space for both directions; an outbound message's is also
     * the provider's `biz_opaque_callback_data`.
     */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    direction: text('direction', { enum: MESSAGE_DIRECTIONS }).notNull(),
    /** The contact the message went to or came from; null once the contact is erased. */
    contactId: text('contact_id').references(() => contacts.id, { onDelete: 'set null' }),
    /**
     * The person's WhatsApp ID (the provider's `wa_id`: an outbound message's `to`, an inbound
     * one's `from`) as E.164 with `+`, e.g. `+16505551234`; `erased` once the contact is erased.
     */
    waId: text('wa_id').notNull(),
    /** The business number: the provider's phone number id sent from or written to. */
    phoneNumberId: text('phone_number_id').notNull(),
    /**
     * The message's type: outbound one of `MESSAGE_TYPES`; inbound the provider's type as
     * received (an unknown type is kept). No database CHECK: a new kind needs no migration.
     */
    type: text('type').notNull(),
    /** Outbound: the text of a `text` row stored without `content` (older rows). Never logged. */
    textBody: text('text_body'),
    templateName: text('template_name'),
    /** A template's language code, e.g. `en_US`. */
    templateLanguage: text('template_language'),
    templateCategory: text('template_category', { enum: TEMPLATE_CATEGORIES }),
    /** The template body's variables, in order (older outbound rows). */
    templateParameters: jsonb('template_parameters').$type<string[]>(),
    /** Sealed JSON of the content (`message-content`); null once expired or erased. */
    content: jsonb('content').$type<SealedValue>(),
    /** Outbound: the delivery status. */
    status: text('status', { enum: MESSAGE_STATUSES }),
    /** The provider's message id (wamid): inbound always, outbound once the provider accepted. */
    providerMessageId: text('provider_message_id'),
    /** Inbound: our medium (`med_…`) for image, audio, video, document and sticker messages. */
    mediaId: text('media_id'),
    /** Inbound: the wamid it replies or reacts to (`context.id`, `reaction.message_id`). */
    contextProviderMessageId: text('context_provider_message_id'),
    /** Inbound: our message (either direction) that wamid names, when Portico knows it. */
    contextMessageId: text('context_message_id'),
    /**
     * Outbound: when the delivery worker committed its intent to call the provider, before the
     * call; null again when the provider answered with a failure (nothing was sent). Set with no
     * wamid on a queued message, it is an attempt whose outcome is unknown: never sent again
     * (docs/messaging.md "Retries and failures").
     */
    sendAttemptedAt: at('send_attempted_at'),
    /**
     * Outbound: when the delivery worker may take the message (the row is its own delivery
     * job, docs/messaging.md "The queue"): now at queueing, the end of a worker's lease while
     * one holds it, the next attempt's time after a retryable failure; null once the worker
     * is done with it (sent, failed, held or no longer queued).
     */
    deliveryDueAt: at('delivery_due_at'),
    /** Outbound: how many times a delivery worker took the message (its lease count). */
    deliveryAttempts: integer('delivery_attempts').notNull().default(0),
    /** Outbound: when it was queued. */
    queuedAt: at('queued_at'),
    sentAt: at('sent_at'),
    deliveredAt: at('delivered_at'),
    /**
     * When its recipient read it: outbound, the person (the provider's `read` status); inbound,
     * the business (marked read through Portico).
     */
    readAt: at('read_at'),
    failedAt: at('failed_at'),
    /** The provider's error code (e.g. `131026`) or Portico's (`not_connected`) when failed. */
    errorCode: text('error_code'),
    errorTitle: text('error_title'),
    /** Outbound: the price reserved for this message, in minor units of `currency`. */
    priceMinor: integer('price_minor'),
    currency: text('currency'),
    /**
     * Outbound: what the provider's status webhooks say it bills for this message (their
     * `pricing` object), null until a status carries one: `billable`, `pricing_model` (`PMP`),
     * `type` (`regular`, `free_customer_service`, `free_entry_point`) and `category`
     * (`marketing`, `utility`, `authentication`, `authentication_international`, `service`,
     * `marketing_lite`, or another the provider adds: no database CHECK).
     *
     * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status/
     */
    pricingBillable: boolean('pricing_billable'),
    pricingModel: text('pricing_model'),
    pricingType: text('pricing_type'),
    pricingCategory: text('pricing_category'),
    /**
     * Outbound: what Portico charged the portal's credit for it, minor units of `currency`,
     * once settled: the reserved price, or the price of the category the provider billed (0
     * when it bills nothing); null while queued (docs/decisions/0056-billed-pricing.md).
     */
    chargedMinor: integer('charged_minor'),
    /** Inbound: when Portico stored it (orders messages the provider dates to the same second). */
    storedAt: at('stored_at'),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [
    // Statuses find outbound messages by wamid; inbound replays are dropped by it.
    uniqueIndex('messages_portal_wamid')
      .on(t.portalId, t.providerMessageId)
      .where(sql`${t.direction} = 'outbound'`),
    uniqueIndex('messages_inbound_portal_wamid')
      .on(t.portalId, t.providerMessageId)
      .where(sql`${t.direction} = 'inbound'`),
    // Ascending: scanned backwards they serve `ORDER BY created_at DESC, id DESC` (see contacts).
    index('messages_portal_page').on(t.portalId, t.createdAt, t.id),
    // One direction's page (the outbound list, `direction=inbound`).
    index('messages_portal_direction_page').on(t.portalId, t.direction, t.createdAt, t.id),
    index('messages_portal_status_page')
      .on(t.portalId, t.status, t.createdAt, t.id)
      .where(sql`${t.direction} = 'outbound'`),
    index('messages_portal_wa_id_page').on(t.portalId, t.waId, t.createdAt, t.id),
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
    // The delivery worker's claim: the due messages, soonest first.
    index('messages_delivery_due')
      .on(t.deliveryDueAt)
      .where(sql`${t.deliveryDueAt} IS NOT NULL`),
    check('messages_price_not_negative', sql`${t.priceMinor} >= 0`),
    check('messages_charged_not_negative', sql`${t.chargedMinor} >= 0`),
    check(
      'messages_outbound_columns',
      sql`${t.direction} <> 'outbound' OR (${t.status} IS NOT NULL AND ${t.queuedAt} IS NOT NULL AND ${t.priceMinor} IS NOT NULL AND ${t.currency} IS NOT NULL AND ${t.mediaId} IS NULL AND ${t.contextProviderMessageId} IS NULL AND ${t.contextMessageId} IS NULL AND ${t.storedAt} IS NULL)`,
    ),
    check(
      'messages_inbound_columns',
      sql`${t.direction} <> 'inbound' OR (${t.providerMessageId} IS NOT NULL AND ${t.storedAt} IS NOT NULL AND ${t.status} IS NULL AND ${t.queuedAt} IS NULL AND ${t.priceMinor} IS NULL AND ${t.currency} IS NULL AND ${t.sendAttemptedAt} IS NULL AND ${t.sentAt} IS NULL AND ${t.deliveredAt} IS NULL AND ${t.failedAt} IS NULL AND ${t.errorCode} IS NULL AND ${t.errorTitle} IS NULL AND ${t.textBody} IS NULL AND ${t.templateName} IS NULL AND ${t.templateLanguage} IS NULL AND ${t.templateCategory} IS NULL AND ${t.templateParameters} IS NULL)`,
    ),
  ],
);
