/**
 * The statements of an inbound batch, set-based so a webhook of 100 messages costs two round
 * trips rather than several per message: `messagesByWamid` (what the batch's replies and
 * reactions name) and `ingest`, one data-modifying `WITH` that stores each new message once per
 * (portal, wamid), its medium, and moves the conversations on (which opens their service
 * windows: conversations/service-window.ts). The senders are recorded as contacts before it
 * (inbound-people.ts).
 *
 * @see https://www.postgresql.org/docs/current/queries-with.html#QUERIES-WITH-MODIFYING
 * @see docs/messaging.md "Inbound messages"
 */
import { sql } from 'drizzle-orm';
import { conversations, media } from '../../db/schema/conversations.ts';
import { messages } from '../../db/schema/messages.ts';
import type { SealedValue } from '../../platform/keyring.ts';
import type { Db } from '../store/messages-repository.ts';

/** One new message of the batch, as the statement takes it (content already sealed). */
export interface IngestRow {
  id: string;
  wamid: string;
  /** The sender's address: their phone (E.164), else their business-scoped user id. */
  wa_id: string;
  /** The sender's contact (`ctc_…`), recorded before the statement. */
  contact_id: string;
  /** The provider's type as received. */
  type: string;
  content: SealedValue;
  /** Our medium (`med_…`) and what the webhook said of it; null for other types. */
  media_id: string | null;
  provider_media_id: string | null;
  mime_type: string | null;
  sha256: string | null;
  /** The wamid replied or reacted to, and our message of that wamid when known. */
  ctx_wamid: string | null;
  ctx_message_id: string | null;
  received_at: string;
}

/** One sender of the batch: their contact, and a new conversation's id (used only if the
 * contact has none with this number). */
export interface IngestPerson {
  contact_id: string;
  conversation_id: string;
}

/** Both drivers' results carry `rows`; the Database type leaves the result kind open. */
const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;

/**
 * Our messages (either direction) of these wamids in the portal.
 *
 * @returns wamid → message id (`msg_…`).
 */
export async function messagesByWamid(
  db: Db,
  portalId: number,
  wamids: readonly string[],
): Promise<Map<string, string>> {
  if (wamids.length === 0) return new Map();
  const list = sql.join(
    wamids.map((w) => sql`${w}`),
    sql`, `,
  );
  const result: unknown = await db.execute(sql`
    select provider_message_id as wamid, id from ${messages}
      where portal_id = ${portalId} and direction = 'outbound' and provider_message_id in (${list})
    union all
    select provider_message_id, id from ${messages}
      where portal_id = ${portalId} and direction = 'inbound' and provider_message_id in (${list})`);
  return new Map(rowsOf<{ wamid: string; id: string }>(result).map((r) => [r.wamid, r.id]));
}

/**
 * Store the batch's messages written to `phoneNumberId`: the senders recorded (contacts), each
 * message inserted unless its wamid is stored already, a medium per media message, and each
 * sender's conversation moved on (newest message, unread count, last inbound time, which is the
 * service window; a reaction is not counted unread). A message that is not a reaction reopens a
 * resolved or snoozed conversation (docs/decisions/0064-conversations-worked-by-a-team.md).
 *
 * @returns the messages inserted now (a replay's are absent) with their contact, and the
 *   conversations reopened, with the status and snooze end they had.
 */
export async function ingest(
  db: Db,
  portalId: number,
  phoneNumberId: string,
  rows: readonly IngestRow[],
  people: readonly IngestPerson[],
): Promise<{
  inserted: { id: string; contactId: string }[];
  reopened: {
    conversationId: string;
    contactId: string;
    from: string;
    snoozedUntil: Date | null;
  }[];
}> {
  const input = sql`(select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(id text,
    wamid text, wa_id text, contact_id text, type text, content jsonb, media_id text, provider_media_id text,
    mime_type text, sha256 text, ctx_wamid text, ctx_message_id text, received_at timestamptz))`;
  const senders = sql`(select * from jsonb_to_recordset(${JSON.stringify(people)}::jsonb)
    as p(contact_id text, conversation_id text))`;
  const result: unknown = await db.execute(sql`
    with people as ${senders},
    input as ${input},
    inserted as (
      insert into ${messages} (id, portal_id, direction, contact_id, wa_id, phone_number_id,
        provider_message_id, type, content, media_id, context_provider_message_id,
        context_message_id, stored_at, created_at)
      select r.id, ${portalId}::int, 'inbound', r.contact_id, r.wa_id, ${phoneNumberId}::text,
        r.wamid, r.type, r.content, r.media_id, r.ctx_wamid, r.ctx_message_id, now(),
        r.received_at
      from input r
      on conflict (portal_id, provider_message_id) where direction = 'inbound' do nothing
      returning id, contact_id, type, created_at as received_at, media_id),
    medium as (
      insert into ${media} (id, portal_id, message_id, provider_media_id, mime_type, sha256)
      select i.media_id, ${portalId}::int, i.id, r.provider_media_id, r.mime_type, r.sha256
      from inserted i join input r on r.id = i.id
      where i.media_id is not null),
    latest as (
      select distinct on (contact_id) contact_id, id, received_at from inserted
      order by contact_id, received_at desc, id desc),
    counts as (
      select contact_id, (count(*) filter (where type <> 'reaction'))::int as unread,
        max(received_at) as last_at
      from inserted group by contact_id),
    reopened as (
      select c.id, c.contact_id, c.status, c.snoozed_until from ${conversations} c
      join counts using (contact_id)
      where c.portal_id = ${portalId} and c.phone_number_id = ${phoneNumberId}
        and counts.unread > 0 and c.status in ('resolved', 'snoozed')),
    conversation as (
      insert into ${conversations} (id, portal_id, contact_id, phone_number_id, last_message_id,
        last_message_at, last_direction, unread_count, last_inbound_at)
      select people.conversation_id, ${portalId}::int, latest.contact_id, ${phoneNumberId}::text,
        latest.id, latest.received_at, 'inbound', counts.unread, counts.last_at
      from latest join counts using (contact_id) join people using (contact_id)
      on conflict (portal_id, contact_id, phone_number_id) do update set
        last_message_id = case when excluded.last_message_at >= ${conversations.lastMessageAt}
          then excluded.last_message_id else ${conversations.lastMessageId} end,
        last_direction = case when excluded.last_message_at >= ${conversations.lastMessageAt}
          then 'inbound' else ${conversations.lastDirection} end,
        last_message_at = greatest(${conversations.lastMessageAt}, excluded.last_message_at),
        unread_count = ${conversations.unreadCount} + excluded.unread_count,
        last_inbound_at = greatest(${conversations.lastInboundAt}, excluded.last_inbound_at),
        status = case when excluded.unread_count > 0 and ${conversations.status} in ('resolved', 'snoozed')
          then 'open' else ${conversations.status} end,
        snoozed_until = case when excluded.unread_count > 0 then null
          else ${conversations.snoozedUntil} end)
    select id, contact_id, null::text as from_status, null::timestamptz as snoozed_until
      from inserted
    union all
    select id, contact_id, status, snoozed_until from reopened`);
  const out = rowsOf<{
    id: string;
    contact_id: string;
    from_status: string | null;
    snoozed_until: Date | string | null;
  }>(result);
  return {
    inserted: out
      .filter((r) => r.from_status === null)
      .map((r) => ({ id: r.id, contactId: r.contact_id })),
    reopened: out.flatMap((r) =>
      r.from_status === null
        ? []
        : [
            {
              conversationId: r.id,
              contactId: r.contact_id,
              from: r.from_status,
              snoozedUntil: r.snoozed_until === null ? null : new Date(r.snoozed_until),
            },
          ],
    ),
  };
}
