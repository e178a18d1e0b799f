/**
 * A password change ends every session of the user; `user sign-out` ends them on demand; the
 * settings page shows how many are live.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCommand } from '../../src/cli/commands.ts';
import { UsageError } from '../../src/platform/errors.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

for (const backend of backends()) {
  describe(`sessions of a user (${backend.name})`, () => {
    test('user set-password signs the user out everywhere; other users stay signed in', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const other = await portalWithPassword(services);
      const laptop = new Browser(app);
      const phone = new Browser(app);
      const colleague = new Browser(app);
      await laptop.signIn(portal.email);
      await phone.signIn(portal.email);
      await colleague.signIn(other.email);
      const settings = await laptop.get('/settings');
      assert.match(settings.body, /data-testid="active-sessions">Signed in on 2 browsers/);

      const result = await runCommand(services, 'user set-password', {
        portal: portal.portalCode,
        email: portal.email,
        password: 'a brand new password',
      });
      assert.deepEqual(result, { userId: portal.userId, email: portal.email, endedSessions: 2 });
      for (const browser of [laptop, phone]) {
        const res = await browser.get('/settings');
        assert.equal(res.statusCode, 302, 'signed out');
        assert.match(String(res.headers.location), /^\/login/);
      }
      assert.equal((await colleague.get('/settings')).statusCode, 200, 'another user untouched');
      // The new password works; the old one does not.
      assert.equal(await services.accounts.authenticatePassword(portal.email, TEST_PASSWORD), null);
      await laptop.signIn(portal.email, 'a brand new password');
      const again = await laptop.get('/settings');
      assert.match(again.body, /data-testid="active-sessions">Signed in on 1 browser \(this one\)/);
    });

    test('user sign-out ends every session of that user, and only theirs', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const other = await portalWithPassword(services);
      const a1 = new Browser(app);
      const a2 = new Browser(app);
      const b = new Browser(app);
      await a1.signIn(portal.email);
      await a2.signIn(portal.email);
      await b.signIn(other.email);
      const result = await runCommand(services, 'user sign-out', {
        portal: portal.portalCode,
        email: portal.email.toUpperCase(),
      });
      assert.deepEqual(result, { userId: portal.userId, email: portal.email, endedSessions: 2 });
      assert.equal((await a1.get('/settings')).statusCode, 302);
      assert.equal((await a2.get('/settings')).statusCode, 302);
      assert.equal((await b.get('/settings')).statusCode, 200);
      // The password still works: sign-out is not a password reset.
      await a1.signIn(portal.email);
      const none = await runCommand(services, 'user sign-out', {
        portal: other.portalCode,
        email: portal.email,
      }).catch((err: unknown) => err);
      assert.ok(none instanceof UsageError, 'a user of another portal is refused');
      assert.match(none.message, /has no user/);
      assert.equal((await a1.get('/settings')).statusCode, 200, 'nothing changed by the refusal');
    });
  });
}
