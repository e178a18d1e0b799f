/**
 * Conversation changes across instances: the channel `portico_conversation_change`, the
 * publisher messaging calls inside the transaction that stores an inbound message (or a status),
 * and the hub an instance's inbox streams subscribe to, per portal.
 *
 * The payload names ids only, never content: `{"p": <portal id>, "c": ["cnv_…", …]}`, one
 * notification per portal and transaction (at most {@link IDS_PER_NOTIFICATION} ids each, well
 * under PostgreSQL's 8,000-byte payload limit). Sent inside the transaction, PostgreSQL delivers
 * it when the change commits and never when it rolls back, to every listening session
 * (PGlite: in-process, at commit).
 *
 * @see https://www.postgresql.org/docs/current/sql-notify.html
 * @see docs/decisions/0029-inbox.md
 */
import { sql } from 'drizzle-orm';
import type { Database, Storage } from '../../db/client.ts';
import {
  startNotificationListener,
  type ListenerTiming,
  type NotificationListener,
} from '../../db/notification-listener.ts';
import type { Logger } from '../../platform/logger.ts';

/** Channel name (an SQL identifier: lower case, no quoting needed). */
const CONVERSATION_CHANGE_CHANNEL = 'portico_conversation_change';

/** `application_name` of the listening session. */
export const CONVERSATION_LISTENER_NAME = 'portico-conversation-listener';

/** Most conversation ids in one notification. */
const IDS_PER_NOTIFICATION = 100;

/** Anything that can run a statement: the database or a transaction. */
type Executor = Pick<Database, 'execute'>;

const CONVERSATION_ID = /^cnv_[0-9A-Za-z]{1,60}$/;

/**
 * Queue, in the current transaction, one notification per portal for the conversations that
 * changed (duplicates dropped). Call it inside the transaction of the change.
 */
export async function notifyConversationChanges(
  tx: Executor,
  changes: readonly { portalId: number; conversationId: string }[],
): Promise<void> {
  const byPortal = new Map<number, Set<string>>();
  for (const { portalId, conversationId } of changes) {
    const ids = byPortal.get(portalId) ?? new Set<string>();
    ids.add(conversationId);
    byPortal.set(portalId, ids);
  }
  for (const [portalId, set] of byPortal) {
    const ids = [...set];
    for (let i = 0; i < ids.length; i += IDS_PER_NOTIFICATION) {
      const payload = JSON.stringify({ p: portalId, c: ids.slice(i, i + IDS_PER_NOTIFICATION) });
      await tx.execute(sql`select pg_notify(${CONVERSATION_CHANGE_CHANNEL}, ${payload})`);
    }
  }
}

/**
 * The same, for messages named by their contact and business number (a status of an outbound
 * message): the conversations are looked up in the same statement that notifies, at most
 * {@link IDS_PER_NOTIFICATION} ids a notification (a batch of statuses may name thousands).
 */
export async function notifyConversationsOf(
  tx: Executor,
  portalId: number,
  pairs: readonly { contactId: string; phoneNumberId: string }[],
): Promise<void> {
  if (pairs.length === 0) return;
  const keys = JSON.stringify(pairs.map((p) => ({ c: p.contactId, n: p.phoneNumberId })));
  await tx.execute(sql`
    select pg_notify(${CONVERSATION_CHANGE_CHANNEL},
      json_build_object('p', ${portalId}::int, 'c', json_agg(n.id order by n.id))::text)
    from (
      select d.id, (row_number() over (order by d.id) - 1) / ${sql.raw(String(IDS_PER_NOTIFICATION))} as part
      from (
        select distinct c.id from conversations c
        join json_to_recordset(${keys}::json) as k(c text, n text)
          on c.contact_id = k.c and c.phone_number_id = k.n
        where c.portal_id = ${portalId}) d) n
    group by n.part`);
}

/** A notification read back: the portal and its conversation ids, or null when malformed. */
function parseConversationChange(
  payload: string | undefined,
): { portalId: number; conversationIds: string[] } | null {
  if (payload === undefined || payload.length > 8000) return null;
  try {
    const parsed = JSON.parse(payload) as { p?: unknown; c?: unknown };
    if (typeof parsed.p !== 'number' || !Number.isSafeInteger(parsed.p)) return null;
    if (!Array.isArray(parsed.c)) return null;
    const ids = parsed.c.filter(
      (c): c is string => typeof c === 'string' && CONVERSATION_ID.test(c),
    );
    return { portalId: parsed.p, conversationIds: ids };
  } catch {
    return null;
  }
}

/**
 * What a subscriber hears: the conversations that changed, or `null` for "anything may have
 * changed" (the listener was not listening for a while: read everything again).
 */
type ConversationChangeHandler = (conversationIds: string[] | null) => void;

/** This instance's hub of conversation changes, fed by one LISTEN session. */
export interface ConversationEvents {
  /** Start listening (settles after the first attempt; never rejects). Idempotent. */
  start(): Promise<void>;
  /** Hear a portal's changes until the returned function is called. */
  subscribe(portalId: number, handler: ConversationChangeHandler): () => void;
  /** How many subscribers there are (all portals). */
  readonly subscribers: number;
  readonly listening: boolean;
  close(): Promise<void>;
}

export function createConversationEvents(deps: {
  storage: Storage;
  logger: Logger;
  listenUrl?: string | undefined;
  timing?: Partial<ListenerTiming> | undefined;
}): ConversationEvents {
  const byPortal = new Map<number, Set<ConversationChangeHandler>>();
  let listener: NotificationListener | null = null;
  let missed = false;
  let count = 0;
  const deliver = (portalId: number | null, ids: string[] | null) => {
    const targets =
      portalId === null ? [...byPortal.values()] : [byPortal.get(portalId) ?? new Set()];
    for (const set of targets)
      for (const handler of set) {
        try {
          handler(ids);
        } catch (err) {
          deps.logger.warn({ err }, 'a conversation change subscriber failed');
        }
      }
  };
  return {
    async start() {
      listener ??= startNotificationListener({
        storage: deps.storage,
        logger: deps.logger,
        channel: CONVERSATION_CHANGE_CHANNEL,
        applicationName: CONVERSATION_LISTENER_NAME,
        listenUrl: deps.listenUrl,
        timing: deps.timing,
        onNotify(payload) {
          const change = parseConversationChange(payload);
          if (change) deliver(change.portalId, change.conversationIds);
        },
        onListening() {
          if (missed) deliver(null, null);
          missed = false;
        },
        onLost() {
          missed = true;
        },
      });
      await listener.ready;
    },
    subscribe(portalId, handler) {
      const set = byPortal.get(portalId) ?? new Set();
      set.add(handler);
      byPortal.set(portalId, set);
      count++;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        count--;
        set.delete(handler);
        if (set.size === 0) byPortal.delete(portalId);
      };
    },
    get subscribers() {
      return count;
    },
    get listening() {
      return listener?.listening ?? false;
    },
    async close() {
      const l = listener;
      listener = null;
      await l?.close();
      byPortal.clear();
      count = 0;
    },
  };
}
