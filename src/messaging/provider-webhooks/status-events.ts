/**
 * The provider's webhook events, applied (partner/'s `ProviderWebhookSink`; the receiver in
 * partner/ verifies the signature and routes by WABA to the portal).
 *
 * Statuses are monotonic: queued → sent → delivered → read, or → failed from queued or sent. An
 * event at or below the current status changes nothing (a `delivered` after `read`, any
 * duplicate); a higher one fills the times it implies (`read` fills `delivered_at` too). The
 * first event past `queued` captures the reserved price; `failed` from `queued` releases it
 * (from `sent` it was captured already: the failure is recorded, the charge stays); both are
 * ledger rows posted to the account row in bulk afterwards (credit-ledger.ts). Events are
 * matched by Portico's id (`biz_opaque_callback_data`) when present, else by wamid, always
 * within the portal; an unknown message is ignored. A status change is counted in the portal's
 * daily counts in the same transaction (reports/daily-counts.ts).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#message-status-updates
 * @see docs/messaging.md "Statuses"
 */
import { notifyConversationsOf } from '../conversations/conversation-changes.ts';
import type { Database } from '../../db/client.ts';
import type { Logger } from '../../platform/logger.ts';
import { capture, postCredit, release } from '../credit/credit-ledger.ts';
import type { TemplateStatusEvent } from '../../partner/partner-service.ts';
import type { MessageStatusEvent, MessagingWebhookSink } from '../messaging-types.ts';
import type { InboundEventSteps, createInboundIngestion } from '../inbound/inbound-ingestion.ts';
import { countStatusChanges } from '../reports/daily-counts.ts';
import {
  lockMessageForStatus,
  updateMessage,
  type MessageRow,
  type Tx,
} from '../messages/messages-repository.ts';

const RANK = { queued: 0, sent: 1, delivered: 2, read: 3 } as const;
/** How often this instance posts a portal's captures and releases (ms). */
const POST_INTERVAL_MS = 1000;
const PROVIDER_ACTOR = 'provider';

/** The changes one status event makes to a message, or null for none. */
export function statusChanges(
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

/**
 * Steps another feature (webhooks) adds to the provider's events, each run in the transaction
 * that records the event (given at composition in services.ts): a status that changed a message
 * (never a duplicate), a new inbound message or reaction (its API view, content included:
 * inbound-ingestion.ts), a template's new status.
 */
export interface MessagingEventSteps extends InboundEventSteps {
  statusChanged(
    tx: Tx,
    portalId: number,
    e: {
      messageId: string;
      providerMessageId: string | null;
      status: 'sent' | 'delivered' | 'read' | 'failed';
      occurredAt: string;
      /** The provider's integer code, or Portico's own reason (`delivery_unknown`). */
      error?: { code: number | string; title: string };
    },
  ): Promise<void>;
  templateStatusUpdated(tx: Tx, portalId: number, e: TemplateStatusEvent): Promise<void>;
  /**
   * A send reserved credit that may have taken the available credit (balance − reserved) below
   * the `creditLowThreshold`: it went from `availableBefore` to `availableAfter`, minor units of
   * `currency`, exactly (the sends that can cross the threshold run one at a time). Only a
   * reservation lowers it (a capture spends what was reserved; releases and top-ups raise it).
   * Sends whose escrow block keeps the available credit above the threshold skip this step.
   */
  creditReserved?(
    tx: Tx,
    portalId: number,
    e: { availableBefore: number; availableAfter: number; currency: string },
  ): Promise<void>;
  /**
   * The portal's `credit.low` threshold in minor units, or null when it has none: where
   * `creditReserved` may emit. Read again at most every second per portal and instance.
   */
  creditLowThreshold?(portalId: number): Promise<number | null>;
}

async function applyStatus(
  tx: Tx,
  portalId: number,
  event: MessageStatusEvent,
  steps: MessagingEventSteps | undefined,
): Promise<'applied' | 'unchanged' | 'unknown'> {
  const row = await lockMessageForStatus(tx, portalId, {
    id: event.bizOpaqueCallbackData?.startsWith('msg_') ? event.bizOpaqueCallbackData : undefined,
    wamid: event.wamid,
  });
  if (!row) return 'unknown';
  const changes = statusChanges(row, event);
  const wamid = row.providerMessageId === null ? { providerMessageId: event.wamid } : {};
  if (!changes) {
    if (row.providerMessageId === null) await updateMessage(tx, portalId, row.id, wamid);
    return 'unchanged';
  }
  await updateMessage(tx, portalId, row.id, { ...changes, ...wamid });
  // An open inbox showing this message's conversation updates its ticks (ids only).
  if (changes.status && row.contactId !== null)
    await notifyConversationsOf(tx, portalId, [
      { contactId: row.contactId, phoneNumberId: row.from },
    ]);
  if (changes.status)
    await countStatusChanges(tx, portalId, [
      { id: row.id, createdAt: row.createdAt, from: row.status, to: changes.status },
    ]);
  const money = { portalId, amount: row.priceMinor, currency: row.currency, messageId: row.id };
  if (row.status === 'queued' && changes.status === 'failed') {
    await release(tx, portalId, [money], PROVIDER_ACTOR);
  } else if (row.status === 'queued') {
    await capture(tx, { ...money, actor: PROVIDER_ACTOR });
  }
  const error = event.errors[0];
  await steps?.statusChanged(tx, portalId, {
    messageId: row.id,
    providerMessageId: event.wamid,
    status: event.status,
    occurredAt: event.timestamp.toISOString(),
    ...(event.status === 'failed' && error && { error: { code: error.code, title: error.title } }),
  });
  return 'applied';
}

export function createWebhookSink(deps: {
  db: Database;
  logger: Logger;
  /** A template's status changed at the provider: forget the portal's cached templates. */
  onTemplateChange: (portalId: number) => void;
  /** The webhooks' steps (none in tests of messaging alone). */
  eventSteps?: MessagingEventSteps | undefined;
  /** Where inbound messages are stored (inbound/inbound-ingestion.ts). */
  inbound: Pick<ReturnType<typeof createInboundIngestion>, 'store'>;
}): MessagingWebhookSink {
  const steps = deps.eventSteps;
  const { db } = deps;
  const log = deps.logger.child({ component: 'messaging-webhooks' });
  const postedAt = new Map<number, number>();
  return {
    async messageStatuses(portalId, _phoneNumberId, events) {
      // One transaction per event: one bad event never undoes the others.
      for (const event of events) {
        const result = await db.transaction((tx) => applyStatus(tx, portalId, event, steps));
        if (result === 'unknown')
          log.info({ portalId, status: event.status }, 'status for an unknown message ignored');
      }
      // The captures and releases written above reach the account row in bulk, at most once
      // a second per portal on this instance (balance reads count them meanwhile).
      const last = postedAt.get(portalId) ?? 0;
      if (Date.now() - last >= POST_INTERVAL_MS) {
        postedAt.set(portalId, Date.now());
        await postCredit(db, portalId).catch((err: unknown) =>
          log.warn({ portalId, err }, 'posting the credit movements failed'),
        );
      }
    },

    async inboundMessages(portalId, phoneNumberId, events) {
      await deps.inbound.store(portalId, phoneNumberId, events);
    },

    async templateStatusUpdated(portalId, event) {
      deps.onTemplateChange(portalId);
      if (steps) await db.transaction((tx) => steps.templateStatusUpdated(tx, portalId, event));
    },
  };
}
