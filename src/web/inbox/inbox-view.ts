/**
 * What the inbox shows, as the API serves it (`GET /messaging/conversations`, the messages of
 * both directions), and the words it puts on them: a conversation's title and preview, the
 * service window ("5 h left" or "templates only"), a message's one-line summary (for quotes and
 * previews), times. Pure: no I/O.
 *
 * @see docs/messaging.md "Inbox"
 */

/** A conversation as the inbox lists it. */
export interface InboxConversation {
  /** `cnv_…` */
  id: string;
  contactId: string;
  /** The contact's name, when known. */
  name: string | null;
  /**
   * How the person is reached: their phone (E.164), else their WhatsApp username (`@…`) or
   * business-scoped user id, for a person who wrote without a phone number.
   */
  phone: string;
  /** The business number: its phone number id. */
  phoneNumberId: string;
  /** The last message's one line, or null when its content is gone. */
  preview: string | null;
  lastDirection: 'inbound' | 'outbound';
  /** ISO 8601. */
  lastMessageAt: string;
  unreadCount: number;
  /** When the 24-hour service window closes (ISO 8601); null when it is closed. */
  windowExpiresAt: string | null;
  /** `open`, `pending`, `resolved` or `snoozed`. */
  status: 'open' | 'pending' | 'resolved' | 'snoozed';
  /** When a snooze ends (ISO 8601). */
  snoozedUntil: string | null;
  /** The member working it (`usr_…`); null: unassigned. */
  assigneeId: string | null;
  labels: string[];
}

/** A location, sent or received (degrees). */
export interface InboxLocation {
  latitude: number;
  longitude: number;
  name?: string | undefined;
  address?: string | undefined;
}

/** A message a person sent, as the API's `InboundMessage` (the fields the inbox reads). */
export interface InboxInbound {
  id: string;
  direction: 'inbound';
  type: string;
  providerMessageId: string;
  text?: { body: string } | undefined;
  media?:
    | {
        id: string;
        mimeType: string;
        caption?: string | null | undefined;
        filename?: string | null | undefined;
        /** An audio recorded in WhatsApp (a voice message). */
        voice?: boolean | undefined;
      }
    | undefined;
  location?: InboxLocation | undefined;
  contacts?: readonly unknown[] | undefined;
  interactive?:
    | { buttonReply?: { title: string } | undefined; listReply?: { title: string } | undefined }
    | undefined;
  button?: { text: string } | undefined;
  reaction?: { messageId: string | null; providerMessageId: string; emoji: string } | undefined;
  unsupported?: { providerType: string } | undefined;
  context: {
    messageId: string | null;
    providerMessageId: string | null;
    forwarded: boolean;
    frequentlyForwarded?: boolean | undefined;
  } | null;
  /** The click-to-WhatsApp ad the person came from (the API's `Referral`). */
  referral?:
    | {
        headline?: string | undefined;
        body?: string | undefined;
        sourceUrl?: string | undefined;
        sourceType?: string | undefined;
      }
    | undefined;
  contentErased?: true | undefined;
  receivedAt: string;
}

/** An outbound medium as the API's kind object: by our media id or an https link. */
export interface OutboundMedium {
  mediaId?: string | undefined;
  link?: string | undefined;
  caption?: string | undefined;
  filename?: string | undefined;
  /** An audio sent as a voice message. */
  voice?: boolean | undefined;
}

/** An outbound `interactive` object (the Cloud API's, camelCase): buttons, a list, a link. */
export interface OutboundInteractive {
  type: string;
  header?: { type: string; text?: string | undefined } | undefined;
  body?: { text: string } | undefined;
  footer?: { text: string } | undefined;
  action?:
    | {
        buttons?: { reply: { id: string; title: string } }[] | undefined;
        button?: string | undefined;
        sections?:
          | {
              title?: string | undefined;
              rows: { id: string; title: string; description?: string | undefined }[];
            }[]
          | undefined;
        parameters?: { displayText: string; url: string } | undefined;
      }
    | undefined;
}

/** A message the business sent, as the API's `Message` (the fields the inbox reads). */
export interface InboxOutbound {
  id: string;
  direction?: 'outbound' | undefined;
  type: string;
  providerMessageId: string | null;
  text?: { body: string } | undefined;
  template?: { name: string; parameters?: string[] | undefined } | undefined;
  image?: OutboundMedium | undefined;
  video?: OutboundMedium | undefined;
  audio?: OutboundMedium | undefined;
  document?: OutboundMedium | undefined;
  sticker?: OutboundMedium | undefined;
  location?: InboxLocation | undefined;
  interactive?: OutboundInteractive | undefined;
  reaction?: { messageId: string; emoji: string } | undefined;
  /** The message this one quotes (`msg_…`). */
  context?: { messageId: string } | null | undefined;
  status: 'queued' | 'sent' | 'delivered' | 'read' | 'failed';
  error?: { code: number | string; title: string } | null | undefined;
  queuedAt: string;
}

export type InboxMessage = InboxInbound | InboxOutbound;

export const isInbound = (m: InboxMessage): m is InboxInbound => m.direction === 'inbound';

/** When a message happened (received or queued), ISO 8601. */
export const timeOf = (m: InboxMessage): string => (isInbound(m) ? m.receivedAt : m.queuedAt);

/** A conversation's title: the contact's name, else the phone. */
export const titleOf = (c: Pick<InboxConversation, 'name' | 'phone'>): string =>
  c.name && c.name.trim() ? c.name : c.phone;

/**
 * The service window in words at `now`: open with the hours left (rounded up), or closed
 * ("templates only").
 */
export function windowWords(expiresAt: string | null, now: Date): { open: boolean; words: string } {
  const left = expiresAt === null ? 0 : Date.parse(expiresAt) - now.getTime();
  if (left <= 0) return { open: false, words: 'Templates only' };
  const hours = Math.ceil(left / 3_600_000);
  return {
    open: true,
    words: hours <= 1 ? 'Window open · < 1 h left' : `Window open · ${hours} h left`,
  };
}

/** A time as the list and the bubbles show it: `HH:MM` today (UTC), else `27 Nov`. */
export function shortTime(iso: string, now: Date): { iso: string; text: string } {
  const d = new Date(iso);
  const sameDay = d.toISOString().slice(0, 10) === now.toISOString().slice(0, 10);
  const text = sameDay
    ? d.toISOString().slice(11, 16)
    : d.toLocaleDateString('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
  return { iso: d.toISOString(), text };
}

const MEDIA_WORDS: Record<string, string> = {
  image: 'Photo',
  video: 'Video',
  audio: 'Audio',
  document: 'Document',
  sticker: 'Sticker',
};

/** The medium of an outbound media message (image, video, audio, document, sticker). */
export function outboundMedium(m: InboxOutbound): OutboundMedium | undefined {
  return m.image ?? m.video ?? m.audio ?? m.document ?? m.sticker;
}

function outboundSummary(m: InboxOutbound): string {
  if (m.text) return m.text.body;
  if (m.template) return `Template ${m.template.name}`;
  const medium = outboundMedium(m);
  if (medium) return medium.caption || medium.filename || MEDIA_WORDS[m.type] || 'Media';
  if (m.location) return m.location.name || 'Location';
  if (m.interactive) return m.interactive.body?.text ?? 'Buttons';
  if (m.reaction) return m.reaction.emoji ? `Reacted ${m.reaction.emoji}` : 'Removed a reaction';
  return m.type;
}

/** A message in one line (a quote's excerpt, a preview): its text, else what kind it is. */
export function summaryOf(m: InboxMessage): string {
  if (!isInbound(m)) return outboundSummary(m);
  if (m.contentErased) return 'Content no longer kept';
  if (m.text) return m.text.body;
  if (m.media?.voice) return 'Voice message';
  if (m.media) return m.media.caption || m.media.filename || MEDIA_WORDS[m.type] || 'Media';
  if (m.location) return m.location.name || 'Location';
  if (m.contacts) return `${m.contacts.length} shared contact(s)`;
  if (m.interactive)
    return m.interactive.buttonReply?.title ?? m.interactive.listReply?.title ?? 'Reply';
  if (m.button) return m.button.text;
  if (m.reaction) return m.reaction.emoji ? `Reacted ${m.reaction.emoji}` : 'Removed a reaction';
  if (m.unsupported) return `Unsupported message (${m.unsupported.providerType})`;
  return m.type;
}

/**
 * The thread as shown: reactions of both sides taken out of the flow and attached to the
 * message they name (the newest reaction per side wins; an empty emoji removes it), everything
 * else in time order, oldest first.
 */
export function arrangeThread(messages: readonly InboxMessage[]): {
  bubbles: InboxMessage[];
  reactionsOf: Map<string, Reaction[]>;
} {
  const sorted = [...messages].sort((a, b) =>
    timeOf(a) === timeOf(b) ? (a.id < b.id ? -1 : 1) : timeOf(a) < timeOf(b) ? -1 : 1,
  );
  const byWamid = new Map<string, string>();
  for (const m of sorted) if (m.providerMessageId) byWamid.set(m.providerMessageId, m.id);
  // Per message, the latest reaction of each side: theirs and ours.
  const latest = new Map<string, { them?: string; you?: string }>();
  const bubbles: InboxMessage[] = [];
  for (const m of sorted) {
    if (m.type === 'reaction' && m.reaction) {
      const by = isInbound(m) ? 'them' : 'you';
      const target = isInbound(m)
        ? (m.reaction.messageId ?? byWamid.get(m.reaction.providerMessageId))
        : m.reaction.messageId;
      if (target) latest.set(target, { ...latest.get(target), [by]: m.reaction.emoji });
      continue;
    }
    bubbles.push(m);
  }
  const reactionsOf = new Map<string, Reaction[]>();
  for (const [target, sides] of latest) {
    const items: Reaction[] = [];
    if (sides.them) items.push({ emoji: sides.them, by: 'them' });
    if (sides.you) items.push({ emoji: sides.you, by: 'you' });
    if (items.length > 0) reactionsOf.set(target, items);
  }
  return { bubbles, reactionsOf };
}

/** A reaction on a message: the emoji and whose it is. */
export interface Reaction {
  emoji: string;
  by: 'them' | 'you';
}
