/**
 * `/settings/keys` refusals, in process on each storage: a forged form, an ordinary user of the
 * portal and another portal's key change nothing; a bad overlap or expiry is refused in words;
 * the secret never reaches a URL, and the created key's audit row names the user.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

for (const backend of backends()) {
  describe(`/settings/keys (${backend.name})`, () => {
    test('refusals change nothing; another portal’s key is not found', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const admin = await portalWithPassword(services);
      const other = await portalWithPassword(services);
      const portalId = await services.accounts.portalIdFor(admin.portalCode);
      const otherId = await services.accounts.portalIdFor(other.portalCode);
      const [otherKey] = await services.apiKeys.list(otherId);
      const browser = new Browser(app);
      await browser.signIn(admin.email);
      const page = await browser.get('/settings/keys');
      assert.equal(page.statusCode, 200);
      const csrf = csrfOf(page.body);
      const before = await services.apiKeys.list(portalId);

      const created = await browser.post('/settings/keys', {
        csrf,
        name: 'Exports',
        scopes: ['support:tickets:read'],
        expiresOn: '2099-12-31',
        allowedIps: '203.0.113.0/24\n2001:db8::/32',
      });
      assert.equal(created.statusCode, 303);
      const location = String(created.headers.location);
      assert.match(location, /^\/settings\/keys\?done=key_created&key=\d+$/);
      const shown = await browser.get(location);
      const secret =
        /data-testid="new-key-secret"[^>]*value="(ptk_[^"]+)"|value="(ptk_[^"]+)"[^>]*data-testid="new-key-secret"/.exec(
          shown.body,
        );
      assert.ok(secret, 'the secret is shown once');
      const keys = await services.apiKeys.list(portalId);
      const made = keys.find((k) => k.name === 'Exports')!;
      assert.deepEqual(made.allowedIps, ['203.0.113.0/24', '2001:db8::/32']);
      assert.equal(made.expiresAt, '2099-12-31T00:00:00.000Z');
      assert.doesNotMatch((await browser.get(location)).body, /new-key-secret/, 'once only');

      const refusals: [string, Record<string, string | string[]>, RegExp][] = [
        ['/settings/keys', { csrf, name: 'x', expiresOn: 'soon', scopes: 'events:read' }, /date/],
        ['/settings/keys', { csrf, name: 'x', scopes: 'no:such' }, /Unknown scope/],
        [
          '/settings/keys',
          { csrf, name: 'x', scopes: 'events:read', allowedIps: '1.2.3' },
          /1\.2\.3/,
        ],
        [
          `/settings/keys/${made.id}/rotate`,
          { csrf, confirm: 'yes', overlap: '90000' },
          /24 hours/,
        ],
      ];
      for (const [url, form, message] of refusals) {
        const res = await browser.post(url, form);
        assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(form)}`);
        assert.match(res.body, message);
      }
      assert.equal((await services.apiKeys.list(portalId)).length, before.length + 1);

      // Another portal's key: not found, and still there.
      for (const action of ['rotate', 'revoke']) {
        const res = await browser.post(`/settings/keys/${otherKey!.id}/${action}`, {
          csrf,
          confirm: 'yes',
        });
        assert.equal(res.statusCode, 404, action);
        assert.equal(
          (await browser.get(`/settings/keys/${otherKey!.id}/${action}`)).statusCode,
          404,
        );
      }
      assert.equal((await services.apiKeys.get(otherId, otherKey!.id)).hint, otherKey!.hint);

      const forged = await browser.post(`/settings/keys/${made.id}/revoke`, {
        csrf: 'wrong',
        confirm: 'yes',
      });
      assert.equal(forged.statusCode, 403);

      // An ordinary user of the portal sees nothing and changes nothing.
      const email = `user-${Math.random().toString(36).slice(2)}@example.test`;
      await services.accounts.createUser({ portalCode: admin.portalCode, email, mainAdmin: false });
      await services.accounts.setPassword({
        portalCode: admin.portalCode,
        email,
        password: TEST_PASSWORD,
      });
      const user = new Browser(app);
      await user.signIn(email);
      assert.equal((await user.get('/settings/keys')).statusCode, 403);
      const settings = await user.get('/settings');
      const userRevoke = await user.post(`/settings/keys/${made.id}/revoke`, {
        csrf: csrfOf(settings.body),
        confirm: 'yes',
      });
      assert.equal(userRevoke.statusCode, 403);
      assert.ok((await services.apiKeys.list(portalId)).some((k) => k.id === made.id));

      const revoked = await browser.post(`/settings/keys/${made.id}/revoke`, {
        csrf,
        confirm: 'yes',
      });
      assert.equal(revoked.statusCode, 303);
      assert.equal(revoked.headers.location, '/settings/keys?done=key_revoked');
      assert.ok(!(await services.apiKeys.list(portalId)).some((k) => k.id === made.id));
    });
  });
}
