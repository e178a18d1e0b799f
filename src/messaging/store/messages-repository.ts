/**
 * Queries over the outbound rows of `messages` (`direction = 'outbound'`). Invariant (docs/security.md, tenant isolation): every statement
 * filters by portal id in the statement itself. Status changes are conditional UPDATEs, so a
 * status never moves backwards whatever the order or number of the events (docs/messaging.md
 * "Statuses"); each is counted in the portal's daily counts in the same transaction
 * (daily-counts.ts).
 */
import { and, eq, gte, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { messages, type MESSAGE_TYPES } from '../../db/schema/messages.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';
import { countStatusChanges } from './daily-counts.ts';
import { addressesOf, type ErasedPerson } from '../../platform/erased-person.ts';

/** Drizzle's transaction handle (same query API as the database). */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];
export type Db = Database | Tx;

/** A stored message of either direction, as `messages` holds it. */
export type StoredMessageRow = typeof messages.$inferSelect;
type NewMessageRow = typeof messages.$inferInsert;
export type MessageStatus = NonNullable<StoredMessageRow['status']>;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/**
 * An outbound message's row: the columns the table's `messages_outbound_columns` CHECK holds
 * non-null on an outbound row, typed so.
 */
export type MessageRow = Omit<
  StoredMessageRow,
  'direction' | 'type' | 'status' | 'queuedAt' | 'priceMinor' | 'currency'
> & {
  direction: 'outbound';
  type: MessageType;
  status: MessageStatus;
  queuedAt: Date;
  priceMinor: number;
  currency: string;
};

/** Rows read with {@link isOutbound} in their condition, typed as the CHECK makes them. */
export const asOutbound = (rows: readonly StoredMessageRow[]): MessageRow[] => rows as MessageRow[];

/** The condition of every outbound statement. */
const isOutbound = eq(messages.direction, 'outbound');

/**
 * The filters of a message list; `status` and `to` concern outbound messages only (either names
 * outbound messages).
 */
export interface MessageListFilter {
  direction?: NonNullable<StoredMessageRow['direction']> | undefined;
  contactId?: string | undefined;
  phoneNumberId?: string | undefined;
  status?: MessageStatus | undefined;
  to?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/** Insert an outbound message (queued unless `row` says otherwise). */
export async function insertMessage(
  db: Db,
  row: Omit<NewMessageRow, 'direction'>,
): Promise<MessageRow> {
  const [inserted] = await db
    .insert(messages)
    .values({ status: 'queued', queuedAt: new Date(), ...row, direction: 'outbound' })
    .returning();
  return asOutbound([inserted!])[0]!;
}

export async function findMessage(
  db: Db,
  portalId: number,
  id: string,
): Promise<MessageRow | null> {
  const [row] = await db
    .select()
    .from(messages)
    .where(and(eq(messages.portalId, portalId), eq(messages.id, id), isOutbound));
  return row ? asOutbound([row])[0]! : null;
}

/** A message by id alone: for the delivery worker, whose job names the portal too. */
export async function findMessageForDelivery(db: Db, id: string): Promise<MessageRow | null> {
  const [row] = await db
    .select()
    .from(messages)
    .where(and(eq(messages.id, id), isOutbound));
  return row ? asOutbound([row])[0]! : null;
}

/**
 * The message a status webhook is about, locked for the update: by Portico's id (the
 * `biz_opaque_callback_data`) when given, else by the wamid; always within the portal.
 */
export async function lockMessageForStatus(
  tx: Tx,
  portalId: number,
  key: { id?: string | undefined; wamid: string },
): Promise<MessageRow | null> {
  const where = key.id
    ? and(eq(messages.portalId, portalId), eq(messages.id, key.id), isOutbound)
    : and(eq(messages.portalId, portalId), eq(messages.providerMessageId, key.wamid), isOutbound);
  const [row] = await tx.select().from(messages).where(where).for('update');
  return row ? asOutbound([row])[0]! : null;
}

/**
 * The messages a batch of status webhooks is about, locked for the update in one statement:
 * those of the portal named by one of `ids` (Portico's ids, the `biz_opaque_callback_data`) or
 * by one of `wamids`, in id order (two batches touching the same messages lock them in the same
 * order, never waiting for each other in a cycle).
 */
export async function lockMessagesForStatuses(
  tx: Tx,
  portalId: number,
  keys: { ids: readonly string[]; wamids: readonly string[] },
): Promise<MessageRow[]> {
  const named = [
    ...(keys.ids.length > 0 ? [inArray(messages.id, [...keys.ids])] : []),
    ...(keys.wamids.length > 0 ? [inArray(messages.providerMessageId, [...keys.wamids])] : []),
  ];
  if (named.length === 0) return [];
  return asOutbound(
    await tx
      .select()
      .from(messages)
      .where(and(eq(messages.portalId, portalId), isOutbound, or(...named)))
      .orderBy(messages.id)
      .for('update'),
  );
}

/** The columns a status webhook changes, as `writeStatuses` writes them. */
type StatusColumns = Pick<
  MessageRow,
  | 'id'
  | 'status'
  | 'providerMessageId'
  | 'sentAt'
  | 'deliveredAt'
  | 'readAt'
  | 'failedAt'
  | 'errorCode'
  | 'errorTitle'
  | 'pricingBillable'
  | 'pricingModel'
  | 'pricingType'
  | 'pricingCategory'
  | 'chargedMinor'
>;

/**
 * Write the status columns of many messages of the portal in one statement (rows locked by
 * `lockMessagesForStatuses` in the same transaction; their new values worked out by the caller).
 */
export async function writeStatuses(
  tx: Tx,
  portalId: number,
  rows: readonly StatusColumns[],
): Promise<void> {
  if (rows.length === 0) return;
  const values = JSON.stringify(
    rows.map((r) => ({
      id: r.id,
      status: r.status,
      wamid: r.providerMessageId,
      sent_at: r.sentAt?.toISOString() ?? null,
      delivered_at: r.deliveredAt?.toISOString() ?? null,
      read_at: r.readAt?.toISOString() ?? null,
      failed_at: r.failedAt?.toISOString() ?? null,
      error_code: r.errorCode,
      error_title: r.errorTitle,
      pricing_billable: r.pricingBillable,
      pricing_model: r.pricingModel,
      pricing_type: r.pricingType,
      pricing_category: r.pricingCategory,
      charged_minor: r.chargedMinor,
    })),
  );
  await tx.execute(sql`
    update ${messages} m set status = v.status, provider_message_id = v.wamid,
      sent_at = v.sent_at, delivered_at = v.delivered_at, read_at = v.read_at,
      failed_at = v.failed_at, error_code = v.error_code, error_title = v.error_title,
      pricing_billable = v.pricing_billable, pricing_model = v.pricing_model,
      pricing_type = v.pricing_type, pricing_category = v.pricing_category,
      charged_minor = v.charged_minor
    from json_to_recordset(${values}::json) as v(id text, status text, wamid text,
      sent_at timestamptz, delivered_at timestamptz, read_at timestamptz, failed_at timestamptz,
      error_code text, error_title text, pricing_billable boolean, pricing_model text,
      pricing_type text, pricing_category text, charged_minor int)
    where m.portal_id = ${portalId} and m.direction = 'outbound' and m.id = v.id`);
}

/**
 * Record the provider's message id on a message that has none yet (the delivery worker, right
 * after the provider accepted it; a status webhook may have recorded it first).
 */
export async function recordProviderMessageId(db: Db, id: string, wamid: string): Promise<void> {
  await db
    .update(messages)
    .set({ providerMessageId: wamid })
    .where(and(eq(messages.id, id), isOutbound, isNull(messages.providerMessageId)));
}

/**
 * Commit the delivery worker's intent to call the provider for a message (before the call): only
 * on a message still `queued`, without a wamid and without an earlier attempt, so two workers
 * holding the same message's job (one of them taken over after its job expired) never both
 * call the provider.
 *
 * @returns false when the message is not in that state (nothing changed): do not send.
 */
export async function beginSendAttempt(db: Db, id: string, at: Date): Promise<boolean> {
  const rows = await db
    .update(messages)
    .set({ sendAttemptedAt: at })
    .where(
      and(
        eq(messages.id, id),
        eq(messages.status, 'queued'),
        isNull(messages.providerMessageId),
        isNull(messages.sendAttemptedAt),
      ),
    )
    .returning({ id: messages.id });
  return rows.length === 1;
}

/**
 * Forget a message's send attempt: the provider answered with a failure (nothing was sent), so
 * a retry may call it again.
 */
export async function clearSendAttempt(db: Db, id: string): Promise<void> {
  await db
    .update(messages)
    .set({ sendAttemptedAt: null })
    .where(
      and(eq(messages.id, id), eq(messages.status, 'queued'), isNull(messages.providerMessageId)),
    );
}

export async function updateMessage(
  tx: Tx,
  portalId: number,
  id: string,
  changes: Partial<Omit<NewMessageRow, 'id' | 'portalId'>>,
): Promise<void> {
  await tx
    .update(messages)
    .set(changes)
    .where(and(eq(messages.portalId, portalId), eq(messages.id, id), isOutbound));
}

/**
 * Fail the message if it is still `queued` and the provider has not accepted it (no wamid: an
 * accepted message waits for its status webhook). `unlessAttempted`: nor when a send attempt's
 * outcome is unknown (the settlement sweep decides it: delivery/delivery-settlement.ts).
 *
 * @returns the failed row, or null when it was no longer queued or was accepted (nothing
 *   changed).
 */
export async function failIfQueued(
  tx: Tx,
  id: string,
  error: { code: string; title: string },
  at: Date,
  options: { unlessAttempted?: boolean } = {},
): Promise<MessageRow | null> {
  const [failed] = await failQueuedWhere(
    tx,
    and(
      eq(messages.id, id),
      options.unlessAttempted ? isNull(messages.sendAttemptedAt) : undefined,
    ),
    error,
    at,
  );
  return failed ?? null;
}

/**
 * Fail every queued message of the portal the provider has not accepted yet (no wamid): the
 * revocation step.
 *
 * @returns the failed rows (their reservations are to be released).
 */
export async function failQueuedOfPortal(
  tx: Tx,
  portalId: number,
  error: { code: string; title: string },
  at: Date,
): Promise<MessageRow[]> {
  return failQueuedWhere(tx, eq(messages.portalId, portalId), error, at);
}

/**
 * Fail the messages `which` names (all of one portal) that are still `queued` and that the
 * provider has not accepted (no wamid), and count them in the portal's daily counts in the same
 * transaction.
 *
 * @returns the failed rows.
 */
async function failQueuedWhere(
  tx: Tx,
  which: SQL | undefined,
  error: { code: string; title: string },
  at: Date,
): Promise<MessageRow[]> {
  const rows = asOutbound(
    await tx
      .update(messages)
      .set({
        status: 'failed',
        failedAt: at,
        chargedMinor: 0,
        errorCode: error.code,
        errorTitle: error.title,
      })
      .where(and(which, eq(messages.status, 'queued'), isNull(messages.providerMessageId)))
      .returning(),
  );
  if (rows.length > 0) {
    await countStatusChanges(
      tx,
      rows[0]!.portalId,
      rows.map((r) => ({ id: r.id, createdAt: r.createdAt, from: 'queued', to: 'failed' })),
    );
  }
  return rows;
}

function listConditions(portalId: number, f: MessageListFilter): SQL[] {
  const where: SQL[] = [eq(messages.portalId, portalId)];
  if (f.direction) where.push(eq(messages.direction, f.direction));
  // A status or an addressee names outbound messages only.
  if ((f.status !== undefined || f.to !== undefined) && f.direction !== 'outbound') {
    where.push(isOutbound);
  }
  if (f.contactId) where.push(eq(messages.contactId, f.contactId));
  if (f.phoneNumberId) where.push(eq(messages.phoneNumberId, f.phoneNumberId));
  if (f.status) where.push(eq(messages.status, f.status));
  if (f.to) where.push(eq(messages.waId, f.to));
  if (f.since) where.push(gte(messages.createdAt, f.since));
  if (f.until) where.push(lt(messages.createdAt, f.until));
  return where;
}

/**
 * One page of the portal's messages in both directions, newest first, by keyset on
 * `(created_at, id)` (`limit + 1` rows read, the extra one telling `hasMore`), from the page
 * index the filters name.
 *
 * @see docs/messaging.md "Conversations"
 */
export async function listMessageRows(
  db: Db,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; filter: MessageListFilter },
): Promise<KeysetPage<StoredMessageRow>> {
  return readKeysetPage(
    messages,
    listConditions(portalId, options.filter),
    options,
    (where, orderBy, limit) =>
      db
        .select()
        .from(messages)
        .where(where)
        .orderBy(...orderBy)
        .limit(limit),
  );
}

/**
 * One page of the portal's outbound messages, newest first, by keyset on `(created_at, id)`.
 *
 * @param options.limit rows wanted; one more is read to know whether a next page exists.
 */
export async function listMessagePage(
  db: Db,
  portalId: number,
  options: {
    limit: number;
    after?: PagePosition | undefined;
    filter: Pick<MessageListFilter, 'status' | 'to' | 'since' | 'until'>;
  },
): Promise<KeysetPage<MessageRow>> {
  const page = await listMessageRows(db, portalId, {
    ...options,
    filter: { ...options.filter, direction: 'outbound' },
  });
  return { rows: asOutbound(page.rows), hasMore: page.hasMore };
}

/** One bucket of the summary: messages created in it, by current status, and their cost. */
export interface SummaryRow {
  start: Date;
  status: MessageStatus;
  count: number;
  /** Sum of prices of messages past `queued` and not failed (captured), minor units. */
  captured: number;
}

/**
 * Counts per status and captured cost per UTC day or hour of `created_at`, in `[since, until)`.
 */
export async function summaryRows(
  db: Db,
  portalId: number,
  range: { since: Date; until: Date; granularity: 'day' | 'hour' },
): Promise<SummaryRow[]> {
  const unit = range.granularity === 'day' ? sql.raw(`'day'`) : sql.raw(`'hour'`);
  const bucket = sql`date_trunc(${unit}, ${messages.createdAt} at time zone 'UTC')`;
  const rows = await db
    .select({
      start: sql<string>`to_char(${bucket}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      status: sql<MessageStatus>`${messages.status}`,
      count: sql<number>`count(*)::int`,
      captured: sql<number>`coalesce(sum(coalesce(${messages.chargedMinor}, ${messages.priceMinor})) filter (where ${inArray(messages.status, ['sent', 'delivered', 'read'])}), 0)::int`,
    })
    .from(messages)
    .where(
      and(
        eq(messages.portalId, portalId),
        isOutbound,
        gte(messages.createdAt, range.since),
        lt(messages.createdAt, range.until),
      ),
    )
    .groupBy(bucket, messages.status)
    .orderBy(bucket);
  return rows.map((r) => ({
    start: new Date(r.start),
    status: r.status,
    count: Number(r.count),
    captured: Number(r.captured),
  }));
}

/** The outbound messages of a person: linked to the contact, or sent to its phone. */
function messagesOfPerson(contact: ErasedPerson): SQL {
  return and(
    eq(messages.portalId, contact.portalId),
    isOutbound,
    or(eq(messages.contactId, contact.id), inArray(messages.waId, addressesOf(contact))),
  )!;
}

/**
 * Fail a person's messages still `queued` that the provider has not accepted (no wamid): the
 * contact erasure, before the anonymisation.
 *
 * @returns the failed rows (their reservations are to be released).
 */
export async function failQueuedOfPerson(
  tx: Tx,
  contact: ErasedPerson,
  error: { code: string; title: string },
  at: Date,
): Promise<MessageRow[]> {
  return failQueuedWhere(tx, messagesOfPerson(contact), error, at);
}

/**
 * Strip a person from their messages (contact erasure): the phone becomes `erased`, the text
 * and template parameters and the sealed content are removed, the contact link is cut.
 *
 * @returns how many messages were anonymised.
 */
export async function anonymiseMessagesOf(tx: Tx, contact: ErasedPerson): Promise<number> {
  const rows = await tx
    .update(messages)
    .set({
      waId: 'erased',
      textBody: null,
      templateParameters: null,
      content: null,
      contactId: null,
    })
    .where(messagesOfPerson(contact))
    .returning({ id: messages.id });
  return rows.length;
}
