/**
 * Another portal's ticket does not exist for a portal user: every support page and form of
 * portal A's ticket answers portal B's session with 404, whatever the form holds. And what
 * customers and agents read of each other (subjects, agent and portal names) holds no control
 * or bidirectional formatting character (U+202E would make it show something else).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { UsageError } from '../../src/platform/errors.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

const TICKETS = '/api/v1/external/support/tickets';

for (const backend of backends()) {
  describe(`support pages across portals (${backend.name})`, () => {
    test("portal B's session on portal A's ticket: 404 for the page and every form", async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      const b = await portalWithPassword(services);
      const created = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: a.token },
        payload: { subject: 'Numbers missing', description: 'Our second number is gone.' },
      });
      assert.equal(created.statusCode, 201, created.body);
      const id: string = created.json().data.id;

      const browser = new Browser(app);
      await browser.signIn(b.email);
      const csrf = csrfOf((await browser.get('/support')).body);
      const page = await browser.get(`/support/tickets/${id}`);
      assert.equal(page.statusCode, 404, 'the page');
      const forms: [string, Record<string, string>][] = [
        ['comments', { csrf, body: 'Hello' }],
        ['comments', { csrf, body: '' }],
        ['comments', { csrf, body: 'x'.repeat(10_001) }],
        ['status', { csrf, status: 'open' }],
        ['status', { csrf, status: 'closed' }],
        ['status', { csrf, status: 'nonsense' }],
        ['close', { csrf, confirm: 'yes' }],
        ['close', { csrf }],
      ];
      for (const [form, fields] of forms) {
        const res = await browser.post(`/support/tickets/${id}/${form}`, fields);
        assert.equal(res.statusCode, 404, `${form} ${JSON.stringify({ ...fields, csrf: '…' })}`);
      }
      const ticket = await services.tickets.getTicket({ portalId: a.portalId }, id);
      assert.equal(ticket.status, created.json().data.status);
      assert.equal(ticket.commentCount, 0);
    });

    test('no bidi or control characters in ticket subjects, agent names or portal names', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      for (const subject of ['Refund \u202Efdp.exe', 'a\u2066b', 'tab\there', '\u200f']) {
        const res = await app.inject({
          method: 'POST',
          url: TICKETS,
          headers: { authorization: a.token },
          payload: { subject, description: 'd' },
        });
        assert.equal(res.statusCode, 400, JSON.stringify(subject));
        assert.deepEqual(
          res.json().error.details.map((d: { field: string }) => d.field),
          ['body.subject'],
        );
      }
      const ok = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: a.token },
        payload: { subject: 'שלום and hello', description: 'd' },
      });
      assert.equal(ok.statusCode, 201, ok.body);

      // The portal's own form refuses it too.
      const browser = new Browser(app);
      await browser.signIn(a.email);
      const csrf = csrfOf((await browser.get('/support')).body);
      const form = await browser.post('/support/tickets', {
        csrf,
        subject: 'Invoice \u202Egnp.exe',
        description: 'd',
        priority: 'normal',
      });
      assert.equal(form.statusCode, 400);
      assert.equal(
        (await services.tickets.listTickets({ portalId: a.portalId }, { limit: 10 })).items.length,
        1,
      );

      await assert.rejects(
        services.agents.createAgent({
          email: 'eve@operator.test',
          name: 'Eve \u202Enimda',
          password: TEST_PASSWORD,
          actor: CLI_ACTOR,
        }),
        UsageError,
      );
      await assert.rejects(
        services.accounts.createPortal({
          name: 'Acme\u2067 Bank',
          adminEmail: 'x@example.test',
          actor: CLI_ACTOR,
        }),
        UsageError,
      );
    });
  });
}
