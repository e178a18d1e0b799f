import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { sessions } from '../../src/db/schema/index.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, setCookies, TEST_PASSWORD } from '../helpers/web.ts';

for (const backend of backends()) {
  describe(`web sign-in and sessions (${backend.name})`, () => {
    test('a page that needs a session sends to /login and back to it afterwards', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      const b = new Browser(app);
      const settings = await b.get('/settings');
      assert.equal(settings.statusCode, 302);
      assert.equal(settings.headers.location, '/login?next=%2Fsettings');
      const connect = await b.get('/connect');
      assert.equal(connect.headers.location, '/login?next=%2Fconnect');

      const login = await b.get('/login?next=%2Fconnect');
      assert.equal(login.statusCode, 200);
      assert.match(String(login.headers['content-type']), /^text\/html/);
      assert.match(login.body, /<input type="hidden" name="next" value="\/connect"/);
      const res = await b.post('/login', {
        email,
        password: TEST_PASSWORD,
        csrf: csrfOf(login.body),
        next: '/connect',
      });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/connect');
      assert.equal((await b.get('/connect')).statusCode, 200);
    });

    test('the session cookie: name and attributes (parsed from Set-Cookie)', async (t) => {
      const { app, services } = await buildTestApp(t, backend, { SESSION_TTL_SECONDS: '3600' });
      const { email } = await portalWithPassword(services);
      const b = new Browser(app);
      const res = await b.signIn(email);
      const session = setCookies(res).find((c) => c.name === 'portico_session');
      assert.ok(session);
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite?.toLowerCase(), 'lax');
      assert.equal(session.path, '/');
      assert.equal(session.secure, undefined, 'not Secure outside production');
      assert.equal(session.domain, undefined);
      assert.equal(session.maxAge, 3600);
      assert.match(session.value, /^[A-Za-z0-9_-]{43}$/);
      // The sign-in CSRF cookie is dropped once signed in.
      assert.ok(setCookies(res).some((c) => c.name === 'portico_login_csrf' && c.maxAge === 0));
    });

    test('the session id is stored only as its hash', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(email);
      const id = b.jar.get('portico_session')!;
      const rows = await services.storage.db.select().from(sessions);
      assert.equal(rows.length, 1);
      assert.doesNotMatch(JSON.stringify(rows), new RegExp(id));
      assert.match(rows[0]!.idHash, /^[0-9a-f]{64}$/);
    });

    test('a wrong password or unknown email gets one generic message and no session', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      for (const [who, password] of [
        [email, 'not the password at all'],
        ['nobody@example.test', TEST_PASSWORD],
        [email, ''],
        ['not an email', TEST_PASSWORD],
      ] as const) {
        const b = new Browser(app);
        const page = await b.get('/login');
        const res = await b.post('/login', { email: who, password, csrf: csrfOf(page.body) });
        assert.equal(res.statusCode, 401, who);
        assert.match(res.body, /The email or password is not right\./);
        assert.equal(b.jar.has('portico_session'), false);
        assert.equal((await b.get('/settings')).statusCode, 302);
      }
    });

    test('a user without a password cannot sign in', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { portalCode } = await portalWithPassword(services);
      await services.accounts.createUser({
        portalCode,
        email: 'nopass@example.test',
        mainAdmin: false,
      });
      const b = new Browser(app);
      const page = await b.get('/login');
      const res = await b.post('/login', {
        email: 'nopass@example.test',
        password: '',
        csrf: csrfOf(page.body),
      });
      assert.equal(res.statusCode, 401);
    });

    test('sign-in without the form token (login CSRF) is refused', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      const b = new Browser(app);
      // No cookie at all: a cross-site form post.
      const noCookie = await b.post('/login', {
        email,
        password: TEST_PASSWORD,
        csrf: 'x'.repeat(43),
      });
      assert.equal(noCookie.statusCode, 403);
      assert.equal(b.jar.has('portico_session'), false);
      // A cookie but a wrong field.
      await b.get('/login');
      const wrong = await b.post('/login', {
        email,
        password: TEST_PASSWORD,
        csrf: 'y'.repeat(43),
      });
      assert.equal(wrong.statusCode, 403);
      assert.equal(b.jar.has('portico_session'), false);
    });

    test('next accepts only same-site paths', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      for (const next of [
        '//evil.example/x',
        '/\\evil.example',
        'https://evil.example/',
        'javascript:alert(1)',
        '/ok\nLocation: x',
        `/${'a'.repeat(600)}`,
      ]) {
        const b = new Browser(app);
        const res = await b.signIn(email, TEST_PASSWORD, next);
        assert.equal(res.headers.location, '/settings', JSON.stringify(next));
      }
    });

    test('sign-out needs the CSRF token, then ends the session', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(email);
      const page = await b.get('/settings');
      assert.equal(page.statusCode, 200);
      const refused = await b.post('/logout', {});
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /This form has expired/);
      assert.equal((await b.get('/settings')).statusCode, 200, 'still signed in');
      const id = b.jar.get('portico_session')!;
      const out = await b.post('/logout', { csrf: csrfOf(page.body) });
      assert.equal(out.statusCode, 303);
      assert.equal(out.headers.location, '/login');
      assert.equal(b.jar.has('portico_session'), false, 'cookie cleared');
      // The old id no longer works even if a copy was kept.
      const replay = await app.inject({
        url: '/settings',
        headers: { cookie: `portico_session=${id}` },
      });
      assert.equal(replay.statusCode, 302);
    });

    test('every sign-in gets a new session id; the previous one ends', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      const b = new Browser(app);
      // Two tabs open /login before signing in; both forms carry the same double-submit token.
      const tab1 = await b.get('/login');
      const tab2 = await b.get('/login');
      assert.equal(csrfOf(tab1.body), csrfOf(tab2.body));
      const form = { email, password: TEST_PASSWORD, csrf: csrfOf(tab1.body) };
      const cookie = b.jar.get('portico_login_csrf')!;
      assert.equal((await b.post('/login', form)).statusCode, 303);
      const first = b.jar.get('portico_session')!;
      // The second tab submits later (its cookie is back, as the browser still had the page).
      b.jar.set('portico_login_csrf', cookie);
      assert.equal((await b.post('/login', form)).statusCode, 303);
      const second = b.jar.get('portico_session')!;
      assert.notEqual(second, first);
      const old = await app.inject({
        url: '/settings',
        headers: { cookie: `portico_session=${first}` },
      });
      assert.equal(old.statusCode, 302, 'the previous session ended');
      assert.equal((await b.get('/settings')).statusCode, 200);
      // Signed in, /login goes straight home.
      assert.equal((await b.get('/login')).headers.location, '/settings');
    });

    test('an expired session sends back to /login', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { email } = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(email);
      assert.equal((await b.get('/settings')).statusCode, 200);
      await services.storage.db
        .update(sessions)
        .set({ expiresAt: sql`now() - interval '1 second'` });
      const res = await b.get('/settings');
      assert.equal(res.statusCode, 302);
      assert.equal(res.headers.location, '/login?next=%2Fsettings');
      assert.equal(b.jar.has('portico_session'), false, 'the dead cookie is cleared');
    });

    test('garbage session cookies are ignored', async (t) => {
      const { app } = await buildTestApp(t, backend);
      for (const cookie of [
        'portico_session=',
        'portico_session=abc',
        `portico_session=${'A'.repeat(43)}`,
        `portico_session=${'%00'.repeat(40)}`,
      ]) {
        const res = await app.inject({ url: '/settings', headers: { cookie } });
        assert.equal(res.statusCode, 302, cookie);
      }
    });

    test('pages send the security headers', async (t) => {
      const { app } = await buildTestApp(t, backend);
      const res = await app.inject({ url: '/login' });
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'/);
      assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
      assert.equal(res.headers['cache-control'], 'no-store');
      const css = await app.inject({ url: '/assets/portico.css' });
      assert.equal(css.statusCode, 200);
      assert.match(String(css.headers['content-type']), /^text\/css/);
    });
  });
}
