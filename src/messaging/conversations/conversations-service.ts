/**
 * Conversations: the list of a portal's conversations (`GET /messaging/conversations`), the
 * messages of both directions (`GET /messaging/messages`, `/{id}`), and the sweep (a background task, `conversations.sweep`
 * in services.ts; each step is one claiming statement, so a run repeats nothing):
 * `conversation.window_closing` an hour before a service window closes, once per window, and
 * the erasure of content older than the retention period.
 *
 * The conversation read model is one query (conversations-repository.ts) and one mapping
 * (conversation-view.ts, applied by `viewOf` here), served to the API and to the inbox alike
 * (`listConversations`, `getConversation`); the service window is service-window.ts. The other
 * pieces: the thread's queries in message-thread-repository.ts and its shapes in
 * message-list.ts, settings in messaging-settings.ts,
 * retention in content-retention.ts.
 *
 * @see docs/messaging.md "Conversations", "Opt-out keywords", "Retention"
 */
import { parseMemberId } from '../../accounts/member-id.ts';
import type { Database } from '../../db/client.ts';
import type { Keyring } from '../../platform/keyring.ts';
import type { Logger } from '../../platform/logger.ts';
import { AppError } from '../../platform/errors.ts';
import { fittingView, rowCheck } from '../../platform/row-fit.ts';
import type {
  ContentKeyring,
  OutboundContent,
  StoredInboundContent,
} from '../store/message-content.ts';
import type { ListMessagesQuery } from '../store/messages-schemas.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import type { PortalOf } from '../store/messaging-types.ts';
import { expireContent } from './content-retention.ts';
import { createConversationNotes, type ConversationNotes } from './conversation-notes.ts';
import { createConversationWork, type MemberPrincipal } from './conversation-work.ts';
import { conversationCursor, messagePreview, toConversation } from './conversation-view.ts';
import {
  claimClosingWindows,
  conversationIdsChangedSince,
  findConversation,
  listConversationPage,
  type ConversationListRow,
} from './conversations-repository.ts';
import {
  ConversationSchema,
  type Conversation,
  type ConversationUpdate,
  type ListConversationsQuery,
} from './conversations-schemas.ts';
import { findAnyMessage, listBothDirections, openOrNull, type AnyMessage } from './message-list.ts';

const fitsConversation = rowCheck(ConversationSchema);

/** `conversation.window_closing` is emitted this long before a window closes. */
const WINDOW_CLOSING_LEAD_MS = 3600_000;
/** The sweep's period by default: a minute (a window is announced 59–60 minutes ahead). */
export const SWEEP_INTERVAL_MS = 60_000;
const DAY_MS = 24 * 3600_000;

interface ConversationsServiceDeps {
  db: Database;
  logger: Logger;
  /** Opens message content and seals and opens notes (purpose `conversation-note`). */
  keyring: ContentKeyring & Pick<Keyring, 'seal' | 'open'>;
  /** Days content is kept (`MESSAGING_CONTENT_RETENTION_DAYS`). */
  retentionDays: number;
  /**
   * Where `conversation.window_closing` (the sweep), `conversation.work_changed` and
   * `conversation.note_added` are emitted, each in the transaction of its change.
   */
  events?: MessagingEvents | undefined;
  now?: () => Date;
}

/**
 * Whose unread count a read shows: a member (`users.id`) who opened the conversation gets their
 * own; otherwise the portal's (docs/decisions/0064-conversations-worked-by-a-team.md).
 */
interface ReadFor {
  readerId?: number | undefined;
}

export interface ConversationsService {
  /**
   * A page of conversations, newest activity first, filtered by the query (`status`,
   * `assigneeId` (`usr_…` or `none`), `label`, `unread`, `window`).
   *
   * @throws AppError `invalid_request` (a cursor this list did not give).
   */
  listConversations(
    principal: PortalOf,
    query: ListConversationsQuery,
    readFor?: ReadFor,
  ): Promise<{ items: Conversation[]; nextCursor: string | null }>;
  /**
   * One conversation of the portal, in the shape of the list's items; null when unknown or
   * another portal's.
   */
  getConversation(principal: PortalOf, id: string, readFor?: ReadFor): Promise<Conversation | null>;
  /**
   * Change a conversation's status, snooze, assignee or labels as a member, and return it.
   *
   * @throws AppError `not_found`, `invalid_request` (conversation-work.ts).
   */
  updateConversation(
    principal: MemberPrincipal,
    id: string,
    update: ConversationUpdate,
    requestId?: string,
  ): Promise<Conversation>;
  /** A member opened the conversation: its messages so far are read for them. False: not found. */
  markReadBy(principal: MemberPrincipal, id: string): Promise<boolean>;
  /** Private notes (conversation-notes.ts). */
  notes: ConversationNotes;
  /**
   * The ids of the portal's conversations with a message after `since`, newest first, at most
   * `limit`: what a reconnecting inbox replays.
   */
  conversationsChangedSince(principal: PortalOf, since: Date, limit: number): Promise<string[]>;
  /** A page of messages of both directions. @throws AppError `invalid_request`. */
  listMessages(
    principal: PortalOf,
    query: ListMessagesQuery,
  ): Promise<{ items: AnyMessage[]; nextCursor: string | null }>;
  /** @throws AppError `not_found` for an unknown id and another portal's alike. */
  getMessage(principal: PortalOf, id: string): Promise<AnyMessage>;
  /** One sweep: windows closing, snoozes ended, content expired. Returns what it did. */
  sweep(): Promise<{
    windowsClosing: number;
    snoozesEnded: number;
    expired: { inbound: number; outbound: number };
  }>;
}

export function createConversationsService(deps: ConversationsServiceDeps): ConversationsService {
  const { db, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const log = logger.child({ component: 'conversations' });
  const listDeps = { db, keyring: deps.keyring, logger: log };
  const work = createConversationWork({ db, events: deps.events, now });
  const notes = createConversationNotes({
    db,
    keyring: deps.keyring,
    logger: log,
    events: deps.events,
    now,
  });

  async function sweep() {
    const at = now();
    const windowsClosing = await db.transaction(async (tx) => {
      const due = await claimClosingWindows(tx, at, WINDOW_CLOSING_LEAD_MS);
      for (const w of due) {
        await deps.events?.emitSerial('conversation.window_closing', {
          tx,
          portalId: w.portalId,
          conversationId: w.conversationId,
          contactId: w.contactId,
          phoneNumberId: w.phoneNumberId,
          expiresAt: w.expiresAt.toISOString(),
        });
      }
      return due.length;
    });
    const snoozesEnded = await work.endSnoozes();
    const expired = await expireContent(db, new Date(at.getTime() - deps.retentionDays * DAY_MS));
    return { windowsClosing, snoozesEnded, expired };
  }

  /**
   * The read model's one mapping: a stored row as the API and the inbox show it (the last
   * message's preview opened from its sealed content, the window from service-window.ts); a row
   * that does not fit its schema is shown without what does not (platform/row-fit.ts), or not
   * at all (null).
   */
  function viewOf(portalId: number, row: ConversationListRow, at: Date): Conversation | null {
    const content = openOrNull<OutboundContent | StoredInboundContent>(
      listDeps,
      portalId,
      row.lastMessageId,
      row.lastContent,
    );
    return fittingView(
      fitsConversation,
      () => toConversation(row, messagePreview(row.lastType, content, row.lastTemplateName), at),
      () => ({ ...toConversation(row, null, at), windowExpiresAt: null }),
      (outcome) =>
        log.warn(
          { portalId, conversationId: row.id, outcome },
          'a stored conversation does not fit its schema',
        ),
    );
  }

  return {
    async listConversations(principal, query, readFor = {}) {
      const at = now();
      const page = await listConversationPage(db, principal.portalId, {
        limit: query.limit,
        after: conversationCursor.after(query.cursor),
        filter: {
          unread: query.unread,
          windowOpenAt: query.window === 'open' ? at : undefined,
          status: query.status,
          // The schema admits `usr_<id>` or `none` only.
          assigneeId:
            query.assigneeId === undefined
              ? undefined
              : query.assigneeId === 'none'
                ? null
                : (parseMemberId(query.assigneeId) ?? -1),
          label: query.label?.trim(),
        },
        readerId: readFor.readerId,
      });
      const shown = conversationCursor.page(page, (row) => viewOf(principal.portalId, row, at));
      return { ...shown, items: shown.items.filter((c) => c !== null) };
    },

    async getConversation(principal, id, readFor = {}) {
      const row = await findConversation(db, principal.portalId, id, readFor.readerId);
      return row ? viewOf(principal.portalId, row, now()) : null;
    },

    async updateConversation(principal, id, update, requestId) {
      await work.update(principal, id, update, requestId);
      const row = await findConversation(db, principal.portalId, id);
      // Found under the lock a moment ago; only a concurrent erasure removes it in between.
      const view = row ? viewOf(principal.portalId, row, now()) : null;
      if (!view) throw new AppError('not_found', 'No conversation with this id.');
      return view;
    },

    markReadBy: (principal, id) => work.markReadBy(principal, id),

    notes,

    conversationsChangedSince: (principal, since, limit) =>
      conversationIdsChangedSince(db, principal.portalId, since, limit),

    listMessages: (principal, query) => listBothDirections(listDeps, principal.portalId, query),

    getMessage: (principal, id) => findAnyMessage(listDeps, principal.portalId, id),

    sweep,
  };
}
