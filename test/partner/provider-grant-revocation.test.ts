/**
 * Disconnect (and a refused grant) revokes the app's permissions at the provider, after the
 * local cleanup; a failure there is retried a bounded number of times and never blocks the
 * local revocation. Over real HTTP to the sandbox provider.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { providerSettings } from '../../src/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createProviderClient } from '../../src/partner/provider-client.ts';
import { createGrantRevoker } from '../../src/partner/revocation/provider-grant-revocation.ts';
import { captureLogs, testConfig } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import {
  allow,
  buildFlowApp,
  callbackUrl,
  signedInBrowser,
  startAuthorization,
  startFlowSandbox,
  type FlowApp,
} from '../helpers/web-flow.ts';
import { csrfOf, type Browser } from '../helpers/web.ts';

const PERSON = '100012345678'; // the sandbox dialog's default person

async function connect(flow: FlowApp, browser: Browser, permissions?: string[]) {
  const { state } = await startAuthorization(browser);
  return browser.get(callbackUrl({ code: allow(flow, permissions ? { permissions } : {}), state }));
}

/** Wait for the background revocations to end, with a deadline. */
async function settled(flow: FlowApp, ms = 20_000) {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    flow.services.partner.grantRevocationsSettled(),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`grant revocation not settled in ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

for (const backend of backends()) {
  describe(`grant revocation at the provider (${backend.name})`, () => {
    test('disconnect: local cleanup first, then the grant and its tokens are gone at the provider', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      assert.equal((await connect(flow, browser)).headers.location, '/authorized');
      assert.ok(flow.sandbox.hasGrant(flow.appId, PERSON));
      assert.ok(flow.sandbox.tokensOf(flow.appId, PERSON).length > 0);
      const page = await browser.get('/settings');
      const res = await browser.post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: csrfOf(page.body),
      });
      assert.equal(res.headers.location, '/settings?done=disconnected');
      assert.equal(
        (await flow.services.partner.connectionSummary(portal.portalId)).status,
        'inactive',
      );
      await settled(flow);
      assert.equal(flow.sandbox.hasGrant(flow.appId, PERSON), false, 'grant gone at the provider');
      assert.deepEqual(flow.sandbox.tokensOf(flow.appId, PERSON), [], 'no live token left');
      const call = flow.sandbox.calls.find((c) => c.method === 'DELETE');
      assert.equal(call?.url, `/v21.0/${PERSON}/permissions`, 'the token is not in the URL');
      assert.ok(!flow.logs.some((l) => l.includes('SBXT')), 'no token in a log line');
    });

    test('a grant Portico refuses (declined permission) is revoked at the provider', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const res = await connect(flow, browser, ['business_management']);
      assert.match(String(res.headers.location), /^\/auth-error\?reason=permission/);
      await settled(flow);
      assert.equal(flow.sandbox.hasGrant(flow.appId, PERSON), false);
      assert.deepEqual(flow.sandbox.tokensOf(flow.appId, PERSON), []);
    });

    test('a grant another portal’s connection uses is left alone at the provider', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const a = await signedInBrowser(flow);
      const b = await signedInBrowser(flow);
      await connect(flow, a.browser);
      await connect(flow, b.browser); // the same person connects a second portal
      const page = await a.browser.get('/settings');
      await a.browser.post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: csrfOf(page.body),
      });
      // A declined attempt by the same person must not kill b's connection either.
      const c = await signedInBrowser(flow);
      await connect(flow, c.browser, ['business_management']);
      await settled(flow);
      assert.ok(flow.sandbox.hasGrant(flow.appId, PERSON), 'b still uses the grant');
      const profile = await flow.services.partner.fetchProviderProfile(b.portal.portalId);
      assert.equal(profile.id, PERSON, 'b’s token still works');
    });
  });
}

describe('grant revocation retries', () => {
  /** A gate in front of the sandbox that answers 503 to the first `failures` requests. */
  async function flakyGate(
    t: { after: (fn: () => unknown) => void },
    target: string,
    failures: number,
  ) {
    let seen = 0;
    const server: Server = createServer((req, res) => {
      seen++;
      if (seen <= failures) {
        res.writeHead(503).end('busy');
        return;
      }
      void fetch(`${target}${req.url}`, {
        method: req.method ?? 'GET',
        headers: { authorization: String(req.headers.authorization ?? '') },
      }).then(async (r) =>
        res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => server.close(resolve)));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen: () => seen };
  }

  async function tokenOf(sandbox: Awaited<ReturnType<typeof startFlowSandbox>>) {
    const code = sandbox.sandbox.authorize({
      appId: sandbox.appId,
      redirectUri: sandbox.env.PROVIDER_REDIRECT_URI,
    });
    const client = createProviderClient(providerSettings(testConfig(sandbox.env))!);
    return (await client.exchangeCode(code)).accessToken;
  }

  test('an unavailable provider is retried until it answers; the token never reaches a log', async (t) => {
    const sandbox = await startFlowSandbox(t);
    const token = await tokenOf(sandbox);
    const gate = await flakyGate(t, sandbox.sandbox.url, 2);
    const { logs, stream } = captureLogs();
    const client = createProviderClient(
      providerSettings(testConfig({ ...sandbox.env, PROVIDER_GRAPH_BASE_URL: gate.url }))!,
    );
    const revoker = createGrantRevoker({
      client,
      log: createLogger('info', stream),
      retryDelaysMs: [50, 50, 50],
    });
    // The first attempt ends (failed, retries go on); then every retry.
    await revoker.revoke({ portalId: 1, accessToken: token, providerUserId: PERSON });
    assert.equal(gate.seen(), 1, 'the promise settles after the first attempt');
    await revoker.settled();
    assert.equal(gate.seen(), 3, 'two failures, then success');
    assert.equal(sandbox.sandbox.hasGrant(sandbox.appId, PERSON), false);
    assert.ok(logs.some((l) => l.includes('grant revoked at the provider')));
    assert.ok(!logs.some((l) => l.includes(token)));
  });

  test('retries are bounded: a provider that stays down is given up after the last attempt', async (t) => {
    const sandbox = await startFlowSandbox(t);
    const token = await tokenOf(sandbox);
    const gate = await flakyGate(t, sandbox.sandbox.url, 1000);
    const { logs, stream } = captureLogs();
    const client = createProviderClient(
      providerSettings(testConfig({ ...sandbox.env, PROVIDER_GRAPH_BASE_URL: gate.url }))!,
    );
    const revoker = createGrantRevoker({
      client,
      log: createLogger('info', stream),
      retryDelaysMs: [20, 20],
    });
    await revoker.revoke({ portalId: 1, accessToken: token, providerUserId: PERSON });
    await revoker.settled();
    assert.equal(gate.seen(), 3, 'one attempt and two retries');
    assert.ok(logs.some((l) => l.includes('grant revocation given up')));
    assert.ok(sandbox.sandbox.hasGrant(sandbox.appId, PERSON), 'still granted: logged, not hidden');
  });
});
