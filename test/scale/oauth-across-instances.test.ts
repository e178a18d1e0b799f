/**
 * Behind a load balancer the OAuth start and the callback can land on different instances:
 * everything the callback needs is in the state cookie and the database (the session), nothing
 * in one instance's memory.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openInstances } from '../helpers/instances.ts';
import { backends } from '../helpers/storage.ts';
import {
  callbackUrl,
  REDIRECT_URI,
  startAuthorization,
  startFlowSandbox,
} from '../helpers/web-flow.ts';
import { Browser, portalWithPassword } from '../helpers/web.ts';

for (const backend of backends()) {
  describe(`OAuth across instances (${backend.name})`, () => {
    test('start on instance A, callback on instance B: connected, readable on both', async (t) => {
      const { sandbox, appId, env } = await startFlowSandbox(t);
      // The instances share the encryption key, as they would from a secret manager.
      const [a, b] = await openInstances(t, backend, 2, env);
      const portal = await portalWithPassword(a!.services);

      const onA = new Browser(a!.app);
      await onA.signIn(portal.email);
      const { state, location } = await startAuthorization(onA);
      const code = sandbox.authorize({
        appId,
        redirectUri: REDIRECT_URI,
        codeChallenge: location.searchParams.get('code_challenge') ?? undefined,
      });

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
