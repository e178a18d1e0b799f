/**
 * The messages of a portal in both directions as one list, newest first: outbound by
 * `created_at`, inbound by `received_at`, ties by id, in the project's one keyset order
 * (`db/keyset-page.ts`). Each direction reads at most `limit + 1` rows from its own page index
 * (`messages_portal_page`, `messages_portal_contact_page`, `inbound_messages_portal_page`,
 * `inbound_messages_portal_contact_page`) before the merge, so a page costs the same whatever the
 * portal's size. Every statement filters by portal id.
 *
 * @see docs/messaging.md "Conversations"
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { inboundMessages } from '../../db/schema/conversations.ts';
import { messages } from '../../db/schema/messages.ts';
import type { KeysetPage, PagePosition } from '../../db/keyset-page.ts';
import type { Db } from '../messages/messages-repository.ts';
import type { Direction } from './conversations-repository.ts';

/** The filters of the merged message list; `status` and `to` concern outbound messages only. */
export interface MergedMessageFilter {
  direction?: Direction | undefined;
  contactId?: string | undefined;
  phoneNumberId?: string | undefined;
  status?: string | undefined;
  to?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/** A position in the merged list: which table, which id, and its time. */
export interface MessageKey {
  direction: Direction;
  id: string;
  createdAt: Date;
}

function bound(
  time: AnyPgColumn,
  id: AnyPgColumn,
  f: {
    after?: PagePosition | undefined;
    since?: Date | undefined;
    until?: Date | undefined;
  },
): SQL[] {
  const out: SQL[] = [];
  if (f.after)
    out.push(
      sql`(${time}, ${id}) < (${f.after.createdAt.toISOString()}::timestamptz, ${f.after.id})`,
    );
  if (f.since) out.push(sql`${time} >= ${f.since.toISOString()}::timestamptz`);
  if (f.until) out.push(sql`${time} < ${f.until.toISOString()}::timestamptz`);
  return out;
}

function outboundBranch(
  portalId: number,
  f: MergedMessageFilter,
  after: PagePosition | undefined,
  limit: number,
): SQL {
  const where: SQL[] = [
    eq(messages.portalId, portalId),
    ...bound(messages.createdAt, messages.id, { after, ...f }),
  ];
  if (f.contactId) where.push(eq(messages.contactId, f.contactId));
  if (f.phoneNumberId) where.push(eq(messages.from, f.phoneNumberId));
  if (f.status) where.push(sql`${messages.status} = ${f.status}`);
  if (f.to) where.push(eq(messages.to, f.to));
  return sql`(select 'outbound' as direction, ${messages.id} as id, ${messages.createdAt} as at
    from ${messages} where ${and(...where)}
    order by ${messages.createdAt} desc, ${messages.id} desc limit ${limit})`;
}

function inboundBranch(
  portalId: number,
  f: MergedMessageFilter,
  after: PagePosition | undefined,
  limit: number,
): SQL {
  const t = inboundMessages;
  const where: SQL[] = [eq(t.portalId, portalId), ...bound(t.receivedAt, t.id, { after, ...f })];
  if (f.contactId) where.push(eq(t.contactId, f.contactId));
  if (f.phoneNumberId) where.push(eq(t.phoneNumberId, f.phoneNumberId));
  return sql`(select 'inbound' as direction, ${t.id} as id, ${t.receivedAt} as at
    from ${t} where ${and(...where)}
    order by ${t.receivedAt} desc, ${t.id} desc limit ${limit})`;
}

/**
 * One page of the portal's messages in both directions, newest first (outbound by
 * `created_at`, inbound by `received_at`, ties by id): the keys only; the caller reads the rows
 * (`messagesByIds`). Each direction reads at most `limit + 1` rows from its page index.
 */
export async function listMessageKeys(
  db: Db,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined; filter: MergedMessageFilter },
): Promise<KeysetPage<MessageKey>> {
  const { filter, after } = options;
  const limit = options.limit + 1;
  const outboundOnly = filter.status !== undefined || filter.to !== undefined;
  const branches: SQL[] = [];
  if (filter.direction !== 'inbound') branches.push(outboundBranch(portalId, filter, after, limit));
  if (filter.direction !== 'outbound' && !outboundOnly)
    branches.push(inboundBranch(portalId, filter, after, limit));
  if (branches.length === 0) return { rows: [], hasMore: false };
  const result: unknown = await db.execute(sql`
    select u.direction, u.id,
      to_char(u.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
    from (${sql.join(branches, sql` union all `)}) u
    order by u.at desc, u.id desc limit ${limit}`);
  const rows = (result as { rows: { direction: Direction; id: string; at: string }[] }).rows;
  const keys = rows.map((r) => ({ direction: r.direction, id: r.id, createdAt: new Date(r.at) }));
  return { rows: keys.slice(0, options.limit), hasMore: keys.length > options.limit };
}

/** The rows of `keys`, each table read once by primary key, within the portal. */
export async function messagesByIds(
  db: Db,
  portalId: number,
  keys: readonly MessageKey[],
): Promise<{
  outbound: Map<string, typeof messages.$inferSelect>;
  inbound: Map<string, typeof inboundMessages.$inferSelect>;
}> {
  const ids = (d: Direction) => keys.filter((k) => k.direction === d).map((k) => k.id);
  const out = ids('outbound');
  const inb = ids('inbound');
  const [outRows, inRows] = await Promise.all([
    out.length === 0
      ? []
      : db
          .select()
          .from(messages)
          .where(and(eq(messages.portalId, portalId), sql`${messages.id} in ${out}`)),
    inb.length === 0
      ? []
      : db
          .select()
          .from(inboundMessages)
          .where(and(eq(inboundMessages.portalId, portalId), sql`${inboundMessages.id} in ${inb}`)),
  ]);
  return {
    outbound: new Map(outRows.map((r) => [r.id, r])),
    inbound: new Map(inRows.map((r) => [r.id, r])),
  };
}
