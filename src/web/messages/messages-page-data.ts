/**
 * The messaging engine's read side as `/messages` shows it: the log page, the counts per UTC
 * day of the last days (the maintained daily counts: each message counted under the furthest
 * status it reached), and the credit with its latest transactions.
 *
 * @see docs/messaging.md
 */
import type { ListMessagesQuery } from '../../messaging/store/messages-schemas.ts';
import type { MessagingService } from '../../messaging/store/messaging-types.ts';
import type { DailyCounts } from './messages-page-chart.tsx';
import type { CreditView, LoggedMessage, MessageFilters } from './messages-page.tsx';

/** What `/messages` reads of the messaging service. */
export type MessagingReads = Pick<
  MessagingService,
  'listMessages' | 'dailyCounts' | 'credit' | 'listCreditTransactions'
>;

const DAY_MS = 86_400_000;

/** Start of the UTC day of `at`. */
function utcDay(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** A `YYYY-MM-DD` form date as the start (or, for `until`, the end) of that UTC day. */
function dayBound(day: string | undefined, end: boolean): string | undefined {
  if (!day) return undefined;
  const start = Date.parse(`${day}T00:00:00.000Z`);
  if (Number.isNaN(start)) return undefined;
  return new Date(start + (end ? DAY_MS : 0)).toISOString();
}

export async function messageLogPage(
  messaging: MessagingReads,
  portalId: number,
  filters: MessageFilters,
  page: { cursor?: string | undefined; limit: number },
): Promise<{ items: LoggedMessage[]; nextCursor: string | null }> {
  const since = dayBound(filters.since, false);
  const until = dayBound(filters.until, true);
  const { items, nextCursor } = await messaging.listMessages(
    { portalId },
    {
      limit: page.limit,
      ...(page.cursor && { cursor: page.cursor }),
      ...(filters.status && { status: filters.status as NonNullable<ListMessagesQuery['status']> }),
      ...(filters.to && { to: filters.to }),
      ...(since && { since }),
      ...(until && { until }),
    },
  );
  return {
    items: items.map((m) => ({
      id: m.id,
      to: m.to,
      type: m.type,
      kind: kindWords(m),
      status: m.status,
      createdAt: m.queuedAt,
      error: m.error ?? null,
    })),
    nextCursor,
  };
}

const KIND_WORDS: Record<string, string> = {
  text: 'Text',
  template: 'Template',
  image: 'Photo',
  video: 'Video',
  audio: 'Audio',
  document: 'Document',
  sticker: 'Sticker',
  location: 'Location',
  contacts: 'Contacts',
  reaction: 'Reaction',
  interactive: 'Interactive',
};
const INTERACTIVE_WORDS: Record<string, string> = {
  button: 'Buttons',
  list: 'List',
  cta_url: 'Link button',
};

/** A message's kind in words: its type, and for `interactive` which one (buttons, list, …). */
export function kindWords(m: { type: string; interactive?: unknown }): string {
  const sub = (m.interactive as { type?: unknown } | undefined)?.type;
  if (m.type === 'interactive' && typeof sub === 'string' && INTERACTIVE_WORDS[sub])
    return INTERACTIVE_WORDS[sub];
  return KIND_WORDS[m.type] ?? m.type;
}

/**
 * Counts per UTC day of the last `days` days, today included (days without messages omitted),
 * from the messaging engine's maintained daily counts.
 */
export async function dailyCounts(
  messaging: MessagingReads,
  portalId: number,
  days: number,
  now = new Date(),
): Promise<DailyCounts[]> {
  const until = new Date(utcDay(now).getTime() + DAY_MS);
  const since = new Date(until.getTime() - days * DAY_MS);
  return messaging.dailyCounts(
    { portalId },
    { since: since.toISOString().slice(0, 10), until: until.toISOString().slice(0, 10) },
  );
}

/** The credit and its 10 latest transactions. */
export async function creditView(messaging: MessagingReads, portalId: number): Promise<CreditView> {
  const [credit, transactions] = await Promise.all([
    messaging.credit({ portalId }),
    messaging.listCreditTransactions({ portalId }, { limit: 10 }),
  ]);
  return {
    balance: credit.balance,
    reserved: credit.reserved,
    currency: credit.currency,
    transactions: transactions.items.map((x) => ({
      id: x.id,
      kind: x.kind,
      amount: x.amount,
      createdAt: x.createdAt,
      messageId: x.messageId,
    })),
  };
}
