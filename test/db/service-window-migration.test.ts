/**
 * The service windows of the previous schema (`service_windows`) are carried into the one stored
 * truth, `conversations.last_inbound_at`, without loss, on both backends: a window newer than its
 * conversation's moves it forward, an older one leaves it, a window without a conversation gets
 * one made from its newest inbound message (unread counted as the inbound statement counts), and
 * each window reads as it was through the service-window module.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import {
  findConversation,
  listConversationPage,
} from '../../src/messaging/conversations/conversations-repository.ts';
import { findServiceWindow, SERVICE_WINDOW_MS } from '../../src/messaging/store/service-window.ts';
import { queryRows } from '../helpers/sql.ts';
import { migrateTo, migrationTargets, previousMigrations } from '../helpers/previous-schema.ts';

/** The last migration of the schema that stored windows in `service_windows`. */
const PREVIOUS = '0021_number_onboarding';
const MINUTE = 60_000;

for (const target of migrationTargets) {
  describe(`service windows into conversations (${target.name})`, () => {
    test('every window of the previous schema reads the same after the migration', async (t) => {
      const storage = await target.open(t);
      t.after(() => storage.close());
      await migrateTo(storage, previousMigrations(t, PREVIOUS));
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      const ago = (minutes: number) => new Date(now.getTime() - minutes * MINUTE).toISOString();
      const [portal] = await queryRows<{ id: number }>(
        storage,
        sql`insert into portals (portal_code, name) values ('700002', 'Old windows') returning id`,
      );
      const p = portal!.id;
      await storage.db.execute(sql`insert into contacts (id, portal_id, phone) values
        ('ctc_ada', ${p}, '+16505550001'), ('ctc_bob', ${p}, '+16505550002'),
        ('ctc_cid', ${p}, '+16505550003')`);
      const inbound = (id: string, contact: string, number: string, type: string, at: string) =>
        sql`(${id}, ${p}, ${contact}, '+16505550000', ${number}, ${`wamid.${id}`}, ${type},
          ${at}::timestamptz)`;
      await storage.db.execute(sql`insert into inbound_messages (id, portal_id, contact_id, "from",
          phone_number_id, provider_message_id, type, received_at) values
        ${inbound('msg_ada1', 'ctc_ada', 'PN1', 'text', ago(120))},
        ${inbound('msg_bob1', 'ctc_bob', 'PN1', 'text', ago(60))},
        ${inbound('msg_cid1', 'ctc_cid', 'PN2', 'text', ago(40))},
        ${inbound('msg_cid2', 'ctc_cid', 'PN2', 'text', ago(35))},
        ${inbound('msg_cid3', 'ctc_cid', 'PN2', 'reaction', ago(30))}`);
      await storage.db.execute(
        sql`update inbound_messages set read_at = now() where id = 'msg_cid1'`,
      );
      // Ada's conversation lags behind her window; Bob's is ahead of his; Cid has none.
      await storage.db.execute(sql`insert into conversations (id, portal_id, contact_id,
          phone_number_id, last_message_id, last_message_at, last_direction, unread_count,
          last_inbound_at) values
        ('cnv_ada', ${p}, 'ctc_ada', 'PN1', 'msg_ada1', ${ago(120)}, 'inbound', 1, ${ago(300)}),
        ('cnv_bob', ${p}, 'ctc_bob', 'PN1', 'msg_bob1', ${ago(60)}, 'inbound', 1, ${ago(60)})`);
      await storage.db.execute(sql`insert into service_windows (portal_id, contact_id,
          phone_number_id, last_inbound_at) values
        (${p}, 'ctc_ada', 'PN1', ${ago(120)}), (${p}, 'ctc_bob', 'PN1', ${ago(180)}),
        (${p}, 'ctc_cid', 'PN2', ${ago(30)})`);

      await storage.migrate();

      const [table] = await queryRows<{ t: string | null }>(
        storage,
        sql`select to_regclass('service_windows')::text as t`,
      );
      assert.equal(table!.t, null, 'the second store is gone');
      const db = storage.db;
      const expected = { ctc_ada: ago(120), ctc_bob: ago(60), ctc_cid: ago(30) };
      for (const [contactId, at] of Object.entries(expected)) {
        const window = await findServiceWindow(db, {
          portalId: p,
          contactId,
          phoneNumberId: contactId === 'ctc_cid' ? 'PN2' : 'PN1',
          now,
        });
        assert.deepEqual(
          window,
          { open: true, expiresAt: new Date(Date.parse(at) + SERVICE_WINDOW_MS) },
          contactId,
        );
      }
      const page = await listConversationPage(db, p, { limit: 10, filter: {} });
      assert.deepEqual(
        page.rows.map((r) => [r.contactId, r.phoneNumberId, r.lastInboundAt?.toISOString()]),
        [
          ['ctc_cid', 'PN2', ago(30)],
          ['ctc_bob', 'PN1', ago(60)],
          ['ctc_ada', 'PN1', ago(120)],
        ],
      );
      const cid = page.rows[0]!;
      assert.match(cid.id, /^cnv_[0-9A-Za-z]+$/);
      assert.deepEqual(
        {
          lastMessageId: cid.lastMessageId,
          lastDirection: cid.lastDirection,
          lastMessageAt: cid.lastMessageAt.toISOString(),
          unreadCount: cid.unreadCount,
        },
        {
          lastMessageId: 'msg_cid3',
          lastDirection: 'inbound',
          lastMessageAt: ago(30),
          unreadCount: 1,
        },
        'made from the newest inbound message; the read text and the reaction are not unread',
      );
      assert.ok(await findConversation(db, p, cid.id));
    });
  });
}
