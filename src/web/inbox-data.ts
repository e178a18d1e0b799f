/**
/**
 * The inbox's reads over messaging. Conversations (the list, one, the ids changed since a time)
 * are messaging's one conversation read model, through the conversations service, which also
 * serves `GET /messaging/conversations`: the inbox only renames its fields. A thread is one
 * keyset page of messages (message-list.ts's `messagePage`): rows read by portal, contents
 * opened with the keyring (each bound to its portal and message), shaped as the API shows them
 * (the one mapper, `messageView`, checked against its schema). A content that is gone (expired,
 * erased) or does not open shows as such, unlogged; a message that does not fit its schema is
 * logged by id and shown without its content.
 *
 * @see docs/messaging.md "Inbox"
 */
import { listPortalMembers } from '../accounts/portal-members.ts';
import type { Database } from '../db/client.ts';
import { keysetCursor } from '../api-kit/keyset-cursor.ts';
import type { ConversationsService } from '../messaging/conversations/conversations-service.ts';
import type { Conversation } from '../messaging/conversations/conversations-schemas.ts';
import { messagePage } from '../messaging/conversations/message-list.ts';
import type { ContentKeyring } from '../messaging/store/message-content.ts';
import type { Logger } from '../platform/logger.ts';
import type { InboxReads } from './inbox-reads.ts';
import type { InboxConversation } from './inbox/inbox-view.ts';

const messageCursor = keysetCursor(/^msg_[0-9A-Za-z]{1,60}$/);

/**
 * A conversation of messaging's read model as the inbox lists it: the same values under the
 * page's names (nothing recomputed: the window, the unread count and the last message's preview
 * are the API's).
 */
export function inboxConversationOf(c: Conversation): InboxConversation {
  return {
    id: c.id,
    contactId: c.contact.id,
    name: c.contact.name,
    phone:
      c.contact.phone ??
      (c.contact.username ? `@${c.contact.username}` : (c.contact.waUserId ?? '')),
    phoneNumberId: c.phoneNumberId,
    preview: c.lastMessage.preview,
    lastDirection: c.lastMessage.direction,
    lastMessageAt: c.lastMessage.at,
    unreadCount: c.unreadCount,
    windowExpiresAt: c.windowExpiresAt,
    status: c.status,
    snoozedUntil: c.snoozedUntil,
    assigneeId: c.assigneeId,
    labels: c.labels,
  };
}

export interface InboxDataDeps {
  db: Database;
  /** Messaging's conversation read model (the one `GET /messaging/conversations` serves). */
  conversations: Pick<
    ConversationsService,
    | 'listConversations'
    | 'getConversation'
    | 'conversationsChangedSince'
    | 'updateConversation'
    | 'markReadBy'
    | 'notes'
  >;
  keyring: ContentKeyring;
  /** Where a stored message that does not fit its schema is noted (ids only). */
  logger: Pick<Logger, 'warn'>;
  events: InboxReads['events'];
  media: InboxReads['media'];
  markReadOnOpen?: InboxReads['markReadOnOpen'];
  showTyping?: InboxReads['showTyping'];
}

/** The inbox's reads; see the module comment. */
export function createInboxReads(deps: InboxDataDeps): InboxReads {
  return {
    events: deps.events,
    media: deps.media,
    markReadOnOpen: deps.markReadOnOpen,
    showTyping: deps.showTyping,
    changedSince: (portalId, since, limit) =>
      deps.conversations.conversationsChangedSince({ portalId }, since, limit),
    async conversations(portalId, page, readerId, filter = {}) {
      const { items, nextCursor } = await deps.conversations.listConversations(
        { portalId },
        {
          limit: page.limit,
          ...(page.cursor !== undefined && { cursor: page.cursor }),
          ...(filter.status !== undefined && { status: filter.status }),
          ...(filter.assigneeId !== undefined && { assigneeId: filter.assigneeId }),
          ...(filter.label !== undefined && { label: filter.label }),
        },
        { readerId },
      );
      return { items: items.map(inboxConversationOf), nextCursor };
    },
    async conversation(portalId, id, readerId) {
      const c = await deps.conversations.getConversation({ portalId }, id, { readerId });
      return c ? inboxConversationOf(c) : null;
    },
    members: (portalId) => listPortalMembers(deps.db, portalId),
    async update(principal, id, update) {
      await deps.conversations.updateConversation(principal, id, update);
    },
    markReadBy: (principal, id) => deps.conversations.markReadBy(principal, id),
    async notes(portalId, conversationId, limit) {
      const page = await deps.conversations.notes.list({ portalId }, conversationId, { limit });
      return page.items;
    },
    async addNote(principal, conversationId, body) {
      await deps.conversations.notes.add(principal, conversationId, body);
    },
    async messages(portalId, conversationId, page) {
      const c = await deps.conversations.getConversation({ portalId }, conversationId);
      if (!c) return { items: [], nextCursor: null };
      const row = { contactId: c.contact.id, phoneNumberId: c.phoneNumberId };
      const after = page.cursor ? messageCursor.decodeCursor(page.cursor) : undefined;
      const { items, nextCursor } = await messagePage(deps, portalId, {
        limit: page.limit,
        after,
        filter: { contactId: row.contactId, phoneNumberId: row.phoneNumberId },
      });
      return { items, nextCursor };
    },
  };
}
