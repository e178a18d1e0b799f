/**
 * A ticket both ways: the customer's thread and lifecycle through the API, the agents' side
 * through the desk service, and the webhooks a customer's receiver gets. Internal notes never
 * reach the customer.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { sql } from 'drizzle-orm';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import type { Services } from '../../src/services.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { startReceiver } from '../webhooks/receiver.ts';

const TICKETS = '/api/v1/external/support/tickets';
const NOTE_MARKER = 'NOTE-MARKER-7f3a9c';
const PASSWORD = 'correct horse battery staple';
const FAST = {
  retryScheduleMs: [0, 50],
  attemptTimeoutMs: 2_000,
  addressPolicy: 'development-any-address' as const,
};

async function createAgent(services: Services, name = 'Ada Support') {
  const email = `agent-${Math.random().toString(36).slice(2)}@operator.test`;
  const agent = await services.agents.createAgent({
    email,
    name,
    password: PASSWORD,
    actor: CLI_ACTOR,
  });
  return { ...agent, email };
}

for (const backend of backends()) {
  describe(`support tickets both ways (${backend.name})`, () => {
    test('the whole round: queue, assign, note, reply, pending, reopen, solve, close', async (t) => {
      const { app, services } = await buildTestApp(t, backend, {}, {}, { webhooks: FAST });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await services.webhooks.start();
      await services.webhooks.startWorker();
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const { secret } = await services.webhooks.addEndpoint(
        portalId,
        { url: receiver.url, eventTypes: ['ticket.updated', 'ticket.comment_added'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const auth = { authorization: portal.token };

      const created = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: auth,
        payload: { subject: 'Webhooks silent', description: 'No events since Monday.' },
      });
      assert.equal(created.statusCode, 201);
      const id: string = created.json().data.id;
      assert.equal(created.json().data.status, 'new');

      const agent = await createAgent(services);
      const queue = await services.desk.queue({ unassigned: true }, { limit: 20 });
      assert.ok(queue.items.some((i) => i.id === id && i.portalCode === portal.portalCode));

      await services.desk.assign({
        agentId: agent.agentId,
        ticketId: id,
        toAgentId: agent.agentId,
      });
      await services.desk.note({
        agentId: agent.agentId,
        ticketId: id,
        body: `${NOTE_MARKER} check logs`,
      });
      const reply = await services.desk.reply({
        agentId: agent.agentId,
        ticketId: id,
        body: 'Could you send the endpoint id?',
        status: 'pending',
      });
      assert.deepEqual(reply.author, { type: 'agent', userId: null, name: 'Ada Support' });

      const mine = await services.desk.queue({ assigneeAgentId: agent.agentId }, { limit: 20 });
      assert.deepEqual(
        mine.items.map((i) => i.id),
        [id],
      );
      assert.ok((mine.items[0]!.timeToFirstResponseMs ?? -1) >= 0);

      // The customer's receiver: assignment (new → open), the reply, then pending.
      const events = await receiver.waitFor(3);
      const types = events.map((e) => e.event?.type);
      assert.deepEqual(types.sort(), ['ticket.comment_added', 'ticket.updated', 'ticket.updated']);
      const added = events.find((e) => e.event?.type === 'ticket.comment_added')!.event!;
      assert.deepEqual(added.data, {
        ticketId: id,
        commentId: reply.id,
        author: { type: 'agent', name: 'Ada Support' },
        body: 'Could you send the endpoint id?',
        createdAt: reply.createdAt,
      });
      const updates = events
        .filter((e) => e.event?.type === 'ticket.updated')
        .map((e) => e.event!.data);
      assert.ok(
        updates.some((d) =>
          isDeepStrictEqual(d.changes, {
            status: { from: 'new', to: 'open' },
            assignee: { from: null, to: 'Ada Support' },
          }),
        ),
      );
      assert.ok(
        updates.some((d) =>
          isDeepStrictEqual(d.changes, { status: { from: 'open', to: 'pending' } }),
        ),
      );

      // The customer reads the reply: agent by name, never by email.
      const thread = await app.inject({ url: `${TICKETS}/${id}/comments`, headers: auth });
      assert.equal(thread.statusCode, 200);
      assert.equal(thread.json().data.items.length, 1);
      assert.equal(thread.json().data.items[0].author.name, 'Ada Support');
      assert.ok(!thread.body.includes(agent.email));
      const pending = await app.inject({ url: `${TICKETS}/${id}`, headers: auth });
      assert.equal(pending.json().data.status, 'pending');
      assert.equal(pending.json().data.assignee, 'Ada Support');
      assert.equal(pending.json().data.commentCount, 1);
      assert.ok(pending.json().data.firstResponseAt);

      // The customer answers: pending → open.
      const answer = await app.inject({
        method: 'POST',
        url: `${TICKETS}/${id}/comments`,
        headers: { ...auth, 'idempotency-key': 'answer-1' },
        payload: { body: 'It is whk_123.' },
      });
      assert.equal(answer.statusCode, 201);
      assert.deepEqual(answer.json().data.author, {
        type: 'customer',
        userId: portal.userId,
        name: null,
      });
      const replay = await app.inject({
        method: 'POST',
        url: `${TICKETS}/${id}/comments`,
        headers: { ...auth, 'idempotency-key': 'answer-1' },
        payload: { body: 'It is whk_123.' },
      });
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.json().data.id, answer.json().data.id);
      const reopened = await app.inject({ url: `${TICKETS}/${id}`, headers: auth });
      assert.equal(reopened.json().data.status, 'open');
      assert.equal(reopened.json().data.commentCount, 2);

      await services.desk.setStatus({ agentId: agent.agentId, ticketId: id, status: 'solved' });
      const solved = await app.inject({ url: `${TICKETS}/${id}`, headers: auth });
      assert.equal(solved.json().data.status, 'solved');
      assert.ok(solved.json().data.solvedAt);
      const priority = await app.inject({
        method: 'PATCH',
        url: `${TICKETS}/${id}`,
        headers: auth,
        payload: { priority: 'urgent' },
      });
      assert.equal(priority.statusCode, 409);
      assert.equal(priority.json().error.code, 'conflict');
      assert.match(priority.json().error.message, /solved/);

      const closed = await app.inject({
        method: 'PATCH',
        url: `${TICKETS}/${id}`,
        headers: auth,
        payload: { status: 'closed' },
      });
      assert.equal(closed.statusCode, 200);
      assert.equal(closed.json().data.status, 'closed');
      const again = await app.inject({
        method: 'PATCH',
        url: `${TICKETS}/${id}`,
        headers: auth,
        payload: { status: 'open' },
      });
      assert.equal(again.statusCode, 409);
      assert.match(again.json().error.message, /closed/);
      const late = await app.inject({
        method: 'POST',
        url: `${TICKETS}/${id}/comments`,
        headers: auth,
        payload: { body: 'one more thing' },
      });
      assert.equal(late.statusCode, 409);

      // The audit log has the agent's status changes (new → open with the assignment,
      // open → pending, open → solved) and the assignment, with actor agent.
      const audit = await listAuditEvents(services.storage.db, portalId, { limit: 100 });
      const byAgent = audit.filter((e) => e.actorType === 'agent');
      assert.deepEqual(byAgent.map((e) => e.action).sort(), [
        'ticket.assigned',
        'ticket.status_changed',
        'ticket.status_changed',
        'ticket.status_changed',
      ]);
      assert.ok(byAgent.every((e) => e.actorId === String(agent.agentId)));

      // The note's marker: nowhere the customer can look.
      const everything = [
        (await app.inject({ url: TICKETS, headers: auth })).body,
        (await app.inject({ url: `${TICKETS}/${id}`, headers: auth })).body,
        (await app.inject({ url: `${TICKETS}/${id}/comments`, headers: auth })).body,
        ...receiver.received.map((r) => r.body),
        JSON.stringify(await queryRows(services.storage, sql`select payload from webhook_events`)),
        JSON.stringify(audit),
      ];
      for (const text of everything) assert.ok(!text.includes(NOTE_MARKER));
      const desk = await services.desk.ticket(id);
      assert.ok(desk.thread.some((e) => e.kind === 'note' && e.body.includes(NOTE_MARKER)));
    });

    test('bad input and isolation: 404 across portals, 10,001 characters, redaction, pages', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await createPortal(services);
      const b = await createPortal(services);
      const created = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: a.token },
        payload: { subject: 'Mine', description: 'Portal A only.' },
      });
      const id: string = created.json().data.id;
      const asB = { authorization: b.token };
      for (const req of [
        { method: 'GET' as const, url: `${TICKETS}/${id}/comments` },
        { method: 'POST' as const, url: `${TICKETS}/${id}/comments`, payload: { body: 'hi' } },
        { method: 'PATCH' as const, url: `${TICKETS}/${id}`, payload: { status: 'closed' } },
      ]) {
        const res = await app.inject({ ...req, headers: asB });
        assert.equal(res.statusCode, 404, `${req.method} ${req.url}`);
        assert.equal(res.json().error.code, 'not_found');
      }
      const long = await app.inject({
        method: 'POST',
        url: `${TICKETS}/${id}/comments`,
        headers: { authorization: a.token },
        payload: { body: 'x'.repeat(10_001) },
      });
      assert.equal(long.statusCode, 400);
      assert.equal(long.json().error.code, 'invalid_request');
      const max = await app.inject({
        method: 'POST',
        url: `${TICKETS}/${id}/comments`,
        headers: { authorization: a.token },
        payload: { body: 'x'.repeat(10_000) },
      });
      assert.equal(max.statusCode, 201);

      const leaked = await app.inject({
        method: 'POST',
        url: `${TICKETS}/${id}/comments`,
        headers: { authorization: a.token },
        payload: { body: `my token is ${b.token} oops` },
      });
      assert.equal(leaked.statusCode, 201);
      assert.equal(leaked.json().data.body, 'my token is [REDACTED] oops');
      assert.equal(leaked.json().data.secretRedacted, true);
      assert.ok(
        !JSON.stringify(
          await queryRows(services.storage, sql`select body from ticket_comments`),
        ).includes(b.token),
      );

      for (let i = 0; i < 3; i++) {
        await app.inject({
          method: 'POST',
          url: `${TICKETS}/${id}/comments`,
          headers: { authorization: a.token },
          payload: { body: `comment ${i}` },
        });
      }
      const first = await app.inject({
        url: `${TICKETS}/${id}/comments?limit=3`,
        headers: { authorization: a.token },
      });
      const next = first.json().data.nextCursor;
      assert.ok(next);
      const second = await app.inject({
        url: `${TICKETS}/${id}/comments?limit=3&cursor=${next}`,
        headers: { authorization: a.token },
      });
      const bodies = [...first.json().data.items, ...second.json().data.items].map(
        (c: { body: string }) => c.body.slice(0, 12),
      );
      assert.deepEqual(bodies.slice(2), ['comment 0', 'comment 1', 'comment 2']);
      assert.equal(second.json().data.nextCursor, null);

      // A new ticket cannot be reopened (it is not pending or solved): 409 naming `new`.
      const reopen = await app.inject({
        method: 'PATCH',
        url: `${TICKETS}/${id}`,
        headers: { authorization: a.token },
        payload: { status: 'open' },
      });
      assert.equal(reopen.statusCode, 409);
      assert.match(reopen.json().error.message, /is new/);
      const empty = await app.inject({
        method: 'PATCH',
        url: `${TICKETS}/${id}`,
        headers: { authorization: a.token },
        payload: {},
      });
      assert.equal(empty.statusCode, 400);
    });

    test('a solved ticket closes 7 days after it was solved', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const agent = await createAgent(services);
      const created = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: portal.token },
        payload: { subject: 'Old', description: 'Solved long ago.' },
      });
      const id: string = created.json().data.id;
      await services.desk.setStatus({ agentId: agent.agentId, ticketId: id, status: 'solved' });
      await services.storage.db.execute(
        sql`update support_tickets set solved_at = now() - interval '7 days 1 minute' where id = ${id}`,
      );
      const before = await app.inject({
        url: `${TICKETS}/${id}`,
        headers: { authorization: portal.token },
      });
      assert.equal(before.json().data.status, 'solved', 'a read changes nothing');
      assert.equal(await services.background.runNow('tickets.auto-close'), 1);
      const res = await app.inject({
        url: `${TICKETS}?status=closed`,
        headers: { authorization: portal.token },
      });
      assert.deepEqual(
        res.json().data.items.map((i: { id: string }) => i.id),
        [id],
      );
      const [row] = await queryRows<{ closed_at: Date; solved_at: Date }>(
        services.storage,
        sql`select closed_at, solved_at from support_tickets where id = ${id}`,
      );
      const gap = new Date(row!.closed_at).getTime() - new Date(row!.solved_at).getTime();
      assert.equal(gap, 7 * 24 * 3600 * 1000, 'closed when it became due');
    });
  });
}
