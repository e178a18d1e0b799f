/**
 * Conversations worked by a team, through the API on both backends: `GET/PATCH
 * /messaging/conversations/{id}` (status, snooze, assignee, labels; refusals that change
 * nothing), the list's `status`, `assigneeId` and `label` filters, the reassignment's audit
 * record, the tenant events (`conversation.status_changed`, `.assigned`, `.labelled`,
 * `.note_added`), a new inbound message reopening a resolved conversation and ending a snooze,
 * the sweep ending a snooze at its time, private notes (sealed at rest, in no other event), and
 * each member's own unread count.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import type { InboundMessageEvent } from '../../src/partner/cloud-api/provider-webhook-events.ts';
import { loadKeyring } from '../../src/platform/keyring.ts';
import { openEventPayload } from '../../src/webhooks/event-payload.ts';
import { createPortal } from '../helpers/app.ts';
import { messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const CONVERSATIONS = '/api/v1/external/messaging/conversations';
const EVENT_TYPES = [
  'conversation.status_changed',
  'conversation.assigned',
  'conversation.labelled',
  'conversation.note_added',
  'message.received',
];

const ago = (ms: number) => new Date(Math.floor(Date.now() / 1000) * 1000 - ms);

async function write(s: MessagingSetup, from: string, body: string, at = ago(1000)) {
  const event: InboundMessageEvent = {
    wamid: `wamid.${Math.random().toString(36).slice(2)}`,
    from,
    timestamp: at,
    type: 'text',
    content: { type: 'text', text: { body } },
  };
  await s.services.messaging.webhookSink.inboundMessages(s.portalId, s.numbers[0]!, [event]);
}

function call(s: MessagingSetup, method: 'GET' | 'PATCH' | 'POST', url: string, payload?: object) {
  return s.app.inject({
    method,
    url,
    headers: { authorization: s.token },
    ...(payload !== undefined && { payload }),
  });
}

/** The events of `type` as sent (their data is sealed in the rows), oldest first. */
async function events(s: MessagingSetup, type: string) {
  const rows = await queryRows<{ id: string; payload: Record<string, unknown> }>(
    s.services.storage,
    sql`select id, payload from webhook_events where portal_id = ${s.portalId} and type = ${type}
        order by created_at, id`,
  );
  const keyring = loadKeyring(s.config);
  return rows.map((r) => openEventPayload(keyring, s.portalId, r.id, r.payload).data);
}

async function setup(
  t: Parameters<typeof messagingSetup>[0],
  backend: Parameters<typeof messagingSetup>[1],
) {
  const s = await messagingSetup(t, backend);
  await s.services.webhooks.start();
  await s.services.webhooks.addEndpoint(
    s.portalId,
    { url: 'http://127.0.0.1:9/hook', eventTypes: EVENT_TYPES },
    { actor: CLI_ACTOR },
  );
  const [admin] = await queryRows<{ id: number; portal_code: string }>(
    s.services.storage,
    sql`select u.id, p.portal_code from users u join portals p on p.id = u.portal_id
        where u.portal_id = ${s.portalId}`,
  );
  const agent = await s.services.accounts.createUser({
    portalCode: admin!.portal_code,
    email: `agent-${Math.random().toString(36).slice(2)}@example.test`,
    mainAdmin: false,
  });
  const gone = await s.services.accounts.createUser({
    portalCode: admin!.portal_code,
    email: `gone-${Math.random().toString(36).slice(2)}@example.test`,
    mainAdmin: false,
  });
  await s.services.team.disable({ portalId: s.portalId, userId: gone.userId, actor: CLI_ACTOR });
  return { s, adminId: admin!.id, agentId: agent.userId, disabledId: gone.userId };
}

for (const backend of backends()) {
  describe(`conversations worked by a team (${backend.name})`, () => {
    test('status, assignee and labels: change, refusals, filters, events, audit', async (t) => {
      const { s, adminId, agentId, disabledId } = await setup(t, backend);
      // A second apart: the list is newest activity first, and the stored times have seconds.
      await write(s, '16505550001', 'where is my order?', ago(2000));
      await write(s, '16505550002', 'hello', ago(1000));
      const [alice, bob] = (await call(s, 'GET', CONVERSATIONS)).json().data.items;
      assert.equal(alice.contact.phone, '+16505550002');
      assert.equal(bob.status, 'open');
      assert.equal(bob.assigneeId, null);
      assert.deepEqual(bob.labels, []);
      assert.equal(bob.snoozedUntil, null);

      const one = await call(s, 'GET', `${CONVERSATIONS}/${bob.id}`);
      assert.equal(one.statusCode, 200);
      assert.deepEqual(one.json().data, bob);
      for (const id of ['cnv_nope', 'nope'])
        assert.equal((await call(s, 'GET', `${CONVERSATIONS}/${id}`)).statusCode, 404);

      const changed = await call(s, 'PATCH', `${CONVERSATIONS}/${bob.id}`, {
        status: 'pending',
        assigneeId: `usr_${agentId}`,
        labels: [' vip', 'billing', 'vip'],
      });
      assert.equal(changed.statusCode, 200, changed.body);
      const data = changed.json().data;
      assert.equal(data.status, 'pending');
      assert.equal(data.assigneeId, `usr_${agentId}`);
      assert.deepEqual(data.labels, ['billing', 'vip']);

      // Refusals change nothing.
      const other = await createPortal(s.services);
      const refusals: [object, string][] = [
        [{ status: 'snoozed' }, 'body.snoozedUntil'],
        [{ status: 'snoozed', snoozedUntil: ago(1000).toISOString() }, 'body.snoozedUntil'],
        [
          { status: 'open', snoozedUntil: new Date(Date.now() + 60_000).toISOString() },
          'body.snoozedUntil',
        ],
        [{ assigneeId: `usr_${other.userId}` }, 'body.assigneeId'],
        [{ assigneeId: 'usr_999999' }, 'body.assigneeId'],
        [{ assigneeId: `usr_${disabledId}` }, 'body.assigneeId'],
        [{ assigneeId: '7' }, 'body/assigneeId'],
        [{}, ''],
        [{ labels: ['x'.repeat(51)] }, 'body/labels/0'],
        [{ status: 'closed' }, 'body/status'],
      ];
      for (const [body, field] of refusals) {
        const res = await call(s, 'PATCH', `${CONVERSATIONS}/${bob.id}`, body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)}: ${res.body}`);
        assert.equal(res.json().error.code, 'invalid_request');
        if (field)
          assert.ok(
            JSON.stringify(res.json().error.details ?? []).includes(field.split('/').at(-1)!),
            `${JSON.stringify(body)}: ${res.body}`,
          );
      }
      assert.equal(
        (await call(s, 'PATCH', `${CONVERSATIONS}/cnv_nope`, { status: 'open' })).statusCode,
        404,
      );
      assert.deepEqual((await call(s, 'GET', `${CONVERSATIONS}/${bob.id}`)).json().data, {
        ...bob,
        status: 'pending',
        assigneeId: `usr_${agentId}`,
        labels: ['billing', 'vip'],
      });

      // The same change again announces nothing.
      await call(s, 'PATCH', `${CONVERSATIONS}/${bob.id}`, { status: 'pending' });
      const by = { type: 'user', id: `usr_${adminId}` };
      const about = {
        conversationId: bob.id,
        contactId: bob.contact.id,
        phoneNumberId: s.numbers[0],
      };
      const [status] = await events(s, 'conversation.status_changed');
      assert.deepEqual(
        { ...status, changedAt: undefined },
        {
          ...about,
          from: 'open',
          to: 'pending',
          snoozedUntil: null,
          by,
          changedAt: undefined,
        },
      );
      assert.equal((await events(s, 'conversation.status_changed')).length, 1);
      const assigned = await events(s, 'conversation.assigned');
      assert.equal(assigned.length, 1);
      assert.equal(assigned[0]!.from, null);
      assert.equal(assigned[0]!.to, `usr_${agentId}`);
      const labelled = await events(s, 'conversation.labelled');
      assert.deepEqual(
        [labelled[0]!.labels, labelled[0]!.added, labelled[0]!.removed],
        [['billing', 'vip'], ['billing', 'vip'], []],
      );

      // Reassigning is audited (ids, no content).
      await call(s, 'PATCH', `${CONVERSATIONS}/${bob.id}`, { assigneeId: null, labels: ['vip'] });
      const audit = await queryRows<{ actor_id: string; reason: string }>(
        s.services.storage,
        sql`select actor_id, reason from audit_events where portal_id = ${s.portalId}
            and action = 'conversation.assigned' order by id`,
      );
      assert.deepEqual(
        audit.map((a) => [a.actor_id, a.reason]),
        [
          [String(adminId), `${bob.id}: nobody → usr_${agentId}`],
          [String(adminId), `${bob.id}: usr_${agentId} → nobody`],
        ],
      );
      assert.deepEqual((await events(s, 'conversation.labelled'))[1]!.removed, ['billing']);

      // Filters, in keyset pages as the list.
      await call(s, 'PATCH', `${CONVERSATIONS}/${alice.id}`, {
        assigneeId: `usr_${agentId}`,
        labels: ['vip'],
      });
      const ids = async (query: string): Promise<string[]> =>
        (await call(s, 'GET', `${CONVERSATIONS}?${query}`))
          .json<{ data: { items: { id: string }[] } }>()
          .data.items.map((c) => c.id);
      assert.deepEqual(await ids('status=pending'), [bob.id]);
      assert.deepEqual(await ids('status=open'), [alice.id]);
      assert.deepEqual(await ids(`assigneeId=usr_${agentId}`), [alice.id]);
      assert.deepEqual(await ids('assigneeId=none'), [bob.id]);
      assert.deepEqual(await ids('label=vip'), [alice.id, bob.id]);
      assert.deepEqual(await ids('label=billing'), []);
      const first = (await call(s, 'GET', `${CONVERSATIONS}?label=vip&limit=1`)).json().data;
      assert.deepEqual(await ids(`label=vip&limit=1&cursor=${first.nextCursor}`), [bob.id]);
      assert.equal((await call(s, 'GET', `${CONVERSATIONS}?assigneeId=7`)).statusCode, 400);
      assert.equal((await call(s, 'GET', `${CONVERSATIONS}?status=closed`)).statusCode, 400);
    });

    test('a new message reopens a resolved conversation and ends a snooze; the sweep ends one at its time', async (t) => {
      const { s } = await setup(t, backend);
      await write(s, '16505550001', 'first', ago(60_000));
      const [c] = (await call(s, 'GET', CONVERSATIONS)).json().data.items;
      await call(s, 'PATCH', `${CONVERSATIONS}/${c.id}`, { status: 'resolved' });
      await write(s, '16505550001', 'one more thing', ago(50_000));
      let now = (await call(s, 'GET', `${CONVERSATIONS}/${c.id}`)).json().data;
      assert.equal(now.status, 'open');
      const reopened = (await events(s, 'conversation.status_changed')).at(-1)!;
      assert.deepEqual(
        [reopened.from, reopened.to, reopened.by],
        ['resolved', 'open', { type: 'system' }],
      );

      const until = new Date(Date.now() + 3_600_000).toISOString();
      const snoozed = await call(s, 'PATCH', `${CONVERSATIONS}/${c.id}`, {
        status: 'snoozed',
        snoozedUntil: until,
      });
      assert.equal(snoozed.json().data.snoozedUntil, until);
      await write(s, '16505550001', 'are you there?', ago(40_000));
      now = (await call(s, 'GET', `${CONVERSATIONS}/${c.id}`)).json().data;
      assert.deepEqual([now.status, now.snoozedUntil], ['open', null]);

      // A snooze whose time has come ends at the next sweep, announced once.
      await call(s, 'PATCH', `${CONVERSATIONS}/${c.id}`, { snoozedUntil: until });
      await s.services.storage.db.execute(
        sql`update conversations set snoozed_until = now() - interval '1 second' where id = ${c.id}`,
      );
      assert.equal((await s.services.conversations.sweep()).snoozesEnded, 1);
      assert.equal((await s.services.conversations.sweep()).snoozesEnded, 0);
      now = (await call(s, 'GET', `${CONVERSATIONS}/${c.id}`)).json().data;
      assert.deepEqual([now.status, now.snoozedUntil], ['open', null]);
      const all = await events(s, 'conversation.status_changed');
      assert.deepEqual(
        all.map((e) => [e.from, e.to, (e.by as { type: string }).type]),
        [
          ['open', 'resolved', 'user'],
          ['resolved', 'open', 'system'],
          ['open', 'snoozed', 'user'],
          ['snoozed', 'open', 'system'],
          ['open', 'snoozed', 'user'],
          ['snoozed', 'open', 'system'],
        ],
      );
    });

    test('private notes: members only, sealed at rest, only in their own event', async (t) => {
      const { s, adminId } = await setup(t, backend);
      await write(s, '16505550001', 'hello');
      const [c] = (await call(s, 'GET', CONVERSATIONS)).json().data.items;
      const secret = 'Refund approved by finance, ref 4471';
      const added = await call(s, 'POST', `${CONVERSATIONS}/${c.id}/notes`, { body: secret });
      assert.equal(added.statusCode, 201, added.body);
      const note = added.json().data;
      assert.match(note.id, /^nte_/);
      assert.equal(note.authorId, `usr_${adminId}`);
      await call(s, 'POST', `${CONVERSATIONS}/${c.id}/notes`, { body: 'second' });
      for (const body of [{ body: '   ' }, { body: '' }, {}, { body: 'x'.repeat(4097) }])
        assert.equal(
          (await call(s, 'POST', `${CONVERSATIONS}/${c.id}/notes`, body)).statusCode,
          400,
        );
      assert.equal(
        (await call(s, 'POST', `${CONVERSATIONS}/cnv_nope/notes`, { body: 'x' })).statusCode,
        404,
      );

      const page = (await call(s, 'GET', `${CONVERSATIONS}/${c.id}/notes?limit=1`)).json().data;
      assert.deepEqual(
        page.items.map((n: { body: string }) => n.body),
        ['second'],
      );
      const next = (
        await call(s, 'GET', `${CONVERSATIONS}/${c.id}/notes?limit=1&cursor=${page.nextCursor}`)
      ).json().data;
      assert.deepEqual(next, { items: [note], nextCursor: null });
      assert.equal((await call(s, 'GET', `${CONVERSATIONS}/cnv_nope/notes`)).statusCode, 404);

      // Sealed at rest: nowhere in clear; in its own event only.
      const dump = await queryRows<{ t: string }>(
        s.services.storage,
        sql`select (select json_agg(n)::text from conversation_notes n) ||
          (select json_agg(e)::text from webhook_events e) as t`,
      );
      assert.ok(!dump[0]!.t.includes('4471'), 'no note in clear');
      const [event] = await events(s, 'conversation.note_added');
      assert.deepEqual(event, {
        conversationId: c.id,
        contactId: c.contact.id,
        noteId: note.id,
        authorId: note.authorId,
        body: secret,
        createdAt: note.createdAt,
      });
      for (const type of EVENT_TYPES.filter((e) => e !== 'conversation.note_added'))
        for (const e of await events(s, type))
          assert.ok(!JSON.stringify(e).includes('4471'), `${type} carries no note`);

      // Notes are read with their own scope.
      const before = (await call(s, 'GET', `${CONVERSATIONS}/${c.id}/notes`)).json().data.items;
      const narrow = await createPortal(s.services, { scopes: ['messaging:reports:read'] });
      const refused = await s.app.inject({
        url: `${CONVERSATIONS}/${c.id}/notes`,
        headers: { authorization: narrow.token },
      });
      assert.equal(refused.statusCode, 403);
      assert.equal(before.length, 2);

      // Erasing the contact takes its notes with it.
      await s.app.inject({
        method: 'DELETE',
        url: `/api/v1/external/crm/contacts/${c.contact.id}`,
        headers: { authorization: s.token },
      });
      const left = await queryRows<{ n: number }>(
        s.services.storage,
        sql`select count(*)::int as n from conversation_notes where portal_id = ${s.portalId}`,
      );
      assert.equal(left[0]!.n, 0);
    });

    test('each member has their own read mark and unread count', async (t) => {
      const { s, adminId, agentId } = await setup(t, backend);
      await write(s, '16505550001', 'one', ago(30_000));
      await write(s, '16505550001', 'two', ago(20_000));
      const conversations = s.services.conversations;
      const [c] = (await call(s, 'GET', CONVERSATIONS)).json().data.items;
      const unreadFor = async (readerId: number) =>
        (await conversations.getConversation({ portalId: s.portalId }, c.id, { readerId }))!
          .unreadCount;
      assert.equal(await unreadFor(adminId), 2, 'never opened: the portal’s count');
      assert.equal(
        await conversations.markReadBy({ portalId: s.portalId, userId: adminId }, c.id),
        true,
      );
      assert.equal(await unreadFor(adminId), 0);
      assert.equal(await unreadFor(agentId), 2);
      await write(s, '16505550001', 'three', ago(10_000));
      assert.equal(await unreadFor(adminId), 1);
      assert.equal(await unreadFor(agentId), 3);
      const listed = await conversations.listConversations(
        { portalId: s.portalId },
        { limit: 10 },
        { readerId: adminId },
      );
      assert.equal(listed.items[0]!.unreadCount, 1);
      // The API's count is the portal's (the provider's read receipts), as before.
      assert.equal((await call(s, 'GET', `${CONVERSATIONS}/${c.id}`)).json().data.unreadCount, 3);
      assert.equal(
        await conversations.markReadBy({ portalId: s.portalId, userId: adminId }, 'cnv_nope'),
        false,
      );
    });
  });
}
