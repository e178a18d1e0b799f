import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { sessions } from '../../src/db/schema/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import {
  allow,
  buildFlowApp,
  callbackUrl,
  exchangeCalls,
  REDIRECT_URI,
  signedInBrowser,
  startAuthorization,
} from '../helpers/web-flow.ts';
import { Browser, csrfOf, isDeletion, portalWithPassword, setCookies } from '../helpers/web.ts';

const STATE_COOKIE = 'portico_oauth_state';

/** The state cookie of a response is deleted (Max-Age=0, same name, Path=/). */
function assertStateCookieCleared(res: LightMyRequestResponse) {
  const cleared = setCookies(res).filter((c) => c.name === STATE_COOKIE);
  assert.equal(cleared.length, 1, 'exactly one Set-Cookie for the state cookie');
  assert.ok(isDeletion(cleared[0]!), 'the state cookie is deleted');
  assert.equal(cleared[0]!.path, '/');
  assert.equal(cleared[0]!.value, '');
}

function assertRedirect(res: LightMyRequestResponse, location: string) {
  assert.equal(res.statusCode, 302, res.body);
  assert.equal(res.headers.location, location);
  assert.equal(res.headers['referrer-policy'], 'no-referrer');
}

for (const backend of backends()) {
  describe(`consent and start (${backend.name})`, () => {
    test('start: state cookie attributes and the exact authorization address', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state, location, cookie, start } = await startAuthorization(browser);
      assert.match(state, /^[A-Za-z0-9_-]{43,}$/, '≥ 32 random bytes, base64url');
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.sameSite?.toLowerCase(), 'lax');
      assert.equal(cookie.path, '/');
      assert.equal(cookie.maxAge, 600);
      assert.equal(cookie.secure, undefined, 'Secure only in production');
      assert.equal(cookie.domain, undefined);
      assert.equal(
        `${location.origin}${location.pathname}`,
        `${flow.sandbox.url}/v21.0/dialog/oauth`,
      );
      assert.deepEqual([...location.searchParams.keys()].sort(), [
        'client_id',
        'code_challenge',
        'code_challenge_method',
        'redirect_uri',
        'response_type',
        'scope',
        'state',
      ]);
      assert.equal(location.searchParams.get('client_id'), flow.appId);
      assert.equal(location.searchParams.get('redirect_uri'), REDIRECT_URI);
      assert.equal(location.searchParams.get('response_type'), 'code');
      assert.equal(location.searchParams.get('state'), state);
      assert.equal(
        location.searchParams.get('scope'),
        'business_management,whatsapp_business_messaging,whatsapp_business_management',
      );
      assert.ok(!String(start.headers.location).includes(flow.appSecret));
      assert.equal(start.headers['referrer-policy'], 'no-referrer');
    });

    test('config_id is sent only when PROVIDER_CONFIG_ID is set', async (t) => {
      const flow = await buildFlowApp(t, backend, { env: { PROVIDER_CONFIG_ID: 'cfg123' } });
      const { browser } = await signedInBrowser(flow);
      const { location } = await startAuthorization(browser);
      assert.equal(location.searchParams.get('config_id'), 'cfg123');
    });

    test('scope: the required permissions, comma-separated, when no config_id is set', async (t) => {
      const flow = await buildFlowApp(t, backend, {
        env: { PROVIDER_REQUIRED_PERMISSIONS: 'business_management,whatsapp_business_messaging' },
      });
      const { browser } = await signedInBrowser(flow);
      const { location } = await startAuthorization(browser);
      assert.equal(
        location.searchParams.get('scope'),
        'business_management,whatsapp_business_messaging',
      );
      assert.equal(location.searchParams.get('config_id'), null);
      // The login configuration names the permissions itself: no scope beside it.
      const configured = await buildFlowApp(t, backend, { env: { PROVIDER_CONFIG_ID: 'cfg1' } });
      const other = await signedInBrowser(configured);
      const withConfig = await startAuthorization(other.browser);
      assert.equal(withConfig.location.searchParams.get('scope'), null);
    });

    test('the redirects of start (state cookie) and callback (code in its URL) are not stored', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state, start } = await startAuthorization(browser);
      assert.equal(start.headers['cache-control'], 'no-store');
      const callback = await browser.get(callbackUrl({ code: allow(flow), state }));
      assert.equal(callback.headers.location, '/authorized');
      assert.equal(callback.headers['cache-control'], 'no-store');
      const refused = await browser.get(callbackUrl({ code: 'c', state: 'other' }));
      assert.equal(refused.statusCode, 302);
      assert.equal(refused.headers['cache-control'], 'no-store');
    });

    test('PKCE: an S256 challenge in the address; its verifier only in the token request', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state, location, start } = await startAuthorization(browser);
      const challenge = location.searchParams.get('code_challenge');
      assert.match(String(challenge), /^[A-Za-z0-9_-]{43}$/);
      assert.equal(location.searchParams.get('code_challenge_method'), 'S256');
      assert.ok(!JSON.stringify(start.headers['set-cookie']).includes('verifier'));
      // The sandbox, like the provider, refuses the exchange unless the verifier matches.
      const res = await browser.get(callbackUrl({ code: allow(flow), state }));
      assert.equal(res.headers.location, '/authorized');
      for (const call of flow.sandbox.calls) assert.doesNotMatch(call.url, /code_verifier/);
      // A code bound to another challenge (another attempt's) fails the exchange.
      const second = await startAuthorization(browser);
      const code = flow.sandbox.authorize({
        appId: flow.appId,
        redirectUri: REDIRECT_URI,
        codeChallenge: String(challenge),
      });
      const refused = await browser.get(callbackUrl({ code, state: second.state }));
      assert.equal(refused.headers.location, '/auth-error?reason=provider');
    });

    test('PROVIDER_PKCE=false: no challenge is sent and the exchange carries no verifier', async (t) => {
      const flow = await buildFlowApp(t, backend, { env: { PROVIDER_PKCE: 'false' } });
      const { browser } = await signedInBrowser(flow);
      const { state, location } = await startAuthorization(browser);
      assert.equal(location.searchParams.get('code_challenge'), null);
      assert.equal(location.searchParams.get('code_challenge_method'), null);
      const res = await browser.get(callbackUrl({ code: allow(flow), state }));
      assert.equal(res.headers.location, '/authorized');
    });

    test('two starts give two different states', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const a = await startAuthorization(browser);
      const b = await startAuthorization(browser);
      assert.notEqual(a.state, b.state);
    });

    test('start refuses without a session, and without a consent given just before', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const anonymous = await new Browser(flow.app).get('/api/auth/partner/start');
      assert.equal(anonymous.statusCode, 302);
      assert.equal(anonymous.headers.location, '/connect');
      assert.equal(setCookies(anonymous).length, 0, 'no state cookie');

      const { browser } = await signedInBrowser(flow);
      const noConsent = await browser.get('/api/auth/partner/start');
      assert.equal(noConsent.headers.location, '/connect?retry=consent');
      assert.equal(setCookies(noConsent).filter((c) => c.name === STATE_COOKIE).length, 0);

      // One consent starts one authorization.
      await startAuthorization(browser);
      const again = await browser.get('/api/auth/partner/start');
      assert.equal(again.headers.location, '/connect?retry=consent');
    });

    test('a stale consent (over 5 minutes) is refused', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const connect = await browser.get('/connect');
      await browser.post('/api/auth/partner/consent', { csrf: csrfOf(connect.body) });
      await flow.services.storage.db
        .update(sessions)
        .set({ partnerConsentAt: sql`now() - interval '301 seconds'` });
      const res = await browser.get('/api/auth/partner/start');
      assert.equal(res.headers.location, '/connect?retry=consent');
    });

    test('consent without the CSRF token is refused; without a session goes to /login', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const refused = await browser.post('/api/auth/partner/consent', { csrf: 'nope' });
      assert.equal(refused.statusCode, 403);
      assert.equal(
        (await browser.get('/api/auth/partner/start')).headers.location,
        '/connect?retry=consent',
      );
      const anon = await new Browser(flow.app).post('/api/auth/partner/consent', { csrf: 'x' });
      assert.equal(anon.statusCode, 303);
      assert.equal(anon.headers.location, '/login?next=%2Fconnect');
    });

    test('/connect holds no app identity and allows the form to reach the provider', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const page = await browser.get('/connect');
      assert.ok(!page.body.includes(flow.appId));
      assert.ok(!page.body.includes(flow.appSecret));
      assert.match(page.body, /action="\/api\/auth\/partner\/consent"/);
      // The consent form, and the app shell's sign-out (in its bar and in its phone menu).
      const forms = page.body.match(/<form [^>]*>/g) ?? [];
      assert.deepEqual(
        forms.filter((f) => !f.includes('action="/logout"')),
        [forms.find((f) => f.includes('/api/auth/partner/consent'))],
        'the consent form is the only other form',
      );
      assert.match(
        String(page.headers['content-security-policy']),
        new RegExp(`form-action 'self' ${flow.sandbox.url.replace(/[.]/g, '\\.')}`),
      );
    });
  });

  describe(`GET /api/auth/partner/callback (${backend.name})`, () => {
    test('success: exchange, storage, /authorized; cookie cleared; settings shows connected', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const code = allow(flow);
      const res = await browser.get(callbackUrl({ code, state }));
      assertRedirect(res, '/authorized');
      assertStateCookieCleared(res);
      assert.equal(browser.jar.has(STATE_COOKIE), false);
      const summary = await flow.services.partner.connectionSummary(portal.portalId);
      assert.equal(summary.status, 'active');
      const page = await browser.get('/authorized');
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      const settings = await browser.get('/settings');
      assert.match(settings.body, /data-testid="connection-status">Connected/);
      assert.match(settings.body, new RegExp(`by ${portal.email.replace(/[.]/g, '\\.')}`));
      assert.match(settings.body, /send messages for your business/);
    });

    test('cancelled at the provider (error=access_denied) → cancelled, with a retry', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const res = await browser.get(
        callbackUrl({
          error: 'access_denied',
          error_reason: 'user_denied',
          error_description: 'Permissions error',
          state,
        }),
      );
      assertRedirect(res, '/auth-error?reason=cancelled');
      assertStateCookieCleared(res);
      const page = await browser.get('/auth-error?reason=cancelled');
      assert.match(page.body, /href="\/connect"/);
      assert.match(page.body, /Try again/);
      assert.doesNotMatch(page.body, /Permissions error|user_denied/);
      assert.equal(exchangeCalls(flow).length, 0);
    });

    test('another provider error → provider, nothing echoed', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const res = await browser.get(
        callbackUrl({ error: 'server_error', error_description: '<b>boom</b>', state }),
      );
      assertRedirect(res, '/auth-error?reason=provider');
      assertStateCookieCleared(res);
    });

    test('an error callback with a wrong or missing state is forged → state, no audit event', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      const before = await listAuditEvents(flow.services.storage.db, portal.portalId);
      for (const [error, forgedState] of [
        ['access_denied', 'forged'],
        ['access_denied', undefined],
        ['server_error', 'forged'],
      ] as const) {
        const { state } = await startAuthorization(browser);
        const res = await browser.get(
          callbackUrl({ error, state: forgedState ?? undefined, error_reason: 'user_denied' }),
        );
        assertRedirect(res, '/auth-error?reason=state');
        assertStateCookieCleared(res);
        assert.notEqual(forgedState, state);
      }
      const after = await listAuditEvents(flow.services.storage.db, portal.portalId);
      assert.deepEqual(after, before, 'a forged callback writes no audit event');
      assert.equal(exchangeCalls(flow).length, 0);
    });

    for (const [name, params] of [
      ['code missing', (s: string) => ({ state: s })],
      ['state missing', (_s: string) => ({ code: 'c' })],
      ['both missing', (_s: string) => ({})],
      ['empty values', (_s: string) => ({ code: '', state: '' })],
    ] as const) {
      test(`${name} → state, no exchange, cookie cleared`, async (t) => {
        const flow = await buildFlowApp(t, backend);
        const { browser } = await signedInBrowser(flow);
        const { state } = await startAuthorization(browser);
        const res = await browser.get(callbackUrl(params(state)));
        assertRedirect(res, '/auth-error?reason=state');
        assertStateCookieCleared(res);
        assert.equal(exchangeCalls(flow).length, 0);
      });
    }

    test('cookie missing → state, no exchange', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      browser.jar.delete(STATE_COOKIE);
      const res = await browser.get(callbackUrl({ code: allow(flow), state }));
      assertRedirect(res, '/auth-error?reason=state');
      assertStateCookieCleared(res);
      assert.equal(exchangeCalls(flow).length, 0);
    });

    test('state mismatch (one character, other length, other flow) → state, no exchange', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      for (const forge of [
        (s: string) => s.slice(0, -1) + (s.endsWith('A') ? 'B' : 'A'),
        (s: string) => s.slice(0, -1),
        (s: string) => `${s}x`,
        (_s: string) => 'a'.repeat(600),
        (_s: string) => '%00',
      ]) {
        const { state } = await startAuthorization(browser);
        const res = await browser.get(callbackUrl({ code: allow(flow), state: forge(state) }));
        assertRedirect(res, '/auth-error?reason=state');
        assertStateCookieCleared(res);
      }
      assert.equal(exchangeCalls(flow).length, 0);
    });

    test('an attacker’s state in their own cookie does not match the victim’s (login CSRF on the callback)', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const victim = await signedInBrowser(flow);
      const attacker = await signedInBrowser(flow);
      const attackerFlow = await startAuthorization(attacker.browser);
      await startAuthorization(victim.browser);
      // The attacker sends the victim their own callback link (their code and state).
      const res = await victim.browser.get(
        callbackUrl({ code: allow(flow), state: attackerFlow.state }),
      );
      assertRedirect(res, '/auth-error?reason=state');
      assert.equal(exchangeCalls(flow).length, 0);
      const summary = await flow.services.partner.connectionSummary(victim.portal.portalId);
      assert.equal(summary.status, 'inactive');
    });

    test('a replayed state (the same callback twice) → state, no second exchange', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const code = allow(flow);
      assertRedirect(await browser.get(callbackUrl({ code, state })), '/authorized');
      const exchanges = exchangeCalls(flow).length;
      // The cookie was cleared by the first callback, so the same state cannot pass again.
      const replay = await browser.get(callbackUrl({ code: allow(flow), state }));
      assertRedirect(replay, '/auth-error?reason=state');
      assertStateCookieCleared(replay);
      assert.equal(exchangeCalls(flow).length, exchanges);
    });

    test('a reused authorization code (new flow, old code) is refused by the provider → provider', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      const first = await startAuthorization(browser);
      const code = allow(flow);
      assertRedirect(await browser.get(callbackUrl({ code, state: first.state })), '/authorized');
      const second = await startAuthorization(browser);
      const res = await browser.get(callbackUrl({ code, state: second.state }));
      assert.equal(res.statusCode, 302);
      assert.match(String(res.headers.location), /^\/auth-error\?reason=(provider|config)$/);
      assertStateCookieCleared(res);
      // The first connection is untouched.
      const summary = await flow.services.partner.connectionSummary(portal.portalId);
      assert.equal(summary.status, 'active');
    });

    test('no session at the callback (signed out in between) → state, no exchange', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const settings = await browser.get('/settings');
      await browser.post('/logout', { csrf: csrfOf(settings.body) });
      const res = await browser.get(callbackUrl({ code: allow(flow), state }));
      // Sign-out cleared every cookie of the flow: the page also names the cookie cause.
      assertRedirect(res, '/auth-error?reason=state&cause=cookies');
      assertStateCookieCleared(res);
      assert.equal(exchangeCalls(flow).length, 0);
    });

    test('the portal comes from the session, never from the query', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const a = await signedInBrowser(flow);
      const other = await signedInBrowser(flow);
      const { state } = await startAuthorization(a.browser);
      const res = await a.browser.get(
        `${callbackUrl({ code: allow(flow), state })}&portalId=${other.portal.portalId}&portal=${other.portal.portalCode}`,
      );
      assertRedirect(res, '/authorized');
      assert.equal(
        (await flow.services.partner.connectionSummary(a.portal.portalId)).status,
        'active',
      );
      assert.equal(
        (await flow.services.partner.connectionSummary(other.portal.portalId)).status,
        'inactive',
      );
    });

    test('a declined permission → permission, naming the capability in plain words', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const code = allow(flow, {
        permissions: ['business_management', 'whatsapp_business_management'],
      });
      const res = await browser.get(callbackUrl({ code, state }));
      assert.equal(res.statusCode, 302);
      assertStateCookieCleared(res);
      const location = String(res.headers.location);
      assert.match(location, /^\/auth-error\?reason=permission&missing=/);
      assert.doesNotMatch(location, /whatsapp_business_messaging/, 'never the raw permission');
      const page = await browser.get(location);
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['referrer-policy'], 'no-referrer');
      assert.match(page.body, /<li>send messages for your business<\/li>/);
      assert.doesNotMatch(page.body, /whatsapp_business_messaging/);
      assert.equal(
        (await flow.services.partner.connectionSummary(portal.portalId)).status,
        'inactive',
        'nothing stored',
      );
    });

    test('a redirect URI that does not match the registered one → config', async (t) => {
      const flow = await buildFlowApp(t, backend, {
        redirectUri: 'http://localhost:3999/api/auth/partner/callback/',
      });
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const res = await browser.get(callbackUrl({ code: allow(flow), state }));
      assertRedirect(res, '/auth-error?reason=config');
      assertStateCookieCleared(res);
      const page = await browser.get('/auth-error?reason=config');
      assert.match(page.body, /PROVIDER_REDIRECT_URI/);
    });

    test('storage failing after the exchange → storage, nothing stored', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      // A real database refusal (not a stand-in): every write to connections fails.
      await flow.services.storage.db.execute(sql`
        create function portico_test_refuse() returns trigger language plpgsql as
          $$ begin raise exception 'storage refused (test)'; end $$`);
      await flow.services.storage.db.execute(sql`
        create trigger portico_test_refuse before insert or update on connections
          for each row execute function portico_test_refuse()`);
      const res = await browser.get(callbackUrl({ code: allow(flow), state }));
      assertRedirect(res, '/auth-error?reason=storage');
      assertStateCookieCleared(res);
      assert.equal(
        (await flow.services.partner.connectionSummary(portal.portalId)).status,
        'inactive',
      );
      const page = await browser.get('/auth-error?reason=storage');
      assert.doesNotMatch(page.body, /storage refused/);
    });

    test('a malformed query (repeated parameters) still clears the cookie → state', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const res = await browser.get(
        `/api/auth/partner/callback?state=${state}&state=${state}&code=a&code=b`,
      );
      assertRedirect(res, '/auth-error?reason=state');
      assertStateCookieCleared(res);
      assert.equal(exchangeCalls(flow).length, 0);
    });
  });

  describe(`/auth-error and /authorized (${backend.name})`, () => {
    test('every reason has a generic page; unknown reasons and forged text show nothing of theirs', async (t) => {
      const { app } = await buildTestApp(t, backend);
      for (const reason of ['cancelled', 'state', 'config', 'permission', 'provider', 'storage']) {
        const res = await app.inject({ url: `/auth-error?reason=${reason}` });
        assert.equal(res.statusCode, 200, reason);
        assert.equal(res.headers['referrer-policy'], 'no-referrer');
        assert.match(String(res.headers['content-type']), /^text\/html/);
      }
      const forged = await app.inject({
        url: '/auth-error?reason=permission&missing=call+us+at+555-0100&missing=%3Cscript%3Ealert(1)%3C%2Fscript%3E&missing=whatsapp_business_messaging',
      });
      assert.equal(forged.statusCode, 200);
      assert.doesNotMatch(forged.body, /555-0100|<script>|alert|whatsapp_business_messaging/);
      const unknown = await app.inject({ url: '/auth-error?reason=%3Cb%3Ehi' });
      assert.equal(unknown.statusCode, 200);
      assert.doesNotMatch(unknown.body, /<b>hi/);
      const bare = await app.inject({ url: '/auth-error' });
      assert.equal(bare.statusCode, 200);
      const mangled = await app.inject({
        url: `/auth-error?reason=${'x'.repeat(100)}&missing=${'y'.repeat(300)}`,
      });
      assert.equal(mangled.statusCode, 200);
      assert.match(String(mangled.headers['content-type']), /^text\/html/);
    });
  });
}

for (const backend of backends()) {
  describe(`start without provider settings (${backend.name})`, () => {
    test('→ /auth-error?reason=config, no state cookie', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      const browser = new Browser(app);
      await browser.signIn(email);
      const connect = await browser.get('/connect');
      assert.equal(connect.statusCode, 200);
      await browser.post('/api/auth/partner/consent', { csrf: csrfOf(connect.body) });
      const res = await browser.get('/api/auth/partner/start');
      assertRedirect(res, '/auth-error?reason=config');
      assert.equal(setCookies(res).filter((c) => c.name === STATE_COOKIE).length, 0);
    });
  });
}
