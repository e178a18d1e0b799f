/**
 * The statement that queues a message: the message row (its content sealed by the caller,
 * message-content.ts), due for delivery at once (the row is its own delivery job,
 * delivery-queue.ts), and its credit reservation (a `reserve` transaction taken from the
 * instance's escrow block), in ONE statement (data-modifying `WITH`), so an accepted send is one
 * round trip to the database and, outside a transaction, its own commit. The reservation
 * depends on the block: no block (settled meanwhile) inserts nothing at all.
 *
 * @see docs/decisions/0026-credit-escrow.md
 * @see https://www.postgresql.org/docs/current/queries-with.html#QUERIES-WITH-MODIFYING
 */
import { sql, type SQL } from 'drizzle-orm';
import { creditTransactions } from '../../db/schema/credit.ts';
import { messages } from '../../db/schema/messages.ts';
import { leaseFence } from '../credit/credit-leases.ts';
import { newCreditTransactionId } from '../credit/credit-ledger.ts';
import type { Db, MessageRow } from '../store/messages-repository.ts';

/** A message to queue: its columns but the defaults the database fills. */
export type QueuedMessage = Pick<
  MessageRow,
  | 'id'
  | 'portalId'
  | 'waId'
  | 'contactId'
  | 'phoneNumberId'
  | 'type'
  | 'templateName'
  | 'templateLanguage'
  | 'templateCategory'
  | 'content'
  | 'priceMinor'
  | 'currency'
>;

type InsertOutcome =
  | { kind: 'queued'; row: MessageRow }
  /** The block was settled (by another instance, or as stale): nothing was written. */
  | { kind: 'lease_closed' };

/**
 * The statement of `insertQueuedMessage`, for it and for the benchmark (which runs it under
 * `pgbench`): one row of `leases` (1 without a reservation) and the message's `queued_at`,
 * `created_at` (null when nothing was inserted).
 */
export function queuedMessageStatement(
  m: QueuedMessage,
  reservation: { leaseId: number; actor: string; transactionId: string } | null,
): SQL {
  const content = m.content === null ? null : JSON.stringify(m.content);
  return sql`
    with ${reservation ? sql`lease as (${leaseFence(reservation.leaseId)}),` : sql``}
    message as (
      insert into ${messages} (id, portal_id, direction, wa_id, contact_id, phone_number_id,
        type, template_name, template_language, template_category, content, status, queued_at,
        delivery_due_at, price_minor, currency)
      select ${m.id}::text, ${m.portalId}::int, 'outbound', ${m.waId}::text, ${m.contactId}::text,
        ${m.phoneNumberId}::text, ${m.type}::text, ${m.templateName}::text,
        ${m.templateLanguage}::text, ${m.templateCategory}::text, ${content}::jsonb, 'queued',
        now(), now(), ${m.priceMinor}::int, ${m.currency}::text
      ${reservation ? sql`from lease` : sql``}
      returning id, queued_at, created_at)${reservation ? sql`,` : sql``}
    ${
      reservation
        ? sql`reservation as (
      insert into ${creditTransactions} (id, portal_id, kind, amount, currency, message_id,
        actor, lease_id)
      select ${reservation.transactionId}::text, ${m.portalId}::int, 'reserve',
        ${m.priceMinor}::int, ${m.currency}::text, message.id, ${reservation.actor}::text, lease.id
      from message, lease)`
        : sql``
    }
    select ${reservation ? sql`(select count(*) from lease)::int` : sql`1`} as leases,
      message.queued_at, message.created_at
    from (select 1) as one left join message on true`;
}

/**
 * Insert the message, due for delivery now, and its reservation from block
 * `reservation.leaseId` (none for a price of 0). Run it on the database (its own transaction)
 * or in the caller's; the delivery worker sees the message once that commits.
 */
export async function insertQueuedMessage(
  db: Db,
  m: QueuedMessage,
  reservation: { leaseId: number; actor: string } | null,
): Promise<InsertOutcome> {
  const result: unknown = await db.execute(
    queuedMessageStatement(
      m,
      reservation && { ...reservation, transactionId: newCreditTransactionId() },
    ),
  );
  const [row] = (
    result as {
      rows: { leases: number; queued_at: unknown; created_at: unknown }[];
    }
  ).rows;
  if (!row || Number(row.leases) === 0 || row.queued_at === null) return { kind: 'lease_closed' };
  return {
    kind: 'queued',
    row: {
      ...m,
      direction: 'outbound',
      mediaId: null,
      contextProviderMessageId: null,
      contextMessageId: null,
      storedAt: null,
      textBody: null,
      templateParameters: null,
      status: 'queued',
      providerMessageId: null,
      pricingBillable: null,
      pricingModel: null,
      pricingType: null,
      pricingCategory: null,
      chargedMinor: null,
      sendAttemptedAt: null,
      deliveryDueAt: new Date(row.queued_at as string),
      deliveryAttempts: 0,
      queuedAt: new Date(row.queued_at as string),
      sentAt: null,
      deliveredAt: null,
      readAt: null,
      failedAt: null,
      errorCode: null,
      errorTitle: null,
      createdAt: new Date(row.created_at as string),
    },
  };
}
