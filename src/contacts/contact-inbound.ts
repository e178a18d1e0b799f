/**
 * Inbound messages' senders, many at once: the statement that records that people wrote to the
 * portal (`recordInbound` for a batch), as a fragment the provider's webhook ingestion runs
 * inside its own statement (a data-modifying `WITH` entry). `last_inbound_at` moves forward only;
 * a phone the portal does not know becomes a contact with consent unknown, source `provider`.
 *
 * @see https://www.postgresql.org/docs/current/queries-with.html#QUERIES-WITH-MODIFYING
 */
import { sql, type SQL } from 'drizzle-orm';
import { contacts } from '../db/schema/index.ts';

/**
 * `insert … on conflict … returning id, phone` over `source`, a relation with the columns
 * `contact_id` (a new contact's id, `ctc_…`), `phone` (E.164, one row per phone) and `at`
 * (timestamptz). Returns every row's contact: new or existing.
 */
export function recordInboundStatement(portalId: number, source: SQL): SQL {
  return sql`
    insert into ${contacts} (id, portal_id, phone, consent_source, last_inbound_at)
    select s.contact_id, ${portalId}::int, s.phone, 'provider', s.at from ${source} as s
    on conflict (portal_id, phone) do update set
      last_inbound_at = greatest(${contacts.lastInboundAt}, excluded.last_inbound_at),
      updated_at = case when ${contacts.lastInboundAt} is null
        or ${contacts.lastInboundAt} < excluded.last_inbound_at
        then now() else ${contacts.updatedAt} end
    returning id, phone`;
}
