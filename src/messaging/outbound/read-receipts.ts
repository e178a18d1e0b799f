/**
 * Read receipts: marking a person's message read at the provider (`status: "read"`, the blue
 * ticks) and in Portico. The provider marks that message and every earlier one of the thread
 * read, so Portico does too: every unread inbound message of the same contact and business
 * number received up to it gets `read_at`, and the conversation's `unread_count` goes down by
 * their number (never below 0). Idempotent: a message already read changes nothing and calls no
 * one. `markReadOnOpen` is the inbox's: it marks a conversation's newest message read when the
 * portal's `auto_mark_read` setting says so (off when the portal has no settings row).
 *
 * The typing indicator rides on a read receipt (`typing_indicator: {type: "text"}`, Meta's one
 * call for it): `showTyping` marks the message read as `markRead` does and, even when it was
 * read already, asks the provider to show the person that the business is typing, until it
 * replies or 25 seconds pass; `showTypingInConversation` does it for a conversation's newest
 * message (the inbox's, when an agent starts a reply; docs/decisions/0057-meta-fidelity.md).
 *
 * Invariants: every statement filters by portal id; the provider is called before anything is
 * written (a refusal changes nothing); concurrent marks of one message write once.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
 * @see docs/messaging.md "Read receipts"
 */
import { and, desc, eq, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { conversations, messagingSettings } from '../../db/schema/conversations.ts';
import { messages } from '../../db/schema/messages.ts';
import { AppError } from '../../platform/errors.ts';
import type { ProviderAdapter } from '../provider/provider-adapter.ts';

/** The outcome of a mark: the message and when Portico recorded it read. */
export interface ReadReceipt {
  /** The inbound message (`msg_…`). */
  id: string;
  readAt: Date;
}

/** The outcome of a typing indicator: the read mark, and until when the person sees it. */
export interface TypingIndicator extends ReadReceipt {
  /** When the provider stops showing it at the latest (25 s after it was asked; a reply ends it sooner). */
  typingUntil: Date;
}

/** How long the provider shows a typing indicator without a reply (ms). */
export const TYPING_INDICATOR_MS = 25_000;

interface ReadReceiptsDeps {
  db: Database;
  provider: Pick<ProviderAdapter, 'markRead'>;
  /** The clock (tests move it). */
  now?: () => Date;
}

export type ReadReceipts = ReturnType<typeof createReadReceipts>;

/** A conversation's newest inbound message (its id and read time), if the person wrote. */
async function newestInbound(
  db: Database,
  portalId: number,
  conversation: { contactId: string; phoneNumberId: string },
) {
  const [newest] = await db
    .select({ id: messages.id, readAt: messages.readAt })
    .from(messages)
    .where(
      and(
        eq(messages.portalId, portalId),
        eq(messages.contactId, conversation.contactId),
        eq(messages.phoneNumberId, conversation.phoneNumberId),
        eq(messages.direction, 'inbound'),
      ),
    )
    .orderBy(desc(messages.createdAt), desc(messages.storedAt))
    .limit(1);
  return newest;
}

export function createReadReceipts(deps: ReadReceiptsDeps) {
  const { db, provider } = deps;
  const now = deps.now ?? (() => new Date());

  /**
   * Mark the portal's inbound message `messageId` read, at the provider and in Portico.
   *
   * @returns the message id and its `readAt` (the first mark's time on a repeat).
   * @throws AppError `not_found` (no inbound message with this id in the portal: an outbound
   *   message's id, another portal's), `not_connected` (409), `invalid_request` (the provider
   *   refuses the wamid), `provider_error` (502), `provider_timeout` (504).
   */
  async function markRead(portalId: number, messageId: string): Promise<ReadReceipt> {
    return mark(portalId, messageId, false);
  }

  /**
   * Show the person who wrote the portal's inbound message `messageId` that the business is
   * typing, marking it (and the thread up to it) read, at the provider and in Portico.
   *
   * @returns the mark (`readAt` the first mark's time on a repeat) and `typingUntil`.
   * @throws as `markRead`.
   */
  async function showTyping(portalId: number, messageId: string): Promise<TypingIndicator> {
    const receipt = await mark(portalId, messageId, true);
    return { ...receipt, typingUntil: new Date(now().getTime() + TYPING_INDICATOR_MS) };
  }

  async function mark(portalId: number, messageId: string, typing: boolean): Promise<ReadReceipt> {
    const [message] = await db
      .select()
      .from(messages)
      .where(
        and(
          eq(messages.portalId, portalId),
          eq(messages.id, messageId),
          eq(messages.direction, 'inbound'),
        ),
      );
    if (!message) throw new AppError('not_found', 'No inbound message with this id.');
    if (message.readAt !== null && !typing) return { id: message.id, readAt: message.readAt };
    // An inbound row always has its wamid (`messages_inbound_columns`).
    await provider.markRead(portalId, message.phoneNumberId, message.providerMessageId!, {
      typing,
    });
    if (message.readAt !== null) return { id: message.id, readAt: message.readAt };
    const readAt = now();
    return db.transaction(async (tx) => {
      // The thread up to this message: the same person (while the contact exists) and number.
      const thread =
        message.contactId === null
          ? eq(messages.id, message.id)
          : and(
              eq(messages.contactId, message.contactId),
              eq(messages.phoneNumberId, message.phoneNumberId),
              // Earlier: sent before it, or in the same second (the provider's unit) and
              // stored by Portico no later.
              or(
                lt(messages.createdAt, message.createdAt),
                and(
                  eq(messages.createdAt, message.createdAt),
                  lte(messages.storedAt, message.storedAt!),
                ),
              ),
            );
      const marked = await tx
        .update(messages)
        .set({ readAt })
        .where(
          and(
            eq(messages.portalId, portalId),
            eq(messages.direction, 'inbound'),
            isNull(messages.readAt),
            thread,
          ),
        )
        .returning({ id: messages.id });
      if (marked.length > 0 && message.contactId !== null)
        await tx
          .update(conversations)
          .set({ unreadCount: sql`greatest(${conversations.unreadCount} - ${marked.length}, 0)` })
          .where(
            and(
              eq(conversations.portalId, portalId),
              eq(conversations.contactId, message.contactId),
              eq(conversations.phoneNumberId, message.phoneNumberId),
            ),
          );
      if (marked.some((m) => m.id === message.id)) return { id: message.id, readAt };
      // A concurrent mark got there first: its time stands.
      const [now] = await tx
        .select({ readAt: messages.readAt })
        .from(messages)
        .where(and(eq(messages.portalId, portalId), eq(messages.id, message.id)));
      return { id: message.id, readAt: now?.readAt ?? readAt };
    });
  }

  /**
   * The inbox opened a conversation: when the portal's `auto_mark_read` is on, mark its newest
   * inbound message (and so the whole thread) read; otherwise nothing.
   *
   * @param conversation the conversation's contact (`ctc_…`) and business phone number id.
   * @returns the mark made, or null when the setting is off or nothing is unread.
   * @throws as `markRead` (the provider's refusals).
   */
  async function markReadOnOpen(
    portalId: number,
    conversation: { contactId: string; phoneNumberId: string },
  ): Promise<ReadReceipt | null> {
    const [settings] = await db
      .select({ autoMarkRead: messagingSettings.autoMarkRead })
      .from(messagingSettings)
      .where(eq(messagingSettings.portalId, portalId));
    if (!settings?.autoMarkRead) return null;
    const newest = await newestInbound(db, portalId, conversation);
    if (!newest || newest.readAt !== null) return null;
    return markRead(portalId, newest.id);
  }

  /**
   * An agent started a reply in the inbox: show the person the typing indicator on the
   * conversation's newest inbound message (marking the thread read, as the provider does).
   *
   * @returns the indicator, or null when the person never wrote on this number.
   * @throws as `markRead`.
   */
  async function showTypingInConversation(
    portalId: number,
    conversation: { contactId: string; phoneNumberId: string },
  ): Promise<TypingIndicator | null> {
    const newest = await newestInbound(db, portalId, conversation);
    return newest ? showTyping(portalId, newest.id) : null;
  }

  return { markRead, markReadOnOpen, showTyping, showTypingInConversation };
}
