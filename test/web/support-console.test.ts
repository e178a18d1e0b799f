/**
 * The support pages, as a customer and an agent use them: `/support` for a portal user and the
 * agent console at `/agent`, with sessions that never cross (a portal user cannot open the
 * console, an agent opens no portal page nor the API), and internal notes on no customer page.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

const TICKETS = '/api/v1/external/support/tickets';
const NOTE_MARKER = 'NOTE-MARKER-51c0de';

for (const backend of backends()) {
  describe(`/support and /agent (${backend.name})`, () => {
    test('a ticket from the API to solved and closed, through both sets of pages', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const created = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: portal.token },
        payload: { subject: 'Numbers missing', description: 'Our second number is gone.' },
      });
      const id: string = created.json().data.id;
      const agentEmail = 'grace@operator.test';
      await services.agents.createAgent({
        email: agentEmail,
        name: 'Grace',
        password: TEST_PASSWORD,
        actor: CLI_ACTOR,
      });

      // The agent signs in and finds it in the unassigned queue.
      const agent = new Browser(app);
      const login = await agent.get('/agent/login');
      assert.equal(login.statusCode, 200);
      const wrong = await agent.post('/agent/login', {
        email: agentEmail,
        password: 'not the password at all',
        csrf: csrfOf(login.body),
      });
      assert.equal(wrong.statusCode, 401);
      const signed = await agent.post('/agent/login', {
        email: agentEmail,
        password: TEST_PASSWORD,
        csrf: csrfOf(login.body),
      });
      assert.equal(signed.statusCode, 303);
      assert.equal(signed.headers.location, '/agent');
      const queue = await agent.get('/agent?assigned=none');
      assert.equal(queue.statusCode, 200);
      assert.match(queue.body, new RegExp(`/agent/tickets/${id}`));
      assert.match(queue.body, new RegExp(portal.portalCode));

      const page = await agent.get(`/agent/tickets/${id}`);
      assert.equal(page.statusCode, 200);
      const csrf = csrfOf(page.body);
      const me = /name="to" value="(\d+)"/.exec(page.body)![1]!;
      const base = `/agent/tickets/${id}`;
      assert.equal((await agent.post(`${base}/assign`, { csrf, to: me })).statusCode, 303);
      assert.equal(
        (await agent.post(`${base}/note`, { csrf, body: `${NOTE_MARKER} VIP customer` }))
          .statusCode,
        303,
      );
      assert.equal(
        (
          await agent.post(`${base}/reply`, {
            csrf,
            body: 'Which number? Send its id.',
            status: 'pending',
          })
        ).statusCode,
        303,
      );
      const forged = await agent.post(`${base}/status`, { csrf: 'x'.repeat(43), status: 'solved' });
      assert.equal(forged.statusCode, 403);
      const after = await agent.get(base);
      assert.match(after.body, /data-testid="status">pending</);
      assert.match(after.body, /data-testid="assignee">Grace</);
      assert.ok(after.body.includes(NOTE_MARKER));

      // The customer reads the reply through the API, then answers on /support: reopened.
      const thread = await app.inject({
        url: `${TICKETS}/${id}/comments`,
        headers: { authorization: portal.token },
      });
      assert.equal(thread.json().data.items[0].author.name, 'Grace');
      const customer = new Browser(app);
      await customer.signIn(portal.email);
      const list = await customer.get('/support');
      assert.equal(list.statusCode, 200);
      assert.match(list.body, new RegExp(`/support/tickets/${id}`));
      const view = await customer.get(`/support/tickets/${id}`);
      assert.match(view.body, /Which number\? Send its id\./);
      const answered = await customer.post(`/support/tickets/${id}/comments`, {
        csrf: csrfOf(view.body),
        body: 'The one ending 42.',
      });
      assert.equal(answered.statusCode, 303);
      const reopened = await customer.get(`/support/tickets/${id}`);
      assert.match(reopened.body, /data-testid="status">open</);

      // The agent solves it; the customer closes it.
      await agent.post(`${base}/status`, { csrf, status: 'solved' });
      const solved = await customer.get(`/support/tickets/${id}`);
      assert.match(solved.body, /data-testid="status">solved</);
      // Closing goes through the kit's confirmation step: the unconfirmed form changes nothing.
      const asked = await customer.post(`/support/tickets/${id}/close`, {
        csrf: csrfOf(solved.body),
      });
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /Close this ticket\?/);
      const viaStatus = await customer.post(`/support/tickets/${id}/status`, {
        csrf: csrfOf(solved.body),
        status: 'closed',
      });
      assert.match(viaStatus.body, /Close this ticket\?/);
      const still = await customer.get(`/support/tickets/${id}`);
      assert.match(still.body, /data-testid="status">solved</);
      const closed = await customer.post(`/support/tickets/${id}/close`, {
        csrf: csrfOf(solved.body),
        confirm: 'yes',
      });
      assert.equal(closed.statusCode, 303);
      const final = await app.inject({
        url: `${TICKETS}/${id}`,
        headers: { authorization: portal.token },
      });
      assert.equal(final.json().data.status, 'closed');

      // Sessions never cross: the agent opens no portal page; the customer not the console.
      for (const path of ['/settings', '/support', `/support/tickets/${id}`]) {
        const res = await agent.get(path);
        assert.equal(res.statusCode, 302, path);
        assert.match(String(res.headers.location), /^\/login/);
      }
      const api = await agent.get(`${TICKETS}/${id}`);
      assert.equal(api.statusCode, 401);
      for (const path of ['/agent', base]) {
        const res = await customer.get(path);
        assert.equal(res.statusCode, 302, path);
        assert.equal(res.headers.location, '/agent/login');
      }
      const asCustomer = await customer.post(`${base}/status`, {
        csrf: csrfOf(solved.body),
        status: 'open',
      });
      assert.equal(asCustomer.statusCode, 302);

      // The note's marker is on no customer-facing page or response.
      for (const res of customer.responses) assert.ok(!res.body.includes(NOTE_MARKER));
    });

    test("the forms are the kit's fields: a refusal stands next to its field, what was typed is kept", async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const customer = new Browser(app);
      await customer.signIn(portal.email);
      const list = await customer.get('/support');
      const refused = await customer.post('/support/tickets', {
        csrf: csrfOf(list.body),
        subject: '   ',
        description: 'Sends fail since 9:00.',
        priority: 'high',
      });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /<input[^>]*id="subject"[^>]*aria-invalid="true"/);
      assert.match(refused.body, /id="subject-error">Write a subject\.</);
      assert.match(refused.body, /id="description"[^>]*>Sends fail since 9:00\.<\/textarea>/);
      assert.match(refused.body, /<option value="high" selected/);
      assert.doesNotMatch(refused.body, /id="description-error"/);
      const none = await app.inject({ url: TICKETS, headers: { authorization: portal.token } });
      assert.deepEqual(none.json().data.items, [], 'nothing opened');

      const created = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: portal.token },
        payload: { subject: 'Numbers missing', description: 'Our second number is gone.' },
      });
      const id: string = created.json().data.id;
      const view = await customer.get(`/support/tickets/${id}`);
      const empty = await customer.post(`/support/tickets/${id}/comments`, {
        csrf: csrfOf(view.body),
        body: ' \n ',
      });
      assert.equal(empty.statusCode, 400);
      assert.match(empty.body, /<textarea[^>]*id="reply"[^>]*aria-invalid="true"/);
      assert.match(empty.body, /id="reply-error">Write your reply first\.</);

      await services.agents.createAgent({
        email: 'ada@operator.test',
        name: 'Ada',
        password: TEST_PASSWORD,
        actor: CLI_ACTOR,
      });
      const agent = new Browser(app);
      const login = await agent.get('/agent/login');
      await agent.post('/agent/login', {
        email: 'ada@operator.test',
        password: TEST_PASSWORD,
        csrf: csrfOf(login.body),
      });
      const page = await agent.get(`/agent/tickets/${id}`);
      const csrf = csrfOf(page.body);
      const note = await agent.post(`/agent/tickets/${id}/note`, { csrf, body: '   ' });
      assert.equal(note.statusCode, 400);
      assert.match(
        note.body,
        /<textarea[^>]*id="note"[^>]*aria-invalid="true"[^>]*> {3}<\/textarea>/,
      );
      assert.match(note.body, /id="note-error">Write something first\.</);
      assert.doesNotMatch(note.body, /id="reply-error"/);
      const reply = await agent.post(`/agent/tickets/${id}/reply`, {
        csrf,
        body: ' ',
        status: 'solved',
      });
      assert.match(reply.body, /id="reply-error">Write something first\.</);
      assert.match(reply.body, /<option value="solved" selected/);
      const status = await agent.post(`/agent/tickets/${id}/status`, { csrf, status: 'closed' });
      assert.match(status.body, /id="set-status-error">Choose open, pending or solved\.</);
      const after = await agent.get(`/agent/tickets/${id}`);
      assert.match(after.body, /data-testid="status">new</);
      assert.doesNotMatch(after.body, /data-kind="note"/);
    });
  });
}
