import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import type { SealedValue } from '../../platform/keyring.ts';
import { portals } from './portals.ts';

/**
 * A template variable of a draft: a text, or a field of each recipient's contact with an
 * optional fallback (`firstName`, `attributes.plan`; messaging/drafts/draft-personalisation.ts).
 */
export type DraftParameter = string | { contact: string; fallback?: string };

/** What a draft sends: a free text, or an approved template with its body's parameters. */
export type DraftMessage =
  | { type: 'text'; text: { body: string } }
  | {
      type: 'template';
      template: { name: string; language: string; parameters: DraftParameter[] };
    };

/** Who a draft goes to: contacts by id, E.164 numbers, and every contact with a tag. */
export interface DraftRecipients {
  contactIds: string[];
  /** E.164, normalised by libphonenumber-js before the write. */
  phones: string[];
  tag: string | null;
}

/** What a draft's sealed `content` holds. */
export interface SealedDraft {
  message: DraftMessage;
  recipients: DraftRecipients;
}

/** What sending a draft did: how many messages were queued and how many were refused. */
export interface DraftSendResult {
  queued: number;
  refused: number;
}

/**
 * Portico-side message drafts (`/messaging/drafts`): a composed message and its recipients,
 * kept until sent. Invariants: every read filters by `portal_id` in the query; `sent_at` is
 * set once, by the send that claims the draft (`UPDATE … WHERE sent_at IS NULL`), so a draft
 * is sent at most once; a sent draft is never changed again. Message bodies and phone numbers
 * are stored only sealed (`content`) and reach no log. Times have millisecond precision for the keyset cursor.
 */
export const messageDrafts = pgTable(
  'message_drafts',
  {
    /** Public id: `drf_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    /**
     * The JSON of `{message, recipients}` (`SealedDraft`) sealed with the keyring (purpose
     * `message-draft`, the portal and draft id as associated data); null only on a row written
     * before drafts were sealed, until the start-up pass seals it.
     */
    content: jsonb('content').$type<SealedValue>(),
    /** Before drafts were sealed: the message in clear; null once sealed (always, for new rows). */
    message: jsonb('message').$type<DraftMessage>(),
    /** Before drafts were sealed: the recipients in clear; null once sealed. */
    recipients: jsonb('recipients').$type<DraftRecipients>(),
    /** The phone number id to send from; null: the account's only number. */
    fromPhoneNumberId: text('from_phone_number_id'),
    sentAt: timestamp('sent_at', { withTimezone: true, precision: 3 }),
    sendResult: jsonb('send_result').$type<DraftSendResult>(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  // Ascending on purpose (see contacts.ts): scanned backwards for newest-first pages.
  (t) => [index('message_drafts_portal_page').on(t.portalId, t.createdAt, t.id)],
);
