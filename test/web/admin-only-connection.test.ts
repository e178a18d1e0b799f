/**
 * Only an administrator connects and disconnects the provider account: the
 * pages say so to other users, and consent, start, callback and disconnect refuse them
 * with a page, changing nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { sessions, users } from '../../src/db/schema/index.ts';
import { backends } from '../helpers/storage.ts';
import {
  allow,
  buildFlowApp,
  callbackUrl,
  exchangeCalls,
  signedInBrowser,
  startAuthorization,
  type FlowApp,
} from '../helpers/web-flow.ts';
import { Browser, csrfOf, setCookies, TEST_PASSWORD } from '../helpers/web.ts';

/** A signed-in browser of a second, ordinary user of the portal. */
async function colleagueBrowser(flow: FlowApp, portalCode: string) {
  const email = `agent-${Math.random().toString(36).slice(2)}@example.test`;
  const user = await flow.services.accounts.createUser({ portalCode, email, mainAdmin: false });
  await flow.services.accounts.setPassword({ portalCode, email, password: TEST_PASSWORD });
  const browser = new Browser(flow.app);
  await browser.signIn(email);
  return { browser, userId: user.userId };
}

for (const backend of backends()) {
  describe(`connect and disconnect are an administrator's (${backend.name})`, () => {
    test('an ordinary user sees who may, and consent, start and disconnect refuse with a page', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const admin = await signedInBrowser(flow);
      const agent = await colleagueBrowser(flow, admin.portal.portalCode);

      // Not connected yet: no Connect for the agent, and /connect has no consent form.
      const before = await agent.browser.get('/settings');
      assert.match(before.body, /data-testid="connection-admin-only"/);
      assert.doesNotMatch(before.body, /href="\/connect"/);
      const connect = await agent.browser.get('/connect');
      assert.equal(connect.statusCode, 200);
      assert.match(connect.body, /data-testid="not-admin"/);
      assert.doesNotMatch(connect.body, /action="\/api\/auth\/partner\/consent"/);

      const consent = await agent.browser.post('/api/auth/partner/consent', {
        csrf: csrfOf(before.body),
      });
      assert.equal(consent.statusCode, 403);
      assert.match(consent.body, /Only an administrator/);
      const rows = await flow.services.storage.db
        .select({ consent: sessions.partnerConsentAt })
        .from(sessions)
        .where(eq(sessions.userId, agent.userId));
      assert.deepEqual(rows, [{ consent: null }], 'no consent recorded');
      const start = await agent.browser.get('/api/auth/partner/start');
      assert.equal(start.statusCode, 403);
      assert.match(start.body, /Only an administrator/);
      assert.equal(setCookies(start).length, 0, 'no state cookie');

      // The administrator connects; the agent sees it but cannot disconnect.
      const { state } = await startAuthorization(admin.browser);
      const done = await admin.browser.get(callbackUrl({ code: allow(flow), state }));
      assert.equal(done.headers.location, '/authorized');
      const after = await agent.browser.get('/settings');
      assert.match(after.body, /data-testid="connection-status">Connected/);
      assert.doesNotMatch(after.body, /href="\/settings\/disconnect"/);
      assert.match(after.body, /data-testid="connection-admin-only"/);
      const disconnect = await agent.browser.post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: csrfOf(after.body),
      });
      assert.equal(disconnect.statusCode, 403);
      assert.match(disconnect.body, /Only an administrator/);
      const summary = await flow.services.partner.connectionSummary(admin.portal.portalId);
      assert.equal(summary.status, 'active', 'still connected');
      const events = await listAuditEvents(flow.services.storage.db, admin.portal.portalId);
      assert.equal(events.filter((e) => e.action === 'connection.revoked').length, 0);

      // The administrator still sees both buttons.
      const adminPage = await admin.browser.get('/settings');
      assert.match(adminPage.body, /href="\/settings\/disconnect"/);
      assert.match(adminPage.body, /href="\/connect\?reconnect=1"/);
      // The agent cannot reach the confirmation page either.
      assert.equal((await agent.browser.get('/settings/disconnect')).statusCode, 403);
    });

    test('a callback in a session whose user is no longer an administrator → not_admin, no exchange', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const admin = await signedInBrowser(flow);
      const { state } = await startAuthorization(admin.browser);
      await flow.services.storage.db
        .update(users)
        .set({ role: 'agent' })
        .where(eq(users.id, admin.portal.userId));
      const res = await admin.browser.get(callbackUrl({ code: allow(flow), state }));
      assert.equal(res.statusCode, 302);
      assert.equal(res.headers.location, '/auth-error?reason=not_admin');
      assert.equal(exchangeCalls(flow).length, 0);
      const page = await admin.browser.get('/auth-error?reason=not_admin');
      assert.match(page.body, /Only an administrator can connect/);
      const summary = await flow.services.partner.connectionSummary(admin.portal.portalId);
      assert.equal(summary.status, 'inactive');
    });
  });
}
