/**
 * The inbox's reads over messaging's conversation queries (conversations-repository.ts) and
 * message pages (message-list.ts's `messagePage`): rows read by portal, contents opened with the
 * keyring (each bound to its portal and message), shaped as the API shows them (the one mapper,
 * `messageView`, checked against its schema) and as the inbox's list rows. A content that is
 * gone (expired, erased) or does not open shows as such (one that does not open is logged by id);
 * a message that does not fit its schema is logged by id and shown without its content.
 *
 * @see docs/messaging.md "Inbox"
 */
import { and, desc, eq, gt } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { conversations } from '../db/schema/conversations.ts';
import { keysetCursor } from '../api-kit/keyset-cursor.ts';
import {
  findConversation,
  listConversationPage,
  type ConversationListRow,
} from '../messaging/conversations/conversations-repository.ts';
import { messagePage } from '../messaging/conversations/message-list.ts';
import {
  openContent,
  type ContentKeyring,
  type OutboundContent,
  type StoredInboundContent,
} from '../messaging/messages/message-content.ts';
import { inboundMessageView } from '../messaging/messages/message-view.ts';
import type { Logger } from '../platform/logger.ts';
import { SERVICE_WINDOW_MS } from '../messaging/messages/service-windows.ts';
import type { InboxReads } from './inbox-reads.ts';
import { summaryOf, type InboxConversation, type InboxOutbound } from './inbox-view.ts';

const conversationCursor = keysetCursor(/^cnv_[0-9A-Za-z]{1,60}$/);
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

function previewOf(keyring: ContentKeyring, portalId: number, r: ConversationListRow) {
  if (r.lastDirection === 'outbound') {
    const c = opened<OutboundContent>(keyring, portalId, r.lastMessageId, r.lastContent);
    if (c?.text) return c.text.body;
    if (r.lastTemplateName) return `Template ${r.lastTemplateName}`;
    if (!c || !r.lastType) return null;
    const kind = (c as Record<string, unknown>)[r.lastType];
    return summaryOf({
      id: r.lastMessageId,
      type: r.lastType,
      providerMessageId: null,
      status: 'queued',
      queuedAt: r.lastMessageAt.toISOString(),
      ...(kind !== undefined && ({ [r.lastType]: kind } as Partial<InboxOutbound>)),
    });
  }
  const c = opened<StoredInboundContent>(keyring, portalId, r.lastMessageId, r.lastContent);
  if (!c) return null;
  const view = inboundMessageView(
    {
      id: r.lastMessageId,
      waId: r.contactPhone,
      contactId: r.contactId,
      phoneNumberId: r.phoneNumberId,
      providerMessageId: '',
      type: r.lastType ?? c.type,
      contextProviderMessageId: null,
      contextMessageId: null,
      createdAt: r.lastMessageAt,
      readAt: null,
    },
    c,
    'media' in c ? { id: 'med_0', mimeType: '', sha256: null, fileSize: null } : null,
  );
  return summaryOf(view);
}

function conversationOf(
  keyring: ContentKeyring,
  portalId: number,
  r: ConversationListRow,
  now: Date,
): InboxConversation {
  const name = [r.contactFirstName, r.contactLastName].filter(Boolean).join(' ');
  const expires = r.lastInboundAt ? r.lastInboundAt.getTime() + SERVICE_WINDOW_MS : 0;
  return {
    id: r.id,
    contactId: r.contactId,
    name: name || null,
    phone: r.contactPhone,
    phoneNumberId: r.phoneNumberId,
    preview: previewOf(keyring, portalId, r),
    lastDirection: r.lastDirection,
    lastMessageAt: r.lastMessageAt.toISOString(),
    unreadCount: r.unreadCount,
    windowExpiresAt: expires > now.getTime() ? new Date(expires).toISOString() : null,
  };
}

export interface InboxDataDeps {
  db: Database;
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
    async changedSince(portalId, since, limit) {
      const rows = await db
        .select({ id: conversations.id })
        .from(conversations)
        .where(and(eq(conversations.portalId, portalId), gt(conversations.lastMessageAt, since)))
        .orderBy(desc(conversations.lastMessageAt))
        .limit(limit);
      return rows.map((r) => r.id);
    },
    async conversations(portalId, page) {
      const after = page.cursor ? conversationCursor.decodeCursor(page.cursor) : undefined;
      const { rows, hasMore } = await listConversationPage(db, portalId, {
        limit: page.limit,
        after,
        filter: {},
      });
      const now = new Date();
      const last = rows.at(-1);
      return {
        items: rows.map((r) => conversationOf(keyring, portalId, r, now)),
        nextCursor:
          hasMore && last
            ? conversationCursor.encodeCursor({ createdAt: last.createdAt, id: last.id })
            : null,
      };
    },
    async conversation(portalId, id) {
      const row = await findConversation(db, portalId, id);
      return row ? conversationOf(keyring, portalId, row, new Date()) : null;
    },
    async messages(portalId, conversationId, page) {
      const row = await findConversation(db, portalId, conversationId);
      if (!row) return { items: [], nextCursor: null };
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
