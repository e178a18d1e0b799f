/**
 * The conversations repository on both backends: conversations kept per contact and business
 * number (last message forward only, unread counts, the service window), their keyset pages
 * with the unread and open-window filters, the list of both directions in one keyset order
 * with its filters, and the once-per-window claim of closing windows.
 */
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Storage } from '../../src/db/client.ts';
import { contacts } from '../../src/db/schema/contacts.ts';
import { messages } from '../../src/db/schema/messages.ts';
import { portals } from '../../src/db/schema/portals.ts';
import {
  claimClosingWindows,
  findConversation,
  listConversationPage,
  markConversationRead,
  recordConversationMessage,
} from '../../src/messaging/conversations/conversations-repository.ts';
import {
  listMessageRows,
  type MessageListFilter,
} from '../../src/messaging/store/messages-repository.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends, type Backend } from '../helpers/storage.ts';

const T0 = new Date('2026-11-20T10:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
const HOUR = 3600_000;

interface World {
  storage: Storage;
  portalId: number;
  otherPortalId: number;
  alice: string;
  bob: string;
}

async function world(t: TestContext, backend: Backend): Promise<World> {
  const storage = await backend.open();
  t.after(() => storage.close());
  const db = storage.db;
  const [p1, p2] = await db
    .insert(portals)
    .values([
      { portalCode: 'conv-a', name: 'A' },
      { portalCode: 'conv-b', name: 'B' },
    ])
    .returning({ id: portals.id });
  await db.insert(contacts).values([
    { id: 'ctc_alice', portalId: p1!.id, phone: '+16505550001', firstName: 'Alice' },
    { id: 'ctc_bob', portalId: p1!.id, phone: '+16505550002' },
    { id: 'ctc_other', portalId: p2!.id, phone: '+16505550001' },
  ]);
  return { storage, portalId: p1!.id, otherPortalId: p2!.id, alice: 'ctc_alice', bob: 'ctc_bob' };
}

async function outbound(w: World, id: string, contactId: string, from: string, when: Date) {
  await w.storage.db.insert(messages).values({
    id,
    portalId: w.portalId,
    direction: 'outbound',
    contactId,
    waId: contactId === w.alice ? '+16505550001' : '+16505550002',
    phoneNumberId: from,
    type: 'template',
    status: 'queued',
    templateName: 'greeting',
    priceMinor: 5,
    currency: 'EUR',
    createdAt: when,
    queuedAt: when,
  });
  await recordConversationMessage(w.storage.db, {
    portalId: w.portalId,
    contactId,
    phoneNumberId: from,
    messageId: id,
    direction: 'outbound',
    at: when,
  });
}

async function inbound(w: World, id: string, contactId: string, to: string, when: Date) {
  await w.storage.db.insert(messages).values({
    id,
    portalId: w.portalId,
    direction: 'inbound',
    contactId,
    waId: contactId === w.alice ? '+16505550001' : '+16505550002',
    phoneNumberId: to,
    providerMessageId: `wamid.${id}`,
    type: 'text',
    createdAt: when,
    storedAt: when,
  });
  await recordConversationMessage(w.storage.db, {
    portalId: w.portalId,
    contactId,
    phoneNumberId: to,
    messageId: id,
    direction: 'inbound',
    at: when,
  });
}

async function allKeys(w: World, filter: MessageListFilter, limit: number) {
  const ids: string[] = [];
  let after: { createdAt: Date; id: string } | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await listMessageRows(w.storage.db, w.portalId, { limit, after, filter });
    ids.push(...page.rows.map((r) => r.id));
    if (!page.hasMore) return ids;
    after = page.rows.at(-1);
  }
  throw new Error('too many pages');
}

for (const backend of backends()) {
  describe(`conversations repository (${backend.name})`, () => {
    test('conversations: last message forward only, unread, window, filters, pages', async (t) => {
      const w = await world(t, backend);
      const db = w.storage.db;
      await inbound(w, 'msg_in1', w.alice, 'PN1', at(0));
      await outbound(w, 'msg_out1', w.alice, 'PN1', at(1));
      await inbound(w, 'msg_in2', w.alice, 'PN1', at(2));
      // A late webhook of an older message: counted unread, but not the last message.
      await inbound(w, 'msg_in0', w.alice, 'PN1', at(-5));
      await outbound(w, 'msg_out2', w.bob, 'PN1', at(3));
      await inbound(w, 'msg_in3', w.alice, 'PN2', at(-60));

      const first = await listConversationPage(db, w.portalId, { limit: 10, filter: {} });
      assert.deepEqual(
        first.rows.map((r) => [r.contactId, r.phoneNumberId, r.lastMessageId, r.unreadCount]),
        [
          ['ctc_bob', 'PN1', 'msg_out2', 0],
          ['ctc_alice', 'PN1', 'msg_in2', 3],
          ['ctc_alice', 'PN2', 'msg_in3', 1],
        ],
      );
      const alice = first.rows[1]!;
      assert.equal(alice.contactFirstName, 'Alice');
      assert.equal(alice.contactPhone, '+16505550001');
      assert.equal(alice.lastType, 'text');
      assert.equal(alice.lastInboundAt?.toISOString(), at(2).toISOString());
      assert.equal(first.rows[0]!.lastTemplateName, 'greeting');
      assert.equal(first.rows[0]!.lastInboundAt, null);
      assert.match(alice.id, /^cnv_[0-9A-Za-z]+$/);

      // Pages of one: the same rows in the same order, no repeat.
      const ids: string[] = [];
      let after;
      // Bounded: a cursor that repeats a page must fail the test, not loop.
      for (let pages = 0; ; pages++) {
        assert.ok(pages <= first.rows.length, 'more pages than rows');
        const page = await listConversationPage(db, w.portalId, { limit: 1, after, filter: {} });
        ids.push(...page.rows.map((r) => r.id));
        if (!page.hasMore) break;
        after = page.rows.at(-1);
      }
      assert.deepEqual(
        ids,
        first.rows.map((r) => r.id),
      );

      const unread = await listConversationPage(db, w.portalId, {
        limit: 10,
        filter: { unread: true },
      });
      assert.deepEqual(
        unread.rows.map((r) => r.lastMessageId),
        ['msg_in2', 'msg_in3'],
      );
      // At at(2) + 23h30: PN1's window (from at(2)) is open, PN2's (from at(-60)) closed.
      const open = await listConversationPage(db, w.portalId, {
        limit: 10,
        filter: { windowOpenAt: new Date(at(2).getTime() + 23.5 * HOUR) },
      });
      assert.deepEqual(
        open.rows.map((r) => r.lastMessageId),
        ['msg_in2'],
      );

      await markConversationRead(db, {
        portalId: w.portalId,
        contactId: w.alice,
        phoneNumberId: 'PN1',
        count: 5,
      });
      const read = await findConversation(db, w.portalId, alice.id);
      assert.equal(read?.unreadCount, 0);
      // Another portal never sees it.
      assert.equal(await findConversation(db, w.otherPortalId, alice.id), null);
      const other = await listConversationPage(db, w.otherPortalId, { limit: 10, filter: {} });
      assert.equal(other.rows.length, 0);
    });

    test('messages of both directions in one keyset order, with filters', async (t) => {
      const w = await world(t, backend);
      await inbound(w, 'msg_a', w.alice, 'PN1', at(0));
      await outbound(w, 'msg_b', w.alice, 'PN1', at(1));
      await outbound(w, 'msg_c', w.bob, 'PN2', at(1));
      await inbound(w, 'msg_d', w.bob, 'PN2', at(2));
      await inbound(w, 'msg_e', w.alice, 'PN2', at(3));

      const everything = ['msg_e', 'msg_d', 'msg_c', 'msg_b', 'msg_a'];
      for (const limit of [1, 2, 3, 10]) assert.deepEqual(await allKeys(w, {}, limit), everything);
      assert.deepEqual(await allKeys(w, { direction: 'inbound' }, 2), ['msg_e', 'msg_d', 'msg_a']);
      assert.deepEqual(await allKeys(w, { direction: 'outbound' }, 2), ['msg_c', 'msg_b']);
      assert.deepEqual(await allKeys(w, { contactId: w.alice }, 2), ['msg_e', 'msg_b', 'msg_a']);
      assert.deepEqual(await allKeys(w, { phoneNumberId: 'PN2' }, 1), ['msg_e', 'msg_d', 'msg_c']);
      assert.deepEqual(await allKeys(w, { contactId: w.alice, phoneNumberId: 'PN1' }, 1), [
        'msg_b',
        'msg_a',
      ]);
      assert.deepEqual(await allKeys(w, { since: at(1), until: at(3) }, 2), [
        'msg_d',
        'msg_c',
        'msg_b',
      ]);
      // `status` and `to` are outbound's.
      assert.deepEqual(await allKeys(w, { status: 'queued' }, 2), ['msg_c', 'msg_b']);

      const page = await listMessageRows(w.storage.db, w.portalId, { limit: 5, filter: {} });
      const directions = page.rows.map((r) => r.direction);
      assert.equal(directions.filter((d) => d === 'outbound').length, 2);
      assert.equal(directions.filter((d) => d === 'inbound').length, 3);
      const none = await listMessageRows(w.storage.db, w.otherPortalId, { limit: 5, filter: {} });
      assert.equal(none.rows.length, 0);
    });

    test('closing windows are claimed once per window', async (t) => {
      const w = await world(t, backend);
      const db = w.storage.db;
      await inbound(w, 'msg_a', w.alice, 'PN1', at(0));
      await inbound(w, 'msg_b', w.bob, 'PN1', at(30));
      const lead = HOUR;
      // 22h59 after alice wrote: nothing is due yet.
      assert.deepEqual(
        await claimClosingWindows(db, new Date(at(0).getTime() + 22.98 * HOUR), lead),
        [],
      );
      const now = new Date(at(0).getTime() + 23.1 * HOUR);
      const due = await claimClosingWindows(db, now, lead);
      assert.deepEqual(
        due.map((d) => [d.contactId, d.expiresAt.toISOString()]),
        [[w.alice, new Date(at(0).getTime() + 24 * HOUR).toISOString()]],
      );
      assert.deepEqual(await claimClosingWindows(db, new Date(now.getTime() + 60_000), lead), []);
      // Alice writes again: her new window is announced before its own end.
      await inbound(w, 'msg_c', w.alice, 'PN1', new Date(now.getTime() + 60_000));
      const later = new Date(now.getTime() + 23.5 * HOUR);
      const again = await claimClosingWindows(db, later, lead);
      assert.deepEqual(
        again.map((d) => d.contactId),
        [w.alice],
      );
      // Bob's window closed unannounced? No: it was claimed in its last hour only if swept;
      // a window already closed is never announced late.
      const closed = await claimClosingWindows(db, new Date(at(30).getTime() + 25 * HOUR), lead);
      assert.deepEqual(closed, []);
    });

    test('the page query reads the page index (EXPLAIN)', async (t) => {
      const w = await world(t, backend);
      await w.storage.db.execute(sql`set enable_seqscan = off`);
      const plan = await queryRows<Record<string, string>>(
        w.storage,
        sql`explain select id from conversations where portal_id = ${w.portalId}
            order by last_message_at desc, id desc limit 21`,
      );
      assert.match(plan.map((r) => Object.values(r)[0]).join('\n'), /conversations_portal_page/);
    });
  });
}
