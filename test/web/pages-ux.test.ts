/**
 * The pages: scopes in words, the token's last use, the audit log in the customer's
 * words (paged, cancelled and declined attempts), the connection card, error pages, the
 * favicon, `/authorized` signed in, and the development host redirect. In-process (real
 * storage, real HTTP to the sandbox provider); the browser suite covers the same pages in
 * Chromium with screenshots.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { CLI_ACTOR, listAuditEvents, recordAuditEvent } from '../../src/audit/audit-log.ts';
import { apiTokens, connections } from '../../src/db/schema/index.ts';
import { HEALTH_CHECKER_ACTOR, revocationWords } from '../../src/partner/revocation/revocation.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';
import {
  allow,
  APP_ORIGIN,
  buildFlowApp,
  callbackUrl,
  signedInBrowser,
  startAuthorization,
} from '../helpers/web-flow.ts';

const VERIFY = '/api/v1/external/auth/verify';
const HTML = { accept: 'text/html,application/xhtml+xml' };

/** The text of a page without its tags (what a person reads). */
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

for (const backend of backends()) {
  describe(`pages: scopes, token use, audit log (${backend.name})`, () => {
    test('settings: scopes in words with the identifier in small print; last used, written in batches off the request', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      const before = await b.get('/settings');
      assert.match(before.body, /data-testid="token-last-used">Not used yet/);
      assert.match(before.body, /Open support tickets <small class="id">support:tickets:write/);
      assert.match(before.body, /Send messages <small class="id">messaging:send/);

      const use = () => app.inject({ url: VERIFY, headers: { authorization: portal.token } });
      assert.equal((await use()).statusCode, 200);
      await services.tokenVerification.usage.settled();
      const read = async () =>
        (await services.storage.db.select({ at: apiTokens.lastUsedAt }).from(apiTokens))[0]!.at;
      const first = await read();
      assert.ok(first, 'last used is written after a use');
      assert.ok(Math.abs(first.getTime() - Date.now()) < 60_000);
      // Nothing is written until the batch is flushed; then the time only moves forward.
      assert.equal((await use()).statusCode, 200);
      assert.equal((await read())?.getTime(), first.getTime());
      await services.tokenVerification.usage.settled();
      assert.ok((await read())!.getTime() >= first.getTime());
      const after = await b.get('/settings');
      const last = (await read())!;
      const shown = `${last.toISOString().slice(0, 10)} ${last.toISOString().slice(11, 16)} UTC`;
      assert.match(after.body, new RegExp(`data-testid="token-last-used">${shown}`));
    });

    test("the audit log speaks the customer's language, pages, and stops asking to regenerate once done", async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const db = services.storage.db;
      await recordAuditEvent(db, {
        portalId: portal.portalId,
        actor: CLI_ACTOR,
        action: 'api_token.scopes_changed',
        reason: 'scopes set to support:tickets:read',
      });
      await recordAuditEvent(db, {
        portalId: portal.portalId,
        actor: HEALTH_CHECKER_ACTOR,
        action: 'connection.revoked',
        reason: revocationWords('dead_token', '(error 190) during profile read'),
      });
      await recordAuditEvent(db, {
        portalId: portal.portalId,
        actor: { type: 'user', id: String(portal.userId) },
        action: 'secret.redacted',
        reason:
          'A Portico API token was pasted into support ticket tkt_1 and redacted. ' +
          "It is this portal's token: regenerate it now (Regenerate token on the settings page, " +
          'or `npm run cli -- token regenerate`).',
      });
      const b = new Browser(app);
      await b.signIn(portal.email);
      const page = text((await b.get('/settings')).body);
      assert.match(page, /Portico's administrator/, 'the CLI actor');
      assert.match(page, /Portico's periodic check/);
      assert.match(page, /When \(UTC\)/);
      assert.match(page, /regenerate it now with Regenerate token on the settings page/);
      for (const operatorWords of [/system cli/, /health-checker/, /error 190/, /npm run/, /`/]) {
        assert.doesNotMatch(page, operatorWords);
      }
      // After a regeneration the advice is done.
      await new Promise((r) => setTimeout(r, 5)); // the token's issue time after the event's
      await services.accounts.regenerateToken({
        portalCode: portal.portalCode,
        actor: { type: 'user', id: String(portal.userId) },
      });
      const later = text((await b.get('/settings')).body);
      assert.match(later, /the token has been regenerated since, so nothing is left to do/);
      assert.doesNotMatch(later, /regenerate it now/);

      // Paging: 60 more events → 50 on the first page of /audit, the rest after "Older".
      for (let i = 0; i < 60; i++) {
        await recordAuditEvent(db, {
          portalId: portal.portalId,
          actor: { type: 'user', id: String(portal.userId) },
          action: 'contact.erased',
          reason: `Contact ctc_${i} erased on request (GDPR art. 17).`,
        });
      }
      const total = (await listAuditEvents(db, portal.portalId, { limit: 500 })).length;
      const first = await b.get('/audit');
      assert.equal(first.statusCode, 200);
      const rowsOf = (html: string) => (html.match(/<tr>/g) ?? []).length - 1; // minus the head
      assert.equal(rowsOf(first.body), 50);
      const older = /href="(\/audit\?cursor=[\w-]+)"/.exec(first.body);
      assert.ok(older, 'a link to older events');
      const second = await b.get(older[1]!);
      assert.equal(rowsOf(second.body), total - 50);
      assert.doesNotMatch(second.body, /data-testid="audit-older"/);
      assert.match(second.body, /href="\/audit">Newest events/);
      // The two pages are the events newest first, each once.
      const ids = (html: string) =>
        [...html.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]);
      const shown = [...ids(first.body), ...ids(second.body)];
      const events = await listAuditEvents(db, portal.portalId, { limit: 500 });
      assert.deepEqual(
        shown,
        events.map((e) => e.occurredAt),
      );
      for (const bad of ['/audit?cursor=abc', '/audit?cursor=%25%25']) {
        const res = await b.get(bad, HTML);
        assert.equal(res.statusCode, 400, bad);
        assert.match(String(res.headers['content-type']), /text\/html/);
      }
    });

    test('errors of the pages are pages; the API keeps its envelope; a favicon; a strict CSP', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const notFound = await app.inject({ url: '/no-such-page', headers: HTML });
      assert.equal(notFound.statusCode, 404);
      assert.match(String(notFound.headers['content-type']), /text\/html/);
      assert.match(notFound.body, /Page not found/);
      assert.match(notFound.body, /href="\/assets\/portico.css"/);
      assert.doesNotMatch(notFound.body, /no-such-page/, 'the address is not echoed');
      const json = await app.inject({ url: '/no-such-page' });
      assert.equal(json.statusCode, 404);
      assert.equal(json.json().error.code, 'not_found');
      const api = await app.inject({ url: '/api/v1/external/nope', headers: HTML });
      assert.match(String(api.headers['content-type']), /application\/json/);

      const ico = await app.inject({ url: '/favicon.ico' });
      assert.equal(ico.statusCode, 301);
      assert.equal(ico.headers.location, '/assets/favicon.svg');
      const svg = await app.inject({ url: '/assets/favicon.svg' });
      assert.equal(svg.statusCode, 200);
      assert.match(String(svg.headers['content-type']), /image\/svg\+xml/);
      const csp = String((await app.inject({ url: '/login' })).headers['content-security-policy']);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);

      // A 500 on a page route: a page with the request id, no error text.
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      await services.storage.db.execute(sql`DROP TABLE audit_events`);
      const failed = await b.get('/settings', HTML);
      assert.equal(failed.statusCode, 500);
      assert.match(String(failed.headers['content-type']), /text\/html/);
      assert.match(failed.body, /Something went wrong on our side/);
      assert.ok(failed.body.includes(String(failed.headers['x-request-id'])));
      assert.doesNotMatch(failed.body, /audit_events|relation|at .*\.ts/);
    });

    test('one log line per request: a refused one carries its code, a failed one its error', async (t) => {
      const { app, logs } = await buildTestApp(t, backend);
      const linesOf = (id: string) =>
        logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.reqId === id);
      const refused = await app.inject({ url: VERIFY });
      assert.equal(refused.statusCode, 401);
      const bad = await app.inject({
        method: 'POST',
        url: '/api/v1/external/support/tickets',
        headers: { 'content-type': 'application/json', authorization: 'ptk_x' },
        payload: '{',
      });
      for (const res of [refused, bad]) {
        const lines = linesOf(String(res.headers['x-request-id']));
        assert.equal(lines.length, 1, JSON.stringify(lines));
        assert.equal(lines[0]!.msg, 'request completed');
        assert.equal(lines[0]!.statusCode, res.statusCode);
        assert.equal(lines[0]!.code, res.json().error.code);
      }
      // A refused sign-in (a page) too.
      const b = new Browser(app);
      const login = await b.get('/login');
      const wrong = await b.post('/login', {
        email: 'nobody@example.test',
        password: 'not the password at all',
        csrf: csrfOf(login.body),
      });
      assert.equal(wrong.statusCode, 401);
      const lines = linesOf(String(wrong.headers['x-request-id']));
      assert.deepEqual(
        lines.map((l) => [l.msg, l.code]),
        [['request completed', 'sign_in_refused']],
      );
    });

    test('/authorized needs a session and names the user', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const anonymous = await app.inject({ url: '/authorized' });
      assert.equal(anonymous.statusCode, 302);
      assert.equal(anonymous.headers.location, '/login?next=%2Fauthorized');
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      const page = await b.get('/authorized');
      assert.equal(page.statusCode, 200);
      assert.ok(text(page.body).includes(`${portal.email} connected Test portal to`));
    });

    test('development: pages on another host go to APP_BASE_URL; the API, probes and forms do not', async (t) => {
      const { app } = await buildTestApp(t, backend, {
        NODE_ENV: 'development',
        APP_BASE_URL: 'http://localhost:3999',
      });
      const on = (url: string, host: string, method: 'GET' | 'POST' = 'GET') =>
        app.inject({ method, url, headers: { host } });
      const moved = await on('/login?next=%2Fcontacts', '127.0.0.1:3999');
      assert.equal(moved.statusCode, 302);
      assert.equal(moved.headers.location, 'http://localhost:3999/login?next=%2Fcontacts');
      assert.equal((await on('/login', 'localhost:3999')).statusCode, 200);
      assert.equal((await on('/healthz', '127.0.0.1:3999')).statusCode, 200);
      assert.equal((await on(VERIFY, '127.0.0.1:3999')).statusCode, 401);
      const callback = await on('/api/auth/partner/callback?error=access_denied', '127.0.0.1:3999');
      assert.notEqual(callback.headers.location?.startsWith('http://localhost'), true);
      const form = await on('/login', '127.0.0.1:3999', 'POST');
      assert.ok(!String(form.headers.location ?? '').startsWith('http://localhost'));
      // Not in test or production.
      const { app: plain } = await buildTestApp(t, backend, { APP_BASE_URL: APP_ORIGIN });
      const same = await plain.inject({ url: '/login', headers: { host: '127.0.0.1:1' } });
      assert.equal(same.statusCode, 200);
    });
  });

  describe(`the connection flow's pages (${backend.name})`, () => {
    test('a callback without any cookie names the 127.0.0.1/localhost cause and the address to use', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const res = await flow.app.inject({ url: callbackUrl({ code: 'x', state: 'y' }) });
      assert.equal(res.statusCode, 302);
      assert.equal(res.headers.location, '/auth-error?reason=state&cause=cookies');
      const page = await flow.app.inject({ url: String(res.headers.location) });
      assert.match(page.body, /data-testid="cause-cookies"/);
      assert.match(page.body, /127\.0\.0\.1/);
      assert.ok(page.body.includes(`${APP_ORIGIN}/login`));
      // With the browser's cookies (a session) the cause is not claimed.
      const { browser } = await signedInBrowser(flow);
      const withSession = await browser.get(callbackUrl({ code: 'x', state: 'y' }));
      assert.equal(withSession.headers.location, '/auth-error?reason=state');
    });

    test('cancelled and declined attempts are in the audit log; a forged cancel writes nothing', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      const forged = await browser.get(callbackUrl({ error: 'access_denied', state: 'forged' }));
      assert.equal(forged.headers.location, '/auth-error?reason=state');
      const actions = async () =>
        (await listAuditEvents(flow.services.storage.db, portal.portalId)).map((e) => e.action);
      assert.ok(!(await actions()).includes('connection.cancelled'));

      const { state } = await startAuthorization(browser);
      const cancelled = await browser.get(callbackUrl({ error: 'access_denied', state }));
      assert.equal(cancelled.headers.location, '/auth-error?reason=cancelled');
      assert.equal((await actions()).filter((a) => a === 'connection.cancelled').length, 1);

      const second = await startAuthorization(browser);
      const code = allow(flow, { permissions: ['business_management'] });
      const declined = await browser.get(callbackUrl({ code, state: second.state }));
      assert.match(String(declined.headers.location), /^\/auth-error\?reason=permission/);
      const events = await listAuditEvents(flow.services.storage.db, portal.portalId);
      const record = events.find((e) => e.action === 'connection.declined');
      assert.ok(record, 'declined recorded');
      assert.match(record.reason ?? '', /send messages for your business/);
      const page = text((await browser.get('/settings')).body);
      assert.match(page, /Connection attempt cancelled/);
      assert.match(page, /Connection attempt declined/);
    });

    test('the connection card: provider by name, WABA ids, permissions asked vs granted, expiry, last checked, Reconnect', async (t) => {
      const flow = await buildFlowApp(t, backend, { env: { PROVIDER_DISPLAY_NAME: 'Acme Graph' } });
      const { browser, portal } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const ok = await browser.get(callbackUrl({ code: allow(flow), state }));
      assert.equal(ok.headers.location, '/authorized');
      await flow.services.partner.checkConnections();
      const page = await browser.get('/settings');
      const words = text(page.body);
      assert.match(words, /Connected to Acme Graph/);
      const [row] = await flow.services.storage.db
        .select({ assetIds: connections.assetIds })
        .from(connections)
        .where(eq(connections.portalId, portal.portalId));
      assert.ok(row && row.assetIds.length > 0);
      for (const id of row.assetIds) assert.ok(words.includes(`WABA ${id}`), `shows ${id}`);
      // Each business account with its phone numbers by name, read from the Cloud API.
      const numbers = await flow.services.messagingProvider.numbers(portal.portalId);
      assert.ok(numbers.length > 0);
      for (const n of numbers)
        assert.ok(words.includes(`${n.displayPhoneNumber} · ${n.verifiedName}`), `shows ${n.id}`);
      assert.match(
        words,
        /✓ send messages for your business whatsapp_business_messaging/,
        'words, then the identifier',
      );
      assert.match(page.body, /data-testid="token-expires">\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      assert.match(page.body, /data-testid="last-checked">\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
      assert.match(page.body, /href="\/connect\?reconnect=1"/);
      const reconnect = await browser.get('/connect?reconnect=1');
      assert.match(reconnect.body, /replaces the current one in place/);
      // Reconnect replaces the connection in place: still one row, still active.
      const again = await startAuthorization(browser);
      const replaced = await browser.get(callbackUrl({ code: allow(flow), state: again.state }));
      assert.equal(replaced.headers.location, '/authorized');
      const events = await listAuditEvents(flow.services.storage.db, portal.portalId);
      assert.match(events[0]!.reason ?? '', /replacing the previous connection/);
      // The disconnect confirmation names the provider and what stops.
      const confirm = await browser.get('/settings/disconnect');
      assert.match(text(confirm.body), /Disconnect Acme Graph\?/);
      assert.match(confirm.body, /no message can be sent or received/);
      assert.ok(csrfOf(confirm.body));
    });
  });
}
