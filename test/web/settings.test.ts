import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

const VERIFY = '/api/v1/external/auth/verify';

for (const backend of backends()) {
  describe(`/settings (${backend.name})`, () => {
    test('shows the portal, the user, the token hint (never the token) and the connection', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services, { code: '5150' });
      const b = new Browser(app);
      await b.signIn(portal.email);
      const res = await b.get('/settings');
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /portal code <code data-testid="portal-code">5150<\/code>/);
      assert.ok(res.body.includes(portal.email));
      assert.ok(res.body.includes(`…${portal.token.slice(-4)}`));
      assert.ok(!res.body.includes(portal.token), 'the token itself is never shown again');
      assert.match(res.body, /Not connected/);
      assert.match(res.body, /href="\/connect"/);
      assert.match(res.body, /Regenerate token/);
      // The audit log lists the token's creation.
      assert.match(res.body, /API token created/);
    });

    test('the main administrator regenerates the token: confirm, POST-redirect-GET, shown once, old one fails at once', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      const page = await b.get('/settings');
      assert.match(page.body, /href="\/settings\/token\/regenerate"/);
      // One click is not enough: the form without the confirmation goes to the confirm page.
      const unconfirmed = await b.post('/settings/token', { csrf: csrfOf(page.body) });
      assert.equal(unconfirmed.statusCode, 303);
      assert.equal(unconfirmed.headers.location, '/settings/token/regenerate');
      const confirm = await b.get('/settings/token/regenerate');
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /stops working at once/);
      assert.ok(confirm.body.includes(`…${portal.token.slice(-4)}`), 'names the token');
      const res = await b.post('/settings/token', { csrf: csrfOf(confirm.body), confirm: 'yes' });
      assert.equal(res.statusCode, 303);
      const location = String(res.headers.location);
      assert.equal(location, '/settings?done=regenerated#api-token');
      const shown = await b.get(location.replace(/#.*/, ''));
      assert.equal(shown.statusCode, 200);
      assert.equal(shown.headers['cache-control'], 'no-store');
      const m =
        /data-testid="new-token"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*data-testid="new-token"/.exec(
          shown.body,
        );
      assert.ok(m, 'the new token is on the page');
      const token = (m[1] ?? m[2])!;
      assert.match(token, /^ptk_/);
      assert.ok(!location.includes(token), 'never in a URL');
      assert.match(shown.body, /Copy it now/);
      assert.match(shown.body, /<script src="\/assets\/one-time-token.js" defer>/);
      assert.notEqual(token, portal.token);
      const old = await app.inject({ url: VERIFY, headers: { authorization: portal.token } });
      assert.equal(old.statusCode, 401);
      const fresh = await app.inject({ url: VERIFY, headers: { authorization: token } });
      assert.equal(fresh.statusCode, 200);
      // Shown once: a reload of the same address says so, without the token and without
      // "This form has expired".
      const again = await b.get('/settings?done=regenerated');
      assert.equal(again.statusCode, 200);
      assert.ok(!again.body.includes(token));
      assert.match(again.body, /shown once and is not shown again/);
      assert.ok(again.body.includes(`…${token.slice(-4)}`));
      // The session row does not hold the token in clear.
      const { sessions } = await import('../../src/db/schema/index.ts');
      const rows = await services.storage.db.select().from(sessions);
      assert.ok(!JSON.stringify(rows).includes(token));
      const events = await listAuditEvents(services.storage.db, portal.portalId);
      assert.equal(events[0]!.action, 'api_token.regenerated');
      assert.deepEqual([events[0]!.actorType, events[0]!.actorId], ['user', String(portal.userId)]);
    });

    test('a replayed regenerate POST does not regenerate twice', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      const csrf = csrfOf((await b.get('/settings')).body);
      const first = await b.post('/settings/token', { csrf, confirm: 'yes' });
      assert.equal(first.statusCode, 303);
      const replay = await b.post('/settings/token', { csrf, confirm: 'yes' });
      assert.equal(replay.statusCode, 403);
      const events = await listAuditEvents(services.storage.db, portal.portalId);
      assert.equal(events.filter((e) => e.action === 'api_token.regenerated').length, 1);
      // The page after the redirect carries the new form token, so the user can go on.
      const shown = await b.get('/settings?done=regenerated');
      const next = await b.post('/settings/token', { csrf: csrfOf(shown.body), confirm: 'yes' });
      assert.equal(next.statusCode, 303);
    });

    test('regeneration without the CSRF token is refused and changes nothing', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      for (const csrf of [undefined, '', 'x'.repeat(43)]) {
        const res = await b.post('/settings/token', { csrf, confirm: 'yes' });
        assert.equal(res.statusCode, 403);
        assert.match(res.body, /Nothing was changed/);
      }
      const still = await app.inject({ url: VERIFY, headers: { authorization: portal.token } });
      assert.equal(still.statusCode, 200);
    });

    test('another user sees no button, and a POST by them is refused', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      await services.accounts.createUser({
        portalCode: portal.portalCode,
        email: 'member@example.test',
        mainAdmin: false,
      });
      await services.accounts.setPassword({
        portalCode: portal.portalCode,
        email: 'member@example.test',
        password: TEST_PASSWORD,
      });
      const b = new Browser(app);
      await b.signIn('member@example.test');
      const page = await b.get('/settings');
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.body, /Regenerate token/);
      assert.match(page.body, /Only an administrator can regenerate the token/);
      const res = await b.post('/settings/token', { csrf: csrfOf(page.body), confirm: 'yes' });
      assert.equal(res.statusCode, 403);
      assert.match(res.body, /Only an administrator/);
      const confirmPage = await b.get('/settings/token/regenerate');
      assert.equal(confirmPage.statusCode, 403);
      const still = await app.inject({ url: VERIFY, headers: { authorization: portal.token } });
      assert.equal(still.statusCode, 200);
    });

    test('a session never shows another portal', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services, { code: '1111' });
      await portalWithPassword(services, { code: '2222' });
      const b = new Browser(app);
      await b.signIn(a.email);
      const res = await b.get('/settings?portal=2222');
      assert.match(res.body, /1111/);
      assert.doesNotMatch(res.body, /2222/);
    });
  });
}
