/**
 * Queries over `conversations` (one row per contact and business number) and the thread of
 * messages in both directions. Invariant (docs/security.md, tenant isolation): every statement
 * filters by portal id in the statement itself, except the two sweeps across portals
 * (`claimClosingWindows`, `expireContent`), which touch no tenant's data beyond their own rows.
 *
 * Pages are the project's one keyset order (`db/keyset-page.ts`), newest first: conversations on
 * `(last_message_at, id)` (index `conversations_portal_page`), messages on `(created_at, id)`
 * (message-thread-repository.ts).
 *
 * @see docs/messaging.md "Conversations"
 */
import { and, arrayContains, desc, eq, gt, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { contacts } from '../../db/schema/contacts.ts';
import {
  conversationReads,
  conversations,
  type ConversationStatus,
} from '../../db/schema/conversations.ts';
import { messages } from '../../db/schema/messages.ts';
import { keysetClauses, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import type { SealedValue } from '../../platform/keyring.ts';
import type { Db } from '../store/messages-repository.ts';
import { serviceWindowAt, windowClosingSql, windowOpenSql } from '../store/service-window.ts';

export type Direction = 'inbound' | 'outbound';

/** Public conversation id: `cnv_` + base62 of 16 random bytes. */
export function newConversationId(): string {
  return `cnv_${randomBase62(16)}`;
}

/**
 * Record a message of either direction in its conversation (created on the first): the last
 * message moves forward only (a late webhook never replaces a newer one), an inbound message
 * adds one to the unread count and moves `last_inbound_at` (the service window) forward.
 * Run it in the transaction that stores the message.
 */
export async function recordConversationMessage(
  tx: Db,
  m: {
    portalId: number;
    contactId: string;
    phoneNumberId: string;
    messageId: string;
    direction: Direction;
    at: Date;
  },
): Promise<void> {
  const inbound = m.direction === 'inbound';
  const newer = sql`excluded.last_message_at >= ${conversations.lastMessageAt}`;
  await tx
    .insert(conversations)
    .values({
      id: newConversationId(),
      portalId: m.portalId,
      contactId: m.contactId,
      phoneNumberId: m.phoneNumberId,
      lastMessageId: m.messageId,
      lastMessageAt: m.at,
      lastDirection: m.direction,
      unreadCount: inbound ? 1 : 0,
      lastInboundAt: inbound ? m.at : null,
    })
    .onConflictDoUpdate({
      target: [conversations.portalId, conversations.contactId, conversations.phoneNumberId],
      set: {
        lastMessageId: sql`case when ${newer} then excluded.last_message_id else ${conversations.lastMessageId} end`,
        lastDirection: sql`case when ${newer} then excluded.last_direction else ${conversations.lastDirection} end`,
        lastMessageAt: sql`greatest(${conversations.lastMessageAt}, excluded.last_message_at)`,
        unreadCount: sql`${conversations.unreadCount} + excluded.unread_count`,
        lastInboundAt: sql`greatest(${conversations.lastInboundAt}, excluded.last_inbound_at)`,
      },
    });
}

/**
 * Lower a conversation's unread count by `count` inbound messages just marked read (never
 * below 0).
 */
export async function markConversationRead(
  tx: Db,
  c: { portalId: number; contactId: string; phoneNumberId: string; count: number },
): Promise<void> {
  await tx
    .update(conversations)
    .set({ unreadCount: sql`greatest(${conversations.unreadCount} - ${c.count}, 0)` })
    .where(
      and(
        eq(conversations.portalId, c.portalId),
        eq(conversations.contactId, c.contactId),
        eq(conversations.phoneNumberId, c.phoneNumberId),
      ),
    );
}

export interface ConversationFilter {
  /** Only conversations with unread inbound messages (the portal's count, read at the provider). */
  unread?: boolean | undefined;
  /** Only conversations whose service window is open at this instant. */
  windowOpenAt?: Date | undefined;
  status?: ConversationStatus | undefined;
  /** Only those assigned to this user (`users.id`); null: only unassigned ones. */
  assigneeId?: number | null | undefined;
  /** Only those carrying this label. */
  label?: string | undefined;
}

/** A conversation with its contact and last message, as one list row. */
export interface ConversationListRow {
  id: string;
  contactId: string;
  contactFirstName: string | null;
  contactLastName: string | null;
  /** Null for a person known only by their business-scoped user id. */
  contactPhone: string | null;
  contactWaUserId: string | null;
  contactUsername: string | null;
  contactProfileName: string | null;
  phoneNumberId: string;
  lastMessageId: string;
  lastDirection: Direction;
  /** The last message's type (null only if the message row is gone). */
  lastType: string | null;
  /** Its sealed content (null when expired or erased). */
  lastContent: SealedValue | null;
  /** An outbound template's name (shown when the content is gone). */
  lastTemplateName: string | null;
  lastMessageAt: Date;
  unreadCount: number;
  lastInboundAt: Date | null;
  status: ConversationStatus;
  snoozedUntil: Date | null;
  assigneeId: number | null;
  labels: string[];
  /**
   * Inbound messages (not reactions) stored after the reader's read mark; null when no reader was
   * given or the reader never opened the conversation.
   */
  readerUnread: number | null;
  /** The keyset position (`lastMessageAt`), for the cursor. */
  createdAt: Date;
}

const last = alias(messages, 'last_message');

const listColumns = {
  id: conversations.id,
  contactId: conversations.contactId,
  contactFirstName: contacts.firstName,
  contactLastName: contacts.lastName,
  contactPhone: contacts.phone,
  contactWaUserId: contacts.waUserId,
  contactUsername: contacts.username,
  contactProfileName: contacts.profileName,
  phoneNumberId: conversations.phoneNumberId,
  lastMessageId: conversations.lastMessageId,
  lastDirection: conversations.lastDirection,
  lastType: last.type,
  lastContent: sql<SealedValue | null>`${last.content}`,
  lastTemplateName: last.templateName,
  lastMessageAt: conversations.lastMessageAt,
  unreadCount: conversations.unreadCount,
  lastInboundAt: conversations.lastInboundAt,
  status: conversations.status,
  snoozedUntil: conversations.snoozedUntil,
  assigneeId: conversations.assigneeId,
  labels: conversations.labels,
  createdAt: conversations.lastMessageAt,
};

/**
 * The reader's unread count: the inbound messages (not reactions) of the conversation stored
 * after the reader's read mark, null without a mark. One indexed count per listed row
 * (`messages_portal_contact_page`); a page holds at most 100 rows.
 */
function readerUnreadSql(readerId: number | undefined): SQL<number | null> {
  if (readerId === undefined) return sql<null>`null::int`;
  return sql<number | null>`(select (select count(*)::int from ${messages} m
      where m.portal_id = ${conversations.portalId} and m.contact_id = ${conversations.contactId}
        and m.phone_number_id = ${conversations.phoneNumberId} and m.direction = 'inbound'
        and m.type <> 'reaction' and m.stored_at > r.read_at)
    from ${conversationReads} r
    where r.conversation_id = ${conversations.id} and r.user_id = ${readerId})`;
}

function selectConversations(db: Db, readerId?: number) {
  return db
    .select({ ...listColumns, readerUnread: readerUnreadSql(readerId) })
    .from(conversations)
    .innerJoin(
      contacts,
      and(eq(contacts.portalId, conversations.portalId), eq(contacts.id, conversations.contactId)),
    )
    .leftJoin(
      last,
      and(eq(last.portalId, conversations.portalId), eq(last.id, conversations.lastMessageId)),
    );
}

/**
 * One page of the portal's conversations, newest activity first, keyset on
 * `(last_message_at, id)`; the contact and the last message joined by primary key.
 *
 * @param options.limit rows wanted; one more is read to know whether a next page exists.
 */
export async function listConversationPage(
  db: Db,
  portalId: number,
  options: {
    limit: number;
    after?: PagePosition | undefined;
    filter: ConversationFilter;
    /** The member whose unread count `readerUnread` gives (`users.id`). */
    readerId?: number | undefined;
  },
): Promise<KeysetPage<ConversationListRow>> {
  const { filter } = options;
  const conditions: SQL[] = [eq(conversations.portalId, portalId)];
  if (filter.unread) conditions.push(gt(conversations.unreadCount, 0));
  const openAt = filter.windowOpenAt;
  if (openAt) conditions.push(windowOpenSql(conversations.lastInboundAt, openAt));
  if (filter.status) conditions.push(eq(conversations.status, filter.status));
  if (filter.assigneeId === null) conditions.push(isNull(conversations.assigneeId));
  else if (filter.assigneeId !== undefined)
    conditions.push(eq(conversations.assigneeId, filter.assigneeId));
  if (filter.label !== undefined)
    conditions.push(arrayContains(conversations.labels, [filter.label]));
  const { where, orderBy } = keysetClauses(
    { createdAt: conversations.lastMessageAt, id: conversations.id },
    conditions,
    options.after,
  );
  const rows = await selectConversations(db, options.readerId)
    .where(where)
    .orderBy(...orderBy)
    .limit(options.limit + 1);
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}

/** One conversation by its id, with its contact and last message; null when not the portal's. */
export async function findConversation(
  db: Db,
  portalId: number,
  id: string,
  readerId?: number,
): Promise<ConversationListRow | null> {
  const [row] = await selectConversations(db, readerId).where(
    and(eq(conversations.portalId, portalId), eq(conversations.id, id)),
  );
  return row ?? null;
}

/**
 * The ids of the portal's conversations whose newest message is after `since`, newest first, at
 * most `limit`.
 */
export async function conversationIdsChangedSince(
  db: Db,
  portalId: number,
  since: Date,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .select({ id: conversations.id })
    .from(conversations)
    .where(and(eq(conversations.portalId, portalId), gt(conversations.lastMessageAt, since)))
    .orderBy(desc(conversations.lastMessageAt))
    .limit(limit);
  return rows.map((r) => r.id);
}

/** A window about to close: the conversation and when its window ends. */
interface ClosingWindow {
  portalId: number;
  conversationId: string;
  contactId: string;
  phoneNumberId: string;
  expiresAt: Date;
}

/**
 * Claim the service windows (of every portal) that close within `leadMs` of `now` and have not
 * been announced for their current opening: `window_closing_notified_at` is set in the same
 * statement, so each window is claimed once, whichever instance runs the sweep. A window that a
 * new inbound message extended is claimed again before its new end.
 */
export async function claimClosingWindows(
  tx: Db,
  now: Date,
  leadMs: number,
): Promise<ClosingWindow[]> {
  const rows = await tx
    .update(conversations)
    .set({ windowClosingNotifiedAt: now })
    .where(
      and(
        windowClosingSql(conversations.lastInboundAt, now, leadMs),
        or(
          isNull(conversations.windowClosingNotifiedAt),
          lt(conversations.windowClosingNotifiedAt, conversations.lastInboundAt),
        ),
      ),
    )
    .returning({
      portalId: conversations.portalId,
      conversationId: conversations.id,
      contactId: conversations.contactId,
      phoneNumberId: conversations.phoneNumberId,
      lastInboundAt: conversations.lastInboundAt,
    });
  // Claimed because open at `now`, so each has its closing instant.
  return rows.map(({ lastInboundAt, ...r }) => ({
    ...r,
    expiresAt: serviceWindowAt(lastInboundAt, now).expiresAt!,
  }));
}
