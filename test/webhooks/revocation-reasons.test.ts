/**
 * Every revocation path reaches the portal's webhook endpoint as `connection.revoked` with its
 * own reason code, and the audit log with that code's words: a Disconnect on the settings page,
 * the provider's deauthorize and data-deletion callbacks (the sandbox's "remove the app" and
 * "delete my data", over real HTTP to the listening app), and a send meeting Graph error 190
 * (the token revoked at the sandbox while the message waited in the queue).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CLI_ACTOR, listAuditEvents } from '../../src/audit/audit-log.ts';
import { revocationWords, type RevocationReason } from '../../src/partner/revocation/revocation.ts';
import { CONNECTION_REVOKED_REASONS } from '../../src/webhooks/webhook-events.ts';
import { buildTestApp, type TestApp } from '../helpers/app.ts';
import { hello, MESSAGES } from '../helpers/messaging.ts';
import { ROOT } from '../helpers/root.ts';
import { connectPortal, startTestProvider, type TestProvider } from '../helpers/provider.ts';
import { backends, type Backend } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';
import { startReceiver, type Receiver } from './receiver.ts';

const PROVIDER_USER = '100088';

const FAST = {
  retryScheduleMs: [0, 50, 50],
  attemptTimeoutMs: 2_000,
  addressPolicy: 'development-any-address' as const,
};

interface Connected extends TestApp {
  p: TestProvider;
  receiver: Receiver;
  portal: Awaited<ReturnType<typeof portalWithPassword>>;
  portalId: number;
}

/**
 * A listening app the sandbox can call back, a portal (main administrator with a password)
 * connected as PROVIDER_USER, and an endpoint subscribed to `connection.revoked` with the
 * webhooks' worker running.
 */
async function connected(t: Parameters<typeof buildTestApp>[0], backend: Backend) {
  const p = await startTestProvider(t);
  const built = await buildTestApp(t, backend, p.env, {}, { webhooks: FAST });
  const url = await built.app.listen({ host: '127.0.0.1', port: 0 });
  p.sandbox.configureApp(p.appId, {
    deauthorizeCallbackUrl: `${url}/api/auth/partner/deauthorize`,
    dataDeletionCallbackUrl: `${url}/api/auth/partner/data-deletion`,
  });
  const receiver = await startReceiver();
  t.after(() => receiver.close());
  const { services } = built;
  const portal = await portalWithPassword(services);
  const portalId = await services.accounts.portalIdFor(portal.portalCode);
  await services.webhooks.start();
  await services.webhooks.startWorker();
  const { secret } = await services.webhooks.addEndpoint(
    portalId,
    { url: receiver.url, eventTypes: ['connection.revoked'] },
    { actor: CLI_ACTOR },
  );
  receiver.secrets.push(secret);
  const result = await connectPortal(services, p, {
    portalId,
    userId: portal.userId,
    providerUserId: PROVIDER_USER,
  });
  assert.deepEqual(result, { ok: true });
  return { ...built, p, receiver, portal, portalId } satisfies Connected;
}

/** The one `connection.revoked` delivered, verified, carries `reason`; the audit has its words. */
async function assertRevokedWith(c: Connected, reason: RevocationReason, words: RegExp) {
  const [delivery] = await c.receiver.waitFor(1);
  assert.ok(delivery!.event, 'the delivery verifies');
  assert.equal(delivery!.event.type, 'connection.revoked');
  assert.equal(delivery!.event.data.reason, reason);
  assert.match(String(delivery!.event.data.revokedAt), /^\d{4}-\d{2}-\d{2}T/);
  const revocations = (await listAuditEvents(c.services.storage.db, c.portalId)).filter(
    (e) => e.action === 'connection.revoked',
  );
  assert.equal(revocations.length, 1);
  assert.ok(revocations[0]!.reason?.startsWith(revocationWords(reason)), revocations[0]!.reason!);
  assert.match(revocations[0]!.reason ?? '', words);
  assert.equal(c.receiver.received.length, 1, 'one event per revocation');
}

test('docs/webhooks.md lists exactly the reason codes of connection.revoked', () => {
  const docs = readFileSync(join(ROOT, 'docs/webhooks.md'), 'utf8');
  const paragraph = docs.split('\n\n').find((p) => p.startsWith("`connection.revoked`'s `reason`"));
  const listed = [...(paragraph ?? '').matchAll(/`([a-z_]+)`/g)]
    .map((m) => m[1]!)
    .filter((code) => code !== 'reason');
  assert.deepEqual([...listed].sort(), [...CONNECTION_REVOKED_REASONS].sort());
});

for (const backend of backends()) {
  describe(`connection.revoked carries each path's reason code (${backend.name})`, () => {
    test('Disconnect on the settings page → disconnect', async (t) => {
      const c = await connected(t, backend);
      const browser = new Browser(c.app);
      await browser.signIn(c.portal.email);
      const confirm = await browser.get('/settings/disconnect');
      const res = await browser.post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: csrfOf(confirm.body),
      });
      assert.equal(res.headers.location, '/settings?done=disconnected');
      await assertRevokedWith(c, 'disconnect', /^disconnected by a user in Portico$/);
    });

    test('the app removed at the provider (deauthorize callback) → deauthorize', async (t) => {
      const c = await connected(t, backend);
      assert.equal((await c.p.sandbox.removeApp(c.p.appId, PROVIDER_USER)).status, 200);
      await assertRevokedWith(c, 'deauthorize', /removed in the provider account settings/);
    });

    test('a data deletion request (data-deletion callback) → data_deletion', async (t) => {
      const c = await connected(t, backend);
      assert.equal((await c.p.sandbox.deleteData(c.p.appId, PROVIDER_USER)).status, 200);
      await assertRevokedWith(c, 'data_deletion', /delete their data/);
    });

    test('a send meeting Graph error 190 → dead_token', async (t) => {
      const c = await connected(t, backend);
      const { services } = c;
      await services.messaging.addCredit({
        portalId: c.portalId,
        amount: 100,
        note: 'test',
        actor: CLI_ACTOR,
      });
      await services.messaging.start();
      const [from] = (await services.messagingProvider.numbers(c.portalId)).map((n) => n.id);
      const sent = await c.app.inject({
        method: 'POST',
        url: MESSAGES,
        headers: { authorization: c.portal.token },
        payload: hello('+16505550190', from!),
      });
      assert.equal(sent.statusCode, 202, sent.body);
      // The token dies at the provider while the message waits; the worker's send meets 190.
      c.p.sandbox.revokeTokens(c.p.appId, PROVIDER_USER);
      await services.messaging.startWorkers();
      await assertRevokedWith(c, 'dead_token', /\(error 190\) during message send$/);
    });
  });
}
