/**
 * The provider's webhook events, applied (partner/'s `ProviderWebhookSink`; the receiver in
 * partner/ verifies the signature and routes by WABA to the portal).
 *
 * Statuses are monotonic: queued → sent → delivered → read, or → failed from queued or sent. An
 * event at or below the current status changes nothing (a `delivered` after `read`, any
 * duplicate); a higher one fills the times it implies (`read` fills `delivered_at` too). The
 * first event past `queued` settles the reservation: at the price of the category the
 * provider bills when it carries per-message `pricing` (recorded on the message; nothing when
 * it bills nothing), else at the reserved price (`billingOf`, credit/billed-pricing.ts);
 * `failed` from `queued` releases it (from `sent` it was settled already: the failure is
 * recorded, the charge stays). Captures and releases are ledger rows posted to the account row
 * in bulk afterwards (credit-ledger.ts); a charge beyond the reservation or a refund moves the
 * balance at once (`adjust`). Events are
 * matched by Portico's id (`biz_opaque_callback_data`) when present, else by wamid, always
 * within the portal; an unknown message is ignored. A status change is counted in the portal's
 * daily counts in the same transaction (store/daily-counts.ts).
 *
 * A webhook's statuses are accepted first: stored as one job and applied after the answer
 * (`queueStatuses`, status-queue.ts), the jobs of a portal waiting together
 * (docs/decisions/0060-status-sets.md). They are applied as a set, in one transaction of a few
 * statements whatever their number: the messages named locked in one statement, the events
 * folded over them in the order sent (exactly as one at a time would), then the messages, the
 * ledger rows, the daily counts, the inbox notifications and the tenant events written one
 * statement each. Should that transaction fail, the statuses are applied again one transaction
 * each, so one bad event never undoes the others (docs/decisions/0040-status-batches.md).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#message-status-updates
 * @see docs/messaging.md "Statuses"
 */
import { notifyConversationsOf } from '../store/conversation-changes.ts';
import type { Database } from '../../db/client.ts';
import type { JobTx } from '../../jobs/job-queue.ts';
import type { Logger } from '../../platform/logger.ts';
import { warnCaught } from '../../platform/process-faults.ts';
import { adjust, postCredit, settle } from '../credit/credit-ledger.ts';
import type { CategoryPriceTable } from '../credit/billed-pricing.ts';
import type {
  MessageStatusEvent,
  ProviderWebhookSink as MessagingWebhookSink,
} from '../../partner/cloud-api/provider-webhook-events.ts';
import type { createInboundIngestion } from '../inbound/inbound-ingestion.ts';
import { recordUserIdChange } from '../inbound/inbound-people.ts';
import type { MessagingEvents, StatusChangedEvent } from '../events/messaging-events.ts';
import { countStatusChanges, type StatusChange } from '../store/daily-counts.ts';
import {
  lockMessageForStatus,
  lockMessagesForStatuses,
  updateMessage,
  writeStatuses,
  type MessageRow,
  type Tx,
} from '../store/messages-repository.ts';
import type { StatusQueue, StatusToApply } from './status-queue.ts';
import { billingOf, type AdjustItem, type SettleItem } from './status-billing.ts';

const RANK = { queued: 0, sent: 1, delivered: 2, read: 3 } as const;
/** How often this instance posts a portal's captures and releases (ms). */
const POST_INTERVAL_MS = 1000;
const PROVIDER_ACTOR = 'provider';

/** The changes one status event makes to a message, or null for none. */
function statusChanges(
  row: Pick<MessageRow, 'status' | 'sentAt' | 'deliveredAt' | 'readAt'>,
  event: Pick<MessageStatusEvent, 'status' | 'timestamp' | 'errors'>,
): Partial<MessageRow> | null {
  if (row.status === 'failed') return null;
  const at = event.timestamp;
  if (event.status === 'failed') {
    if (row.status !== 'queued' && row.status !== 'sent') return null;
    const first = event.errors[0];
    return {
      status: 'failed',
      failedAt: at,
      errorCode: first ? String(first.code) : 'failed',
      errorTitle: first?.title ?? 'The provider could not deliver the message',
    };
  }
  const rank = RANK[event.status];
  if (rank <= RANK[row.status]) return null;
  return {
    status: event.status,
    sentAt: row.sentAt ?? at,
    ...(rank >= RANK.delivered && { deliveredAt: row.deliveredAt ?? at }),
    ...(rank >= RANK.read && { readAt: row.readAt ?? at }),
  };
}

async function applyStatus(
  tx: Tx,
  portalId: number,
  event: StatusToApply,
  bus: MessagingEvents | undefined,
  table: CategoryPriceTable | undefined,
): Promise<'applied' | 'unchanged' | 'unknown'> {
  const row = await lockMessageForStatus(tx, portalId, {
    id: callbackId(event),
    wamid: event.wamid,
  });
  if (!row) return 'unknown';
  const changes = statusChanges(row, event);
  const wamid = row.providerMessageId === null ? { providerMessageId: event.wamid } : {};
  const billing = billingOf({ ...row, ...(changes ?? {}) }, row.status, event, table);
  await settle(tx, portalId, billing.settle, PROVIDER_ACTOR);
  if (billing.adjust) {
    const [moved = 0] = await adjust(tx, portalId, [billing.adjust], PROVIDER_ACTOR);
    // A charge the available credit could not cover in full is charged for what it took.
    if (billing.adjust.kind === 'charge')
      billing.columns.chargedMinor =
        (billing.columns.chargedMinor ?? 0) - (billing.adjust.amount - moved);
  }
  if (!changes) {
    if (row.providerMessageId === null || Object.keys(billing.columns).length > 0)
      await updateMessage(tx, portalId, row.id, { ...wamid, ...billing.columns });
    return 'unchanged';
  }
  await updateMessage(tx, portalId, row.id, { ...changes, ...wamid, ...billing.columns });
  // An open inbox showing this message's conversation updates its ticks (ids only).
  if (changes.status && row.contactId !== null)
    await notifyConversationsOf(tx, portalId, [
      { contactId: row.contactId, phoneNumberId: row.phoneNumberId },
    ]);
  if (changes.status)
    await countStatusChanges(tx, portalId, [
      { id: row.id, createdAt: row.createdAt, from: row.status, to: changes.status },
    ]);
  await bus?.emitSerial('message.status_changed', {
    tx,
    portalId,
    change: changedEvent(row.id, event),
  });
  return 'applied';
}

/**
 * Apply the events one transaction each (`applyStatus`): the batch's fallback, and the reference
 * the batch is tested against.
 *
 * @returns how many events named no message of the portal.
 */
export async function applyOneByOne(
  db: Database,
  portalId: number,
  events: readonly StatusToApply[],
  bus: MessagingEvents | undefined,
  table?: CategoryPriceTable,
): Promise<number> {
  let unknown = 0;
  for (const event of events) {
    const result = await db.transaction((tx) => applyStatus(tx, portalId, event, bus, table));
    if (result === 'unknown') unknown++;
  }
  return unknown;
}

/** The message a status event names: by Portico's id when it gives one, else by wamid. */
function callbackId(event: StatusToApply): string | undefined {
  return event.bizOpaqueCallbackData?.startsWith('msg_') ? event.bizOpaqueCallbackData : undefined;
}

/** The `message.status` event of a change `event` made. */
function changedEvent(messageId: string, event: StatusToApply): StatusChangedEvent {
  const error = event.errors[0];
  return {
    messageId,
    providerMessageId: event.wamid,
    status: event.status,
    occurredAt: event.timestamp.toISOString(),
    ...(event.status === 'failed' && error && { error: { code: error.code, title: error.title } }),
  };
}

/**
 * Apply a batch of one portal's status events in `tx`, as `applyStatus` one after the other
 * would, in a fixed number of statements: lock the messages named, fold the events over them in
 * memory, write what changed.
 *
 * @returns how many events named no message of the portal.
 */
async function applyStatuses(
  tx: Tx,
  portalId: number,
  events: readonly StatusToApply[],
  bus: MessagingEvents | undefined,
  table: CategoryPriceTable | undefined,
): Promise<{ unknown: number }> {
  const ids = new Set<string>();
  const wamids = new Set<string>();
  for (const event of events) {
    const id = callbackId(event);
    if (id) ids.add(id);
    else wamids.add(event.wamid);
  }
  const rows = await lockMessagesForStatuses(tx, portalId, {
    ids: [...ids],
    wamids: [...wamids],
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const byWamid = new Map<string, MessageRow>();
  for (const r of rows) if (r.providerMessageId !== null) byWamid.set(r.providerMessageId, r);
  const written = new Set<MessageRow>();
  const counted: StatusChange[] = [];
  const money: SettleItem[] = [];
  const adjustments: { row: MessageRow; item: AdjustItem }[] = [];
  const changed: StatusChangedEvent[] = [];
  const conversations = new Map<string, { contactId: string; phoneNumberId: string }>();
  let unknown = 0;
  for (const event of events) {
    const id = callbackId(event);
    const row = id ? byId.get(id) : byWamid.get(event.wamid);
    if (!row) {
      unknown++;
      continue;
    }
    const changes = statusChanges(row, event);
    if (row.providerMessageId === null) {
      // As `applyStatus` does: the first status to name the message records its wamid, and a
      // later event of the batch without callback data finds the message by it.
      row.providerMessageId = event.wamid;
      byWamid.set(event.wamid, row);
      written.add(row);
    }
    const from = row.status;
    if (changes) Object.assign(row, changes);
    const billing = billingOf(row, from, event, table);
    if (Object.keys(billing.columns).length > 0) {
      Object.assign(row, billing.columns);
      written.add(row);
    }
    money.push(...billing.settle);
    if (billing.adjust) adjustments.push({ row, item: billing.adjust });
    if (!changes?.status) continue;
    written.add(row);
    if (row.contactId !== null)
      conversations.set(`${row.contactId}/${row.phoneNumberId}`, {
        contactId: row.contactId,
        phoneNumberId: row.phoneNumberId,
      });
    counted.push({ id: row.id, createdAt: row.createdAt, from, to: changes.status });
    changed.push(changedEvent(row.id, event));
  }
  if (adjustments.length > 0) {
    const moved = await adjust(
      tx,
      portalId,
      adjustments.map((a) => a.item),
      PROVIDER_ACTOR,
    );
    // A charge the available credit could not cover in full is charged for what it took.
    adjustments.forEach(({ row, item }, i) => {
      if (item.kind === 'charge')
        row.chargedMinor = (row.chargedMinor ?? 0) - (item.amount - moved[i]!);
    });
  }
  await writeStatuses(tx, portalId, [...written]);
  // An open inbox showing these messages' conversations updates its ticks (ids only).
  await notifyConversationsOf(tx, portalId, [...conversations.values()]);
  await countStatusChanges(tx, portalId, counted);
  await settle(tx, portalId, money, PROVIDER_ACTOR);
  if (changed.length > 0)
    await bus?.emitSerial('message.statuses_changed', { tx, portalId, changes: changed });
  return { unknown };
}

/**
 * Applies one webhook's statuses of a portal (see the module's comment), then posts the
 * portal's captures and releases to its account row, at most once a second per portal on this
 * instance (balance reads count them meanwhile). `done`, when given, runs in the set's
 * transaction (status-queue.ts deletes the job there), or after the one-by-one fallback without
 * one.
 *
 * @throws the database's error when even the one-by-one fallback fails.
 */
type StatusBatchApplier = (
  portalId: number,
  events: readonly StatusToApply[],
  done?: (tx?: JobTx) => Promise<void>,
) => Promise<void>;

export function statusBatchApplier(deps: {
  db: Database;
  logger: Logger;
  /** Where the changes are announced (none in tests of messaging alone). */
  events?: MessagingEvents | undefined;
  /** Portico's prices, to settle at the category the provider bills (none: at the reserved). */
  prices?: CategoryPriceTable | undefined;
}): StatusBatchApplier {
  const table = deps.prices;
  const { db } = deps;
  const log = deps.logger.child({ component: 'messaging-webhooks' });
  const postedAt = new Map<number, number>();
  return async (portalId, events, done) => {
    const unknown = await db
      .transaction(async (tx) => {
        const applied = await applyStatuses(tx, portalId, events, deps.events, table);
        await done?.(tx);
        return applied.unknown;
      })
      .catch(async (err: unknown) => {
        // The batch undone whole: one transaction per event, so one bad event never undoes
        // the others (a storage fault fails these too: the batch is tried again later).
        warnCaught(
          log,
          { portalId, events: events.length },
          err,
          'status batch failed; one by one',
        );
        const missed = await applyOneByOne(db, portalId, events, deps.events, table);
        await done?.();
        return missed;
      });
    if (unknown > 0) log.info({ portalId, unknown }, 'statuses for unknown messages ignored');
    const last = postedAt.get(portalId) ?? 0;
    if (Date.now() - last >= POST_INTERVAL_MS) {
      postedAt.set(portalId, Date.now());
      await postCredit(db, portalId).catch((err: unknown) =>
        warnCaught(log, { portalId }, err, 'posting the credit movements failed'),
      );
    }
  };
}

export function createWebhookSink(deps: {
  db: Database;
  logger: Logger;
  /** A template's status changed at the provider: forget the portal's cached templates. */
  onTemplateChange: (portalId: number) => void;
  /** Where the changes are announced (none in tests of messaging alone). */
  events?: MessagingEvents | undefined;
  /** Where inbound messages are stored (inbound/inbound-ingestion.ts). */
  inbound: Pick<ReturnType<typeof createInboundIngestion>, 'store'>;
  /** How statuses are applied (default: `statusBatchApplier` over `db`). */
  applyStatuses?: StatusBatchApplier;
  /** Where the receiver's statuses wait to be applied; without it they are applied at once. */
  statusQueue?: Pick<StatusQueue, 'accept'>;
}): MessagingWebhookSink {
  const { db } = deps;
  const bus = deps.events;
  const apply = deps.applyStatuses ?? statusBatchApplier(deps);
  const queue = deps.statusQueue;
  return {
    messageStatuses: (portalId, _phoneNumberId, events) => apply(portalId, events),

    ...(queue && {
      queueStatuses: (portalId: number, _phoneNumberId: string, events: MessageStatusEvent[]) =>
        queue.accept(portalId, events),
    }),

    async inboundMessages(portalId, phoneNumberId, events) {
      await deps.inbound.store(portalId, phoneNumberId, events);
    },

    // A changed BSUID: the contact keeps one identity (inbound/inbound-people.ts).
    async userIdsChanged(portalId, events) {
      for (const e of events)
        await db.transaction((tx) => recordUserIdChange(tx, portalId, e).then(() => undefined));
    },

    async templateStatusUpdated(portalId, event) {
      deps.onTemplateChange(portalId);
      if (bus && bus.listenerCount('template.status_updated') > 0)
        await db.transaction((tx) =>
          bus.emitSerial('template.status_updated', { tx, portalId, event }),
        );
    },
  };
}
