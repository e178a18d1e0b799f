/**
 * The statement that queues a message: the message row (its content sealed by the caller,
 * message-content.ts), its credit reservation (a `reserve`
 * transaction taken from the instance's escrow block) and its delivery job, in ONE statement
 * (data-modifying `WITH`), so an accepted send is one round trip to the database and, outside a
 * transaction, its own commit. Every row depends on the ones before it: no block (settled
 * meanwhile) or no queue (not started) inserts nothing at all.
 *
 * @see docs/decisions/0026-credit-escrow.md
 * @see https://www.postgresql.org/docs/current/queries-with.html#QUERIES-WITH-MODIFYING
 */
import { sql, type SQL } from 'drizzle-orm';
import { creditTransactions } from '../../db/schema/credit.ts';
import { messages } from '../../db/schema/messages.ts';
import { leaseFence } from '../credit/credit-leases.ts';
import { newCreditTransactionId } from '../credit/credit-ledger.ts';
import type { SendJobData } from './delivery-queue.ts';
import type { Db, MessageRow } from '../store/messages-repository.ts';

/** What the statement needs of the delivery queue (delivery-queue.ts). */
export interface JobStatements {
  /** The queue's row, for the `WITH` entry `q`. */
  queueRow(): SQL;
  /** The job's insert over `source` (which exposes `q`), with `data` as its jsonb. */
  jobInsert(source: SQL, data: SQL): SQL;
}

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
  | { kind: 'lease_closed' }
  /** The delivery queue does not exist (messaging not started): nothing was written. */
  | { kind: 'no_queue' };

/**
 * The statement of `insertQueuedMessage`, for it and for the benchmark (which runs it under
 * `pgbench`): one row of `queues`, `leases` (1 without a reservation) and the message's
 * `queued_at`, `created_at` (null when nothing was inserted).
 */
export function queuedMessageStatement(
  m: QueuedMessage,
  reservation: { leaseId: number; actor: string; transactionId: string } | null,
  jobs: JobStatements,
): SQL {
  const data: SendJobData = { messageId: m.id, portalId: m.portalId };
  const content = m.content === null ? null : JSON.stringify(m.content);
  const lease = reservation ? sql`, lease` : sql``;
  return sql`
    with ${reservation ? sql`lease as (${leaseFence(reservation.leaseId)}),` : sql``}
    q as (${jobs.queueRow()}),
    message as (
      insert into ${messages} (id, portal_id, direction, wa_id, contact_id, phone_number_id,
        type, template_name, template_language, template_category, content, status, queued_at,
        price_minor, currency)
      select ${m.id}::text, ${m.portalId}::int, 'outbound', ${m.waId}::text, ${m.contactId}::text,
        ${m.phoneNumberId}::text, ${m.type}::text, ${m.templateName}::text,
        ${m.templateLanguage}::text, ${m.templateCategory}::text, ${content}::jsonb, 'queued',
        now(), ${m.priceMinor}::int, ${m.currency}::text
      from q${lease}
      returning id, queued_at, created_at),
    ${
      reservation
        ? sql`reservation as (
      insert into ${creditTransactions} (id, portal_id, kind, amount, currency, message_id,
        actor, lease_id)
      select ${reservation.transactionId}::text, ${m.portalId}::int, 'reserve',
        ${m.priceMinor}::int, ${m.currency}::text, message.id, ${reservation.actor}::text, lease.id
      from message, lease),`
        : sql``
    }
    job as (${jobs.jobInsert(sql`message, q`, sql`${JSON.stringify(data)}::jsonb`)})
    select (select count(*) from q)::int as queues,
      ${reservation ? sql`(select count(*) from lease)::int` : sql`1`} as leases,
      message.queued_at, message.created_at
    from (select 1) as one left join message on true`;
}

/**
 * Insert the message, its reservation from block `reservation.leaseId` (none for a price of 0)
 * and its job. Run it on the database (its own transaction) or in the caller's.
 */
export async function insertQueuedMessage(
  db: Db,
  m: QueuedMessage,
  reservation: { leaseId: number; actor: string } | null,
  jobs: JobStatements,
): Promise<InsertOutcome> {
  const result: unknown = await db.execute(
    queuedMessageStatement(
      m,
      reservation && { ...reservation, transactionId: newCreditTransactionId() },
      jobs,
    ),
  );
  const [row] = (
    result as {
      rows: { queues: number; leases: number; queued_at: unknown; created_at: unknown }[];
    }
  ).rows;
  if (!row || Number(row.queues) === 0) return { kind: 'no_queue' };
  if (Number(row.leases) === 0) return { kind: 'lease_closed' };
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
