/**
 * The delivery queue moves onto the message rows without loss, on both backends: a message that
 * waited for its pg-boss `message.send` job (queued, no wamid, no attempt) is due at once; one
 * with an attempt (held), one the provider accepted, a sent one and an inbound one are not.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../helpers/sql.ts';
import { migrateTo, migrationTargets, previousMigrations } from '../helpers/previous-schema.ts';

/** The last migration before the message rows became the delivery queue. */
const PREVIOUS = '0027_business_scoped_user_ids';

for (const target of migrationTargets) {
  describe(`message row queue migration (${target.name})`, () => {
    test('the messages waiting for their delivery job are due; the others are not', async (t) => {
      const storage = await target.open(t);
      t.after(() => storage.close());
      await migrateTo(storage, previousMigrations(t, PREVIOUS));
      const [portal] = await queryRows<{ id: number }>(
        storage,
        sql`insert into portals (portal_code, name) values ('700028', 'Old queue') returning id`,
      );
      const p = portal!.id;
      const outbound = (id: string, status: string, wamid: string | null, attempted: boolean) =>
        sql`(${id}, ${p}, 'outbound', '+16505550001', 'PN1', 'template', ${status}, ${wamid},
          ${attempted ? sql`now()` : sql`null`}, now() - interval '1 minute', 4, 'EUR', now())`;
      await storage.db.execute(sql`insert into messages (id, portal_id, direction, wa_id,
          phone_number_id, type, status, provider_message_id, send_attempted_at, queued_at,
          price_minor, currency, created_at) values
        ${outbound('msg_waiting', 'queued', null, false)},
        ${outbound('msg_held', 'queued', null, true)},
        ${outbound('msg_accepted', 'queued', 'wamid.a', true)},
        ${outbound('msg_sent', 'sent', 'wamid.s', true)}`);
      await storage.db.execute(sql`insert into messages (id, portal_id, direction, wa_id,
          phone_number_id, type, provider_message_id, stored_at, created_at) values
        ('msg_in', ${p}, 'inbound', '+16505550001', 'PN1', 'text', 'wamid.in', now(), now())`);

      await storage.migrate();

      const rows = await queryRows<{ id: string; due: boolean; attempts: number }>(
        storage,
        sql`select id, delivery_due_at <= now() as due, delivery_attempts as attempts
          from messages where portal_id = ${p} order by id`,
      );
      assert.deepEqual(
        rows.map((r) => [r.id, r.due, Number(r.attempts)]),
        [
          ['msg_accepted', null, 0],
          ['msg_held', null, 0],
          ['msg_in', null, 0],
          ['msg_sent', null, 0],
          ['msg_waiting', true, 0],
        ],
      );
    });
  });
}
