/**
 * Behind a load balancer the OAuth start and the callback can land on different instances:
 * everything the callback needs is in the state cookie and the database (the session), nothing
 * in one instance's memory.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { startSandboxProvider } from '../../src/sandbox-provider/sandbox-provider.tsx';
import { openInstances } from '../helpers/instances.ts';
import { backends } from '../helpers/storage.ts';
import { APP_ORIGIN, callbackUrl, REDIRECT_URI, startAuthorization } from '../helpers/web-flow.ts';
import { Browser, portalWithPassword } from '../helpers/web.ts';

for (const backend of backends()) {
  describe(`OAuth across instances (${backend.name})`, () => {
    test('start on instance A, callback on instance B: connected, readable on both', async (t) => {
      const appId = `1${randomBytes(6).readUIntBE(0, 6)}`;
      const appSecret = randomBytes(24).toString('hex');
      const sandbox = await startSandboxProvider({
        host: '127.0.0.1',
        port: 0,
        apps: [{ appId, appSecret, redirectUris: [REDIRECT_URI] }],
      });
      t.after(() => sandbox.close());
      const [a, b] = await openInstances(t, backend, 2, {
        APP_BASE_URL: APP_ORIGIN,
        PROVIDER_APP_ID: appId,
        PROVIDER_APP_SECRET: appSecret,
        PROVIDER_AUTHORIZATION_BASE_URL: sandbox.url,
        PROVIDER_GRAPH_BASE_URL: sandbox.url,
        PROVIDER_REDIRECT_URI: REDIRECT_URI,
        PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
        // The instances share the encryption key, as they would from a secret manager.
        TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      });
      const portal = await portalWithPassword(a!.services);

      const onA = new Browser(a!.app);
      await onA.signIn(portal.email);
      const { state } = await startAuthorization(onA);
      const code = sandbox.authorize({ appId, redirectUri: REDIRECT_URI });

      // The load balancer sends the provider's redirect to B, with the browser's cookies.
      const onB = new Browser(b!.app);
      for (const [name, value] of onA.jar) onB.jar.set(name, value);
      const callback = await onB.get(callbackUrl({ state, code }));
      assert.equal(callback.statusCode, 302, callback.body);
      assert.equal(callback.headers.location, '/authorized');

      for (const instance of [a!, b!]) {
        const summary = await instance.services.partner.connectionSummary(portal.portalId);
        assert.equal(summary.status, 'active');
      }
      // The state cookie was cleared by B.
      assert.equal(onB.jar.has('portico_oauth_state'), false);
    });
  });
}
