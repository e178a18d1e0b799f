/**
 * The settlement sweep: ends the queued messages the provider's status webhooks never settled,
 * and returns the escrow blocks of credit no instance settled (docs/messaging.md "Retries and failures",
 * "Statuses"; docs/decisions/0034-delivery-idempotency.md). The `messaging.settlement`
 * background task runs it every `settlementPeriodMs` (src/background-tasks.ts), once across
 * instances; each run is a few set-based statements, its rows taken with `FOR UPDATE SKIP
 * LOCKED`, so a run that overlaps a slow earlier one shares the work rather than waits.
 *
 * - A send attempt with no outcome (no wamid; its worker died or no answer came,
 *   delivery-worker.ts) older than `confirmS`: the provider never sent its status webhook, which
 *   the Cloud API posts for every message it accepted, so it is taken as never sent. The message
 *   fails with `delivery_unknown` and its credit is released. It is never sent again.
 * - A message the provider accepted (it has a wamid) still `queued` after `statusWaitS`: the
 *   Cloud API has no call that reads a message's status, and it posts `sent` at once; with no
 *   status at all the message fails with `status_unknown` and its credit is released (the
 *   Cloud API bills a message when it is delivered, and none was reported).
 * - An escrow block older than `LEASE_MAX_AGE_S` (its instance died or went idle,
 *   credit-escrow.ts): settled, so what it held is available again even if the portal never
 *   sends again.
 *
 * A status webhook that arrives after either settlement records the wamid and changes nothing
 * else (a failed message stays failed: statuses never move back).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples#message-status-updates
 * @see https://developers.facebook.com/docs/whatsapp/pricing
 */
import { and, asc, inArray, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { creditLeases } from '../../db/schema/credit.ts';
import { messages } from '../../db/schema/messages.ts';
import { release } from '../credit/credit-ledger.ts';
import { LEASE_MAX_AGE_S } from '../credit/credit-escrow.ts';
import { settleLease } from '../credit/credit-leases.ts';
import { asOutbound, type MessageRow, type Tx } from '../store/messages-repository.ts';
import { countStatusChanges } from '../store/daily-counts.ts';

/** The error of a message whose send attempt the provider never confirmed. */
const UNCONFIRMED_ERROR = {
  code: 'delivery_unknown',
  title: 'The provider never confirmed the message; it was not sent again',
} as const;

/** The error of a message the provider accepted and reported no status for. */
const NO_STATUS_ERROR = {
  code: 'status_unknown',
  title: 'The provider reported no status for the message',
} as const;

const SETTLEMENT_ACTOR = 'system:delivery-settlement';

/**
 * The sweep's period: a quarter of the shorter wait, between 1 s and 60 s, so a message fails
 * at most a quarter of its wait (and at most a minute) after the wait ends.
 *
 * @param waits.confirmS `MESSAGING_SEND_CONFIRM_S`; `waits.statusWaitS` `MESSAGING_STATUS_WAIT_S`.
 * @returns milliseconds.
 */
export function settlementPeriodMs(waits: { confirmS: number; statusWaitS: number }): number {
  return Math.min(
    60_000,
    Math.max(1_000, (Math.min(waits.confirmS, waits.statusWaitS) * 1000) / 4),
  );
}

/** Messages one statement settles at most (the next run takes the rest). */
const BATCH = 500;

/** What the sweep needs; `failed` tells other features (the tenant's `message.status` event). */
export interface SettlementDeps {
  db: Database;
  /** Seconds an attempt without an outcome waits for its status webhook. */
  confirmS: number;
  /** Seconds a message with a wamid waits for its first status. */
  statusWaitS: number;
  failed?: (tx: Tx, row: MessageRow, error: { code: string; title: string }) => Promise<void>;
}

/**
 * One run of the sweep at `now`.
 *
 * @returns how many messages it failed and escrow blocks it settled.
 * @throws the database's error (the next run tries again).
 */
export async function settleDeliveries(
  deps: SettlementDeps,
  now: Date,
): Promise<{ messages: number; blocks: number }> {
  let failed = 0;
  for (;;) {
    const n = await settleBatch(deps, now);
    failed += n;
    if (n < BATCH) break;
  }
  return { messages: failed, blocks: await settleStaleBlocks(deps.db) };
}

/** Fail one batch of unsettled messages and release their credit, in one transaction. */
function settleBatch(deps: SettlementDeps, now: Date): Promise<number> {
  const confirmBefore = new Date(now.getTime() - deps.confirmS * 1000);
  const statusBefore = new Date(now.getTime() - deps.statusWaitS * 1000);
  return deps.db.transaction(async (tx) => {
    const due = await tx
      .select({ id: messages.id })
      .from(messages)
      .where(
        and(
          sql`${messages.status} = 'queued'`,
          or(
            and(isNull(messages.providerMessageId), lt(messages.sendAttemptedAt, confirmBefore)),
            and(isNotNull(messages.providerMessageId), lt(messages.sendAttemptedAt, statusBefore)),
          ),
        ),
      )
      .orderBy(asc(messages.sendAttemptedAt))
      .limit(BATCH)
      .for('update', { skipLocked: true });
    if (due.length === 0) return 0;
    const errorOf = (r: { providerMessageId: string | null }) =>
      r.providerMessageId === null ? UNCONFIRMED_ERROR : NO_STATUS_ERROR;
    const rows = await tx
      .update(messages)
      .set({
        status: 'failed',
        failedAt: now,
        chargedMinor: 0,
        errorCode: sql`case when ${messages.providerMessageId} is null
          then ${UNCONFIRMED_ERROR.code} else ${NO_STATUS_ERROR.code} end`,
        errorTitle: sql`case when ${messages.providerMessageId} is null
          then ${UNCONFIRMED_ERROR.title} else ${NO_STATUS_ERROR.title} end`,
      })
      .where(
        inArray(
          messages.id,
          due.map((d) => d.id),
        ),
      )
      .returning();
    const byPortal = new Map<number, MessageRow[]>();
    // Only outbound messages have a status: these are all outbound.
    for (const r of asOutbound(rows))
      byPortal.set(r.portalId, [...(byPortal.get(r.portalId) ?? []), r]);
    for (const [portalId, failedRows] of byPortal) {
      await countStatusChanges(
        tx,
        portalId,
        failedRows.map((r) => ({ id: r.id, createdAt: r.createdAt, from: 'queued', to: 'failed' })),
      );
      await release(
        tx,
        portalId,
        failedRows.map((r) => ({ messageId: r.id, amount: r.priceMinor, currency: r.currency })),
        SETTLEMENT_ACTOR,
      );
      if (deps.failed) for (const r of failedRows) await deps.failed(tx, r, errorOf(r));
    }
    return rows.length;
  });
}

/** Settle every escrow block older than `LEASE_MAX_AGE_S`, whoever holds it. */
async function settleStaleBlocks(db: Database): Promise<number> {
  const stale = await db
    .select({ id: creditLeases.id, portalId: creditLeases.portalId })
    .from(creditLeases)
    .where(lt(creditLeases.createdAt, sql`now() - make_interval(secs => ${LEASE_MAX_AGE_S})`));
  let settled = 0;
  for (const block of stale) if (await settleLease(db, block.portalId, Number(block.id))) settled++;
  return settled;
}
