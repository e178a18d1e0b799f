/**
 * Conversations as the API and the inbox show them (the read model's one mapping, its window
 * from service-window.ts), and the short preview of a message: its text, caption, file name or
 * what kind of message it is, from its opened content (either direction).
 *
 * @see docs/messaging.md "Conversations"
 */
import { memberIdOrNull } from '../../accounts/member-id.ts';
import { keysetCursor } from '../../api-kit/keyset-cursor.ts';
import type { ConversationListRow } from './conversations-repository.ts';
import { PREVIEW_MAX, type Conversation } from './conversations-schemas.ts';
import { serviceWindowAt } from '../store/service-window.ts';

export const conversationCursor = keysetCursor(/^cnv_[0-9A-Za-z]{1,60}$/);

/** What a message is, in words, when it has no text of its own. */
const KIND: Record<string, string> = {
  image: 'Photo',
  audio: 'Audio',
  video: 'Video',
  document: 'Document',
  sticker: 'Sticker',
  location: 'Location',
  contacts: 'Contact card',
  reaction: 'Reaction',
  template: 'Template',
};

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null;
const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

/** The text a content carries, if any (its shape is the Cloud API's, camelCased). */
function textOf(content: Json): string | null {
  const media = obj(content.media);
  const location = obj(content.location);
  const interactive = obj(content.interactive);
  const reply = obj(interactive?.buttonReply) ?? obj(interactive?.listReply);
  const contact = obj(Array.isArray(content.contacts) ? content.contacts[0] : null);
  return (
    str(obj(content.text)?.body) ??
    str(media?.caption) ??
    str(media?.filename) ??
    str(location?.name) ??
    str(location?.address) ??
    str(obj(contact?.name)?.formattedName) ??
    str(reply?.title) ??
    str(obj(content.button)?.text) ??
    str(obj(content.reaction)?.emoji)
  );
}

/**
 * Up to {@link PREVIEW_MAX} characters (on one line) of a message: its text, or its kind.
 *
 * @param content the opened content (null when it expired, was erased or cannot be opened).
 * @returns null when there is no content, except a template, which is named.
 */
export function messagePreview(
  type: string | null,
  content: unknown,
  templateName: string | null = null,
): string | null {
  const opened = obj(content);
  const text = opened ? textOf(opened) : null;
  const kind = type === 'template' && templateName ? `Template ${templateName}` : KIND[type ?? ''];
  const shown = text ?? (opened || type === 'template' ? (kind ?? 'Message') : null);
  if (shown === null) return null;
  const line = shown.replace(/\s+/gu, ' ').trim();
  const chars = [...line];
  return chars.length <= PREVIEW_MAX ? line : `${chars.slice(0, PREVIEW_MAX - 1).join('')}…`;
}

/**
 * A list row as the API shows it; `preview` comes from the opened last message. `unreadCount`
 * is the reader's own when the row was read for a reader who opened the conversation
 * (`readerUnread`), else the portal's (inbound messages not marked read at the provider).
 */
export function toConversation(
  row: ConversationListRow,
  preview: string | null,
  now: Date,
): Conversation {
  const name =
    [row.contactFirstName, row.contactLastName].filter((n) => n).join(' ') ||
    (row.contactProfileName ?? row.contactUsername ?? '');
  const { expiresAt } = serviceWindowAt(row.lastInboundAt, now);
  return {
    id: row.id,
    contact: {
      id: row.contactId,
      name: name === '' ? null : name,
      phone: row.contactPhone,
      waUserId: row.contactWaUserId,
      username: row.contactUsername,
    },
    phoneNumberId: row.phoneNumberId,
    lastMessage: {
      id: row.lastMessageId,
      direction: row.lastDirection,
      type: row.lastType ?? 'unknown',
      preview,
      at: row.lastMessageAt.toISOString(),
    },
    unreadCount: row.readerUnread ?? row.unreadCount,
    windowExpiresAt: expiresAt?.toISOString() ?? null,
    lastActivityAt: row.lastMessageAt.toISOString(),
    status: row.status,
    snoozedUntil: row.snoozedUntil?.toISOString() ?? null,
    assigneeId: memberIdOrNull(row.assigneeId),
    labels: row.labels,
  };
}
