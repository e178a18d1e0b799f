/**
 * What `/inbox` reads from messaging, as narrow calls (the composition root wires them to the
 * messaging service): a portal's conversations, one conversation, its messages in both
 * directions, its private notes (read and added), marking it read when opened, an inbound medium's bytes, and the conversation
 * changes heard on this instance.
 *
 * @see docs/messaging.md "Inbox"
 */
import type { Readable } from 'node:stream';
import type { PortalMember } from '../accounts/portal-members.ts';
import type { ConversationUpdate, Note } from '../messaging/conversations/conversations-schemas.ts';
import type { ConversationEvents } from '../messaging/store/conversation-changes.ts';
import type { InboxConversation, InboxMessage } from './inbox/inbox-view.ts';

/** A page of a list, newest first, and the cursor of the next one (null: the last page). */
export interface InboxPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** An inbound medium, ready to stream to the browser. */
export interface InboxMedium {
  contentType: string;
  /** Bytes, when known. */
  contentLength?: number | undefined;
  /** A safe file name for `Content-Disposition`. */
  fileName?: string | undefined;
  body: Readable | Buffer;
}

/** Which conversations the list shows (the API's filters). */
export interface InboxFilter {
  status?: InboxConversation['status'] | undefined;
  /** `usr_…`, or `none` for the unassigned ones. */
  assigneeId?: string | undefined;
  label?: string | undefined;
}

export interface InboxReads {
  /**
   * The portal's conversations, newest activity first, each with `readerId`'s own unread count.
   * Throws `invalid_request` on a bad cursor.
   */
  conversations(
    portalId: number,
    page: { limit: number; cursor?: string | undefined },
    readerId: number,
    filter?: InboxFilter,
  ): Promise<InboxPage<InboxConversation>>;
  /** One conversation of the portal (`readerId`'s unread count); null when unknown or another portal's. */
  conversation(
    portalId: number,
    conversationId: string,
    readerId: number,
  ): Promise<InboxConversation | null>;
  /** The portal's members, to assign a conversation to. */
  members(portalId: number): Promise<PortalMember[]>;
  /**
   * Change a conversation's status, snooze, assignee or labels as a member. Throws the API's
   * `not_found` and `invalid_request`.
   */
  update(
    principal: { portalId: number; userId: number },
    conversationId: string,
    update: ConversationUpdate,
  ): Promise<void>;
  /**
   * The conversation's latest `limit` private notes, newest first, bodies opened. Throws the
   * API's `not_found`.
   */
  notes(portalId: number, conversationId: string, limit: number): Promise<Note[]>;
  /**
   * Add member `principal.userId`'s private note `body` (1–4096 characters, checked by the
   * caller) through messaging's notes service (sealed, announced as `conversation.note_added`).
   * Throws the API's `not_found`.
   */
  addNote(
    principal: { portalId: number; userId: number },
    conversationId: string,
    body: string,
  ): Promise<void>;
  /** The member opened the thread: mark it read for them. False when not found. */
  markReadBy(
    principal: { portalId: number; userId: number },
    conversationId: string,
  ): Promise<boolean>;
  /** The conversation's messages of both directions, newest first. */
  messages(
    portalId: number,
    conversationId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<InboxPage<InboxMessage>>;
  /**
   * The conversation was opened on the inbox: mark its inbound messages read (in Portico, and
   * at the provider when the portal's setting says so). Absent: nothing is marked.
   */
  markReadOnOpen?:
    | ((
        portalId: number,
        conversation: Pick<InboxConversation, 'contactId' | 'phoneNumberId'>,
      ) => Promise<unknown>)
    | undefined;
  /**
   * An agent started a reply: show the person the typing indicator (marking the conversation
   * read at the provider, as it does with it). Absent: nothing is sent.
   */
  showTyping?:
    | ((
        portalId: number,
        conversation: Pick<InboxConversation, 'contactId' | 'phoneNumberId'>,
      ) => Promise<unknown>)
    | undefined;
  /**
   * An inbound medium's bytes (fetched from the provider, checked). Throws the API's errors
   * (`not_found`, `gone`, `not_connected`, `provider_error`, …).
   */
  media(portalId: number, mediaId: string, signal: AbortSignal): Promise<InboxMedium>;
  /**
   * The portal's conversations with a message after `since`, newest first, at most `limit` ids:
   * what a reconnecting event stream replays (`Last-Event-ID`).
   */
  changedSince(portalId: number, since: Date, limit: number): Promise<string[]>;
  /** This instance's hub of conversation changes (fed by LISTEN/NOTIFY). */
  events: Pick<ConversationEvents, 'subscribe'>;
}
