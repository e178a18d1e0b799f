/**
 * The inbox's reads over messaging. Conversations (the list, one, the ids changed since a time)
 * are messaging's one conversation read model, through the conversations service, which also
 * serves `GET /messaging/conversations`: the inbox only renames its fields. A thread is read
 * over message-thread-repository.ts: rows read by portal, contents opened with the keyring (each
 * bound to its portal and message), shaped as the API shows them (`inboundMessageView`,
 * `toMessage`, each checked against its schema: `fittedInbound`, `fittedOutbound`). A content that is gone (expired, erased) or does not open shows as such,
 * unlogged; a message that does not fit its schema is logged by id and shown without its content.
 *
 * @see docs/messaging.md "Inbox"
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { media } from '../db/schema/conversations.ts';
import { keysetCursor } from '../api-kit/keyset-cursor.ts';
import type { ConversationsService } from '../messaging/conversations/conversations-service.ts';
import type { Conversation } from '../messaging/conversations/conversations-schemas.ts';
import {
  listMessageKeys,
  messagesByIds,
} from '../messaging/conversations/message-thread-repository.ts';
import { fittedInbound, fittedOutbound } from '../messaging/conversations/message-list.ts';
import {
  openContent,
  type ContentKeyring,
  type OutboundContent,
  type StoredInboundContent,
} from '../messaging/messages/message-content.ts';
import { outboundContentOf } from '../messaging/messages/message-view.ts';
import type { Logger } from '../platform/logger.ts';
import type { InboxReads } from './inbox-reads.ts';
import type { InboxConversation, InboxMessage } from './inbox-view.ts';

const messageCursor = keysetCursor(/^msg_[0-9A-Za-z]{1,60}$/);

/** Open a content, or null when it is gone or does not open (never thrown at a page). */
function opened<T extends OutboundContent | StoredInboundContent>(
  keyring: ContentKeyring,
  portalId: number,
  messageId: string,
  sealed: Parameters<typeof openContent>[3],
): T | null {
  try {
    return openContent<T>(keyring, portalId, messageId, sealed);
  } catch {
    return null;
  }
}

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
    phone: c.contact.phone,
    phoneNumberId: c.phoneNumberId,
    preview: c.lastMessage.preview,
    lastDirection: c.lastMessage.direction,
    lastMessageAt: c.lastMessage.at,
    unreadCount: c.unreadCount,
    windowExpiresAt: c.windowExpiresAt,
  };
}

export interface InboxDataDeps {
  db: Database;
  /** Messaging's conversation read model (the one `GET /messaging/conversations` serves). */
  conversations: Pick<
    ConversationsService,
    'listConversations' | 'getConversation' | 'conversationsChangedSince'
  >;
  keyring: ContentKeyring;
  /** Where a stored message that does not fit its schema is noted (ids only). */
  logger: Pick<Logger, 'warn'>;
  events: InboxReads['events'];
  media: InboxReads['media'];
  markReadOnOpen?: InboxReads['markReadOnOpen'];
}

/** The inbox's reads; see the module comment. */
export function createInboxReads(deps: InboxDataDeps): InboxReads {
  const { db, keyring } = deps;
  return {
    events: deps.events,
    media: deps.media,
    markReadOnOpen: deps.markReadOnOpen,
    changedSince: (portalId, since, limit) =>
      deps.conversations.conversationsChangedSince({ portalId }, since, limit),
    async conversations(portalId, page) {
      const { items, nextCursor } = await deps.conversations.listConversations(
        { portalId },
        { limit: page.limit, ...(page.cursor !== undefined && { cursor: page.cursor }) },
      );
      return { items: items.map(inboxConversationOf), nextCursor };
    },
    async conversation(portalId, id) {
      const c = await deps.conversations.getConversation({ portalId }, id);
      return c ? inboxConversationOf(c) : null;
    },
    async messages(portalId, conversationId, page) {
      const c = await deps.conversations.getConversation({ portalId }, conversationId);
      if (!c) return { items: [], nextCursor: null };
      const row = { contactId: c.contact.id, phoneNumberId: c.phoneNumberId };
      const after = page.cursor ? messageCursor.decodeCursor(page.cursor) : undefined;
      const { rows: keys, hasMore } = await listMessageKeys(db, portalId, {
        limit: page.limit,
        after,
        filter: { contactId: row.contactId, phoneNumberId: row.phoneNumberId },
      });
      const { outbound, inbound } = await messagesByIds(db, portalId, keys);
      const mediaIds = [...inbound.values()].flatMap((m) => (m.mediaId ? [m.mediaId] : []));
      const mediaRows =
        mediaIds.length === 0
          ? []
          : await db
              .select()
              .from(media)
              .where(and(eq(media.portalId, portalId), inArray(media.id, mediaIds)));
      const mediaById = new Map(mediaRows.map((m) => [m.id, m]));
      const items: InboxMessage[] = [];
      for (const k of keys) {
        if (k.direction === 'inbound') {
          const m = inbound.get(k.id);
          if (!m) continue;
          const content = opened<StoredInboundContent>(keyring, portalId, m.id, m.content);
          const medium = m.mediaId ? (mediaById.get(m.mediaId) ?? null) : null;
          const view = fittedInbound(deps.logger, m, content, medium);
          if (view) items.push(view);
        } else {
          const m = outbound.get(k.id);
          if (!m) continue;
          let content: OutboundContent | null = null;
          try {
            content = outboundContentOf(keyring, m);
          } catch {
            // A content that does not open shows as gone.
          }
          const view = fittedOutbound(deps.logger, m, content);
          if (view) items.push(view);
        }
      }
      const last = keys.at(-1);
      return {
        items,
        nextCursor:
          hasMore && last
            ? messageCursor.encodeCursor({ createdAt: last.createdAt, id: last.id })
            : null,
      };
    },
  };
}
