/**
 * The agent console's rules that hold whatever the page offers: a disabled agent cannot sign in,
 * be assigned a ticket or act with a session opened before; and no agent reopens a closed ticket
 * (docs/support.md: `closed` is final, agents set `open`, `pending` or `solved` on any ticket
 * that is not closed).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { AppError } from '../../src/platform/errors.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

const TICKETS = '/api/v1/external/support/tickets';

async function setUp(
  t: Parameters<typeof buildTestApp>[0],
  backend: Parameters<typeof buildTestApp>[1],
) {
  const built = await buildTestApp(t, backend);
  const portal = await portalWithPassword(built.services);
  const created = await built.app.inject({
    method: 'POST',
    url: TICKETS,
    headers: { authorization: portal.token },
    payload: { subject: 'Numbers missing', description: 'Our second number is gone.' },
  });
  assert.equal(created.statusCode, 201, created.body);
  return { ...built, portal, id: created.json().data.id as string };
}

async function agentSignedIn(app: TestApp['app'], email: string) {
  const browser = new Browser(app);
  const login = await browser.get('/agent/login');
  const res = await browser.post('/agent/login', {
    email,
    password: TEST_PASSWORD,
    csrf: csrfOf(login.body),
  });
  return { browser, res };
}

const agent = (s: TestApp, email: string, name: string) =>
  s.services.agents.createAgent({ email, name, password: TEST_PASSWORD, actor: CLI_ACTOR });

const isCode = (code: string) => (err: unknown) => err instanceof AppError && err.code === code;

for (const backend of backends()) {
  describe(`agent rules (${backend.name})`, () => {
    test('a disabled agent signs in, is assigned and acts: refused each time', async (t) => {
      const s = await setUp(t, backend);
      const grace = await agent(s, 'grace@operator.test', 'Grace');
      const lin = await agent(s, 'lin@operator.test', 'Lin');
      const { browser: linPages, res: signed } = await agentSignedIn(s.app, 'lin@operator.test');
      assert.equal(signed.statusCode, 303, 'Lin signs in while enabled');
      const page = await linPages.get(`/agent/tickets/${s.id}`);
      assert.equal(page.statusCode, 200);
      const csrf = csrfOf(page.body);

      await s.services.agents.disableAgent({ email: 'lin@operator.test', actor: CLI_ACTOR });

      // Signing in again.
      const again = await agentSignedIn(s.app, 'lin@operator.test');
      assert.notEqual(again.res.statusCode, 303, 'a disabled agent does not sign in');
      assert.equal((await again.browser.get('/agent')).statusCode, 302, 'no session either');
      // Acting with the session opened before.
      assert.equal((await linPages.get('/agent')).statusCode, 302);
      const replied = await linPages.post(`/agent/tickets/${s.id}/reply`, {
        csrf,
        body: 'From a disabled agent',
      });
      assert.notEqual(replied.statusCode, 303);
      await assert.rejects(
        s.services.desk.reply({ agentId: lin.agentId, ticketId: s.id, body: 'x' }),
        isCode('not_found'),
      );
      await assert.rejects(
        s.services.desk.setStatus({ agentId: lin.agentId, ticketId: s.id, status: 'solved' }),
        isCode('not_found'),
      );
      // Being assigned.
      await assert.rejects(
        s.services.desk.assign({ agentId: grace.agentId, ticketId: s.id, toAgentId: lin.agentId }),
        isCode('not_found'),
      );
      const { ticket, thread } = await s.services.desk.ticket(s.id);
      assert.equal(ticket.assigneeAgentId, null);
      assert.equal(ticket.status, 'new');
      assert.equal(thread.length, 0);
    });

    test('no agent reopens a closed ticket, by the page or the service', async (t) => {
      const s = await setUp(t, backend);
      const grace = await agent(s, 'grace@operator.test', 'Grace');
      await s.services.desk.setStatus({ agentId: grace.agentId, ticketId: s.id, status: 'solved' });
      const closed = await s.app.inject({
        method: 'PATCH',
        url: `${TICKETS}/${s.id}`,
        headers: { authorization: s.portal.token },
        payload: { status: 'closed' },
      });
      assert.equal(closed.statusCode, 200, closed.body);

      const { browser } = await agentSignedIn(s.app, 'grace@operator.test');
      const page = await browser.get(`/agent/tickets/${s.id}`);
      assert.equal(page.statusCode, 200);
      const csrf = csrfOf(page.body);
      for (const status of ['open', 'pending', 'solved']) {
        const res = await browser.post(`/agent/tickets/${s.id}/status`, { csrf, status });
        assert.equal(res.statusCode, 409, `${status}: ${res.statusCode}`);
        await assert.rejects(
          s.services.desk.setStatus({
            agentId: grace.agentId,
            ticketId: s.id,
            status: status as 'open',
          }),
          isCode('conflict'),
        );
      }
      const assigned = await browser.post(`/agent/tickets/${s.id}/assign`, {
        csrf,
        to: String(grace.agentId),
      });
      assert.equal(assigned.statusCode, 409);
      const { ticket } = await s.services.desk.ticket(s.id);
      assert.equal(ticket.status, 'closed');
      assert.equal(ticket.assigneeAgentId, null);
    });
  });
}
