/**
 * No read path writes: with a ticket of two portals due to close (solved 7 days ago), a webhook
 * endpoint waiting for ticket events, and an unread conversation of a portal whose
 * `auto_mark_read` is on, the agents' desk, the support pages, the inbox (pages and fragments)
 * and the API's lists and items leave every row of the database as it was. The work is done
 * elsewhere: the page's POST marks the conversation read (CSRF checked), and
 * `tickets.auto-close` closes both tickets.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import type { Storage } from '../../src/db/client.ts';
import { users } from '../../src/db/schema/index.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import { createPortal } from '../helpers/app.ts';
import { personWrites, readState } from '../helpers/inbound.ts';
import { messagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, TEST_PASSWORD } from '../helpers/web.ts';

const API = '/api/v1/external';

/**
 * Every row of every table of the service's schema, hashed per table. Left out: the API keys'
 * usage counts and *last used* (`api_key_usage`, `api_tokens`), which each instance writes on
 * its own timer from what it counted in memory (accounts/key-usage.ts), never on a request.
 */
async function rowsOf(storage: Storage): Promise<Record<string, string>> {
  const tables = await queryRows<{ name: string }>(
    storage,
    sql`select table_name as name from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE'
        and table_name not in ('api_key_usage', 'api_tokens')
      order by table_name`,
  );
  const digest: Record<string, string> = {};
  for (const { name } of tables) {
    const [row] = await queryRows<{ digest: string }>(
      storage,
      sql`select count(*) || ':' || coalesce(md5(string_agg(t::text, ',' order by t::text)), '')
          as digest from ${sql.identifier(name)} t`,
    );
    digest[name] = row!.digest;
  }
  return digest;
}

for (const backend of backends()) {
  describe(`reads do not write (${backend.name})`, () => {
    test('the desk, the support pages, the inbox and the API leave the database unchanged', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const { app, services } = s;
      const db = services.storage.db;

      // The connected portal's administrator signs in to the pages.
      const [admin] = await db
        .select({ id: users.id, email: users.email })
        .from(users)
        .where(eq(users.portalId, s.portalId));
      await db
        .update(users)
        .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
        .where(eq(users.id, admin!.id));
      const other = await createPortal(services);

      // Tickets of two portals, solved 7 days ago: due to close.
      const tickets: string[] = [];
      for (const token of [s.token, other.token]) {
        const created = await app.inject({
          method: 'POST',
          url: `${API}/support/tickets`,
          headers: { authorization: token },
          payload: { subject: 'Old', description: 'Solved long ago.' },
        });
        tickets.push(created.json().data.id as string);
      }
      const agent = await services.agents.createAgent({
        email: 'grace@operator.test',
        name: 'Grace',
        password: TEST_PASSWORD,
        actor: CLI_ACTOR,
      });
      for (const id of tickets)
        await services.desk.setStatus({ agentId: agent.agentId, ticketId: id, status: 'solved' });
      await queryRows(
        services.storage,
        sql`update support_tickets set solved_at = now() - interval '7 days 1 minute'`,
      );
      // A webhook endpoint that would be sent `ticket.updated`.
      await services.webhooks.addEndpoint(
        s.portalId,
        { url: 'https://hooks.example.com/portico', eventTypes: ['ticket.updated'] },
        { actor: CLI_ACTOR },
      );

      // An unread conversation, with marking read on opening switched on.
      const written = await personWrites(s, '16505550301');
      await queryRows(
        services.storage,
        sql`insert into messaging_settings (portal_id, opt_out_keywords, opt_in_keywords,
            auto_mark_read)
          values (${s.portalId}, array['STOP'], array['START'], true)`,
      );
      const [conversation] = await queryRows<{ id: string }>(
        services.storage,
        sql`select id from conversations where portal_id = ${s.portalId}`,
      );
      const cid = conversation!.id;

      const customer = new Browser(app);
      await customer.signIn(admin!.email);
      const desk = new Browser(app);
      const login = await desk.get('/agent/login');
      const signed = await desk.post('/agent/login', {
        email: 'grace@operator.test',
        password: TEST_PASSWORD,
        csrf: csrfOf(login.body),
      });
      assert.equal(signed.statusCode, 303);

      const before = await rowsOf(services.storage);
      const pages: [Browser, string][] = [
        [desk, '/agent'],
        [desk, '/agent?assigned=none'],
        [desk, `/agent/tickets/${tickets[0]}`],
        [desk, `/agent/tickets/${tickets[1]}`],
        [customer, '/support'],
        [customer, `/support/tickets/${tickets[0]}`],
        [customer, '/inbox'],
        [customer, `/inbox/${cid}`],
        [customer, `/inbox/${cid}/fragments/thread`],
        [customer, '/inbox/fragments/list'],
      ];
      for (const [browser, url] of pages)
        assert.equal((await browser.get(url)).statusCode, 200, url);
      for (const url of [
        '/support/tickets',
        `/support/tickets/${tickets[0]}`,
        `/support/tickets/${tickets[0]}/comments`,
        '/messaging/conversations',
        '/messaging/messages',
        '/events',
      ]) {
        const res = await app.inject({ url: `${API}${url}`, headers: { authorization: s.token } });
        assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      }
      assert.deepEqual(await rowsOf(services.storage), before, 'no row changed');
      assert.equal((await readState(s, written)).unread, 1, 'opening did not mark it read');
      assert.equal(
        s.provider.sandbox.cloud.messages.find((m) => m.wamid === written.wamid)?.readAt,
        undefined,
        'no read receipt was sent',
      );

      // Marking read is the page's POST: a forged CSRF token changes nothing; then it marks.
      const opened = await customer.get(`/inbox/${cid}`);
      assert.match(opened.body, new RegExp(`action="/inbox/${cid}/read" data-mark-read`));
      const forged = await customer.post(`/inbox/${cid}/read`, { csrf: 'forged' });
      assert.equal(forged.statusCode, 403);
      assert.equal((await readState(s, written)).unread, 1);
      const marked = await customer.post(`/inbox/${cid}/read`, { csrf: csrfOf(opened.body) });
      assert.equal(marked.statusCode, 303);
      assert.equal(marked.headers.location, `/inbox/${cid}`);
      assert.equal((await readState(s, written)).unread, 0);
      assert.doesNotMatch((await customer.get(`/inbox/${cid}`)).body, /data-mark-read/);

      // The background task closes both portals' due tickets (and queues the ticket event).
      await services.webhooks.start();
      assert.equal(await services.background.runNow('tickets.auto-close'), 2);
    });
  });
}
