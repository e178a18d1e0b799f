/**
 * The billed-pricing columns are added without loss, on both backends: every outbound message
 * settled before them gets the charge its ledger captured (its reserved price when sent, 0 when
 * its reservation was released), a queued one stays unsettled, and an inbound one is untouched.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../helpers/sql.ts';
import { migrateTo, migrationTargets, previousMigrations } from '../helpers/previous-schema.ts';

/** The last migration before the billed-pricing columns. */
const PREVIOUS = '0025_one_sealed_shape';

for (const target of migrationTargets) {
  describe(`billed pricing migration (${target.name})`, () => {
    test('settled messages are charged what the ledger captured; queued and inbound stay null', async (t) => {
      const storage = await target.open(t);
      t.after(() => storage.close());
      await migrateTo(storage, previousMigrations(t, PREVIOUS));
      const [portal] = await queryRows<{ id: number }>(
        storage,
        sql`insert into portals (portal_code, name) values ('700027', 'Old prices') returning id`,
      );
      const p = portal!.id;
      const outbound = (id: string, status: string) =>
        sql`(${id}, ${p}, 'outbound', '+16505550001', 'PN1', 'template', ${status}, now(), 4,
          'EUR', now())`;
      await storage.db.execute(sql`insert into messages (id, portal_id, direction, wa_id,
          phone_number_id, type, status, queued_at, price_minor, currency, created_at) values
        ${outbound('msg_read', 'read')}, ${outbound('msg_failed', 'failed')},
        ${outbound('msg_queued', 'queued')}`);
      await storage.db.execute(sql`insert into messages (id, portal_id, direction, wa_id,
          phone_number_id, type, provider_message_id, stored_at, created_at) values
        ('msg_in', ${p}, 'inbound', '+16505550001', 'PN1', 'text', 'wamid.in', now(), now())`);
      await storage.db.execute(sql`insert into credit_transactions (id, portal_id, kind, amount,
          currency, message_id, actor) values
        ('ctx_1', ${p}, 'reserve', 4, 'EUR', 'msg_read', 'api'),
        ('ctx_2', ${p}, 'capture', 4, 'EUR', 'msg_read', 'provider'),
        ('ctx_3', ${p}, 'reserve', 4, 'EUR', 'msg_failed', 'api'),
        ('ctx_4', ${p}, 'release', 4, 'EUR', 'msg_failed', 'provider'),
        ('ctx_5', ${p}, 'reserve', 4, 'EUR', 'msg_queued', 'api')`);

      await storage.migrate();

      const rows = await queryRows<{ id: string; charged: number | null; model: string | null }>(
        storage,
        sql`select id, charged_minor as charged, pricing_model as model from messages
          where portal_id = ${p} order by id`,
      );
      assert.deepEqual(
        rows.map((r) => [r.id, r.charged === null ? null : Number(r.charged), r.model]),
        [
          ['msg_failed', 0, null],
          ['msg_in', null, null],
          ['msg_queued', null, null],
          ['msg_read', 4, null],
        ],
      );
    });
  });
}
