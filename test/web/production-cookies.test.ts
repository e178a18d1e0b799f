import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { callbackUrl } from '../helpers/web-flow.ts';
import { Browser, csrfOf, isDeletion, portalWithPassword, setCookies } from '../helpers/web.ts';

/** A complete production configuration (no network is used by these tests). */
const PRODUCTION = {
  NODE_ENV: 'production',
  APP_BASE_URL: 'https://portico.example.com',
  PROVIDER_APP_ID: '123456789',
  PROVIDER_APP_SECRET: randomBytes(16).toString('hex'),
  PROVIDER_REDIRECT_URI: 'https://portico.example.com/api/auth/partner/callback',
  PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
  PROVIDER_WEBHOOK_VERIFY_TOKEN: randomBytes(16).toString('hex'),
  TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
};

for (const backend of backends()) {
  describe(`cookies in production (${backend.name})`, () => {
    test('__Host- names, Secure, HttpOnly, SameSite=Lax, Path=/, no Domain; cleared the same way', async (t) => {
      const { app, services } = await buildTestApp(t, backend, PRODUCTION);
      const { email } = await portalWithPassword(services);
      const b = new Browser(app);
      const login = await b.get('/login');
      const loginCsrf = setCookies(login).find((c) => c.name === '__Host-portico_login_csrf');
      assert.ok(loginCsrf?.secure);
      const res = await b.post('/login', {
        email,
        password: 'correct horse battery staple',
        csrf: csrfOf(login.body),
      });
      assert.equal(res.statusCode, 303);
      const session = setCookies(res).find((c) => c.name === '__Host-portico_session');
      assert.ok(session, 'session cookie has the __Host- prefix');
      assert.equal(session.secure, true);
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite?.toLowerCase(), 'lax');
      assert.equal(session.path, '/');
      assert.equal(session.domain, undefined);
      assert.match(String(res.headers['content-security-policy']), /upgrade-insecure-requests/);
      assert.match(String(res.headers['strict-transport-security']), /max-age=/);

      const connect = await b.get('/connect');
      assert.equal(connect.statusCode, 200);
      assert.match(
        String(connect.headers['content-security-policy']),
        /form-action 'self' https:\/\/www\.facebook\.com/,
      );
      await b.post('/api/auth/partner/consent', { csrf: csrfOf(connect.body) });
      const start = await b.get('/api/auth/partner/start');
      assert.equal(start.statusCode, 302);
      assert.match(
        String(start.headers.location),
        /^https:\/\/www\.facebook\.com\/v21\.0\/dialog\/oauth\?/,
      );
      assert.ok(!String(start.headers.location).includes(PRODUCTION.PROVIDER_APP_SECRET));
      const state = setCookies(start).find((c) => c.name === '__Host-portico_oauth_state');
      assert.ok(state, 'state cookie has the __Host- prefix');
      assert.equal(state.secure, true);
      assert.equal(state.httpOnly, true);
      assert.equal(state.sameSite?.toLowerCase(), 'lax');
      assert.equal(state.path, '/');
      assert.equal(state.maxAge, 600);
      assert.equal(state.domain, undefined);
      assert.equal(
        setCookies(start).some((c) => c.name === 'portico_oauth_state'),
        false,
      );

      const cb = await b.get(callbackUrl({ error: 'access_denied', state: state.value }));
      const cleared = setCookies(cb).find((c) => c.name === '__Host-portico_oauth_state');
      assert.ok(cleared && isDeletion(cleared));
      // A __Host- cookie is only replaced (deleted) by one with Secure and Path=/.
      assert.equal(cleared.secure, true);
      assert.equal(cleared.path, '/');
    });
  });
}
