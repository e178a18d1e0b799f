/**
 * A portal's API keys through the API (`/keys`, scope `tokens:manage`): the rules of each key —
 * scopes a subset of the creator's, expiry, an IPv4/IPv6/CIDR allow-list behind a trusted
 * proxy, rotation with an overlap, revocation on every instance — and usage per key.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { hashApiToken } from '../../src/accounts/api-token.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { auditEvents } from '../../src/db/schema/index.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { eventually, openInstances } from '../helpers/instances.ts';
import { backends } from '../helpers/storage.ts';

const API = '/api/v1/external';

interface Call {
  method?: 'GET' | 'POST' | 'DELETE';
  url: string;
  token: string;
  body?: unknown;
  /** The socket's address (default 127.0.0.1) and an X-Forwarded-For header. */
  remoteAddress?: string;
  forwardedFor?: string;
}

async function call(app: FastifyInstance, c: Call) {
  const res = await app.inject({
    method: c.method ?? 'GET',
    url: `${API}${c.url}`,
    headers: {
      authorization: c.token,
      ...(c.forwardedFor ? { 'x-forwarded-for': c.forwardedFor } : {}),
    },
    ...(c.remoteAddress ? { remoteAddress: c.remoteAddress } : {}),
    ...(c.body !== undefined ? { payload: c.body as object } : {}),
  });
  return { status: res.statusCode, body: res.json(), raw: res.body };
}

async function createKey(app: FastifyInstance, token: string, body: object) {
  const res = await call(app, { method: 'POST', url: '/keys', token, body });
  assert.equal(res.status, 201, res.raw);
  return res.body.data as { key: { id: number; name: string }; secret: string };
}

for (const backend of backends()) {
  describe(`API keys (${backend.name})`, () => {
    test('the existing token is the first key; more keys each answer verify for themselves', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const listed = await call(app, { url: '/keys', token: portal.token });
      assert.equal(listed.status, 200);
      assert.equal(listed.body.data.items.length, 1);
      assert.equal(listed.body.data.items[0].name, 'Default');
      assert.equal(listed.body.data.items[0].hint, portal.token.slice(-4));

      const { key, secret } = await createKey(app, portal.token, {
        name: 'Billing server',
        scopes: ['messaging:send'],
        expiresAt: '2099-01-01T00:00:00Z',
        allowedIps: ['127.0.0.1', '2001:db8::/32'],
      });
      assert.match(secret, /^ptk_/);
      const verified = await call(app, { url: '/auth/verify', token: secret });
      assert.equal(verified.status, 200, verified.raw);
      assert.deepEqual(verified.body.data.scopes, ['messaging:send']);
      assert.deepEqual(verified.body.data.key, {
        id: key.id,
        name: 'Billing server',
        expiresAt: '2099-01-01T00:00:00.000Z',
        allowedIps: ['127.0.0.1/32', '2001:db8::/32'],
      });
      // The original token still answers as itself.
      const original = await call(app, { url: '/auth/verify', token: portal.token });
      assert.equal(original.body.data.key.name, 'Default');
      // The secret is never listed.
      const again = await call(app, { url: '/keys', token: portal.token });
      assert.equal(again.body.data.items.length, 2);
      assert.ok(!again.raw.includes(secret));
      assert.ok(!again.raw.includes(hashApiToken(secret)));
    });

    test('scopes: a key creates keys with a subset of its own scopes only, and needs tokens:manage', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services, {
        scopes: ['tokens:manage', 'support:tickets:read', 'crm:contacts:read'],
      });
      const beyond = await call(app, {
        method: 'POST',
        url: '/keys',
        token: portal.token,
        body: { name: 'Too much', scopes: ['support:tickets:read', 'messaging:send'] },
      });
      assert.equal(beyond.status, 400);
      assert.equal(beyond.body.error.code, 'invalid_request');
      assert.match(beyond.body.error.message, /messaging:send/);
      const unknown = await call(app, {
        method: 'POST',
        url: '/keys',
        token: portal.token,
        body: { name: 'Odd', scopes: ['root'] },
      });
      assert.equal(unknown.status, 400);

      const { secret } = await createKey(app, portal.token, {
        name: 'Reader',
        scopes: ['support:tickets:read'],
      });
      const refused = await call(app, { url: '/keys', token: secret });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'insufficient_scope');
      assert.deepEqual(refused.body.error.requiredScopes, ['tokens:manage']);
      const listed = await call(app, { url: '/keys', token: portal.token });
      assert.equal(listed.body.data.items.length, 2, 'the refused creations created nothing');
    });

    test('expiry: refused with 401 token_expired once past, from the cached principal; audited without the secret', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const past = await call(app, {
        method: 'POST',
        url: '/keys',
        token: portal.token,
        body: { name: 'Old', scopes: ['support:tickets:read'], expiresAt: '2020-01-01T00:00:00Z' },
      });
      assert.equal(past.status, 400, 'an expiry in the past is refused at creation');

      const expiresAt = new Date(Date.now() + 1_500).toISOString();
      const { key, secret } = await createKey(app, portal.token, {
        name: 'Short-lived',
        scopes: ['support:tickets:read'],
        expiresAt,
      });
      assert.equal((await call(app, { url: '/auth/verify', token: secret })).status, 200);
      assert.ok(services.tokenVerification.cache.has(hashApiToken(secret)), 'served from cache');
      await sleep(Date.parse(expiresAt) - Date.now() + 50);
      const expired = await call(app, { url: '/auth/verify', token: secret });
      assert.equal(expired.status, 401);
      assert.equal(expired.body.error.code, 'token_expired');
      assert.match(String(expired.body.error.message), /expired/);

      await services.tokenVerification.usage.settled();
      const rows = await services.storage.db
        .select()
        .from(auditEvents)
        .where(eq(auditEvents.action, 'api_key.refused'));
      assert.equal(rows.length, 1);
      assert.match(
        rows[0]!.reason ?? '',
        new RegExp(`API key ${key.id} \\(Short-lived\\).*expired`),
      );
      assert.ok(!JSON.stringify(rows).includes(secret));
      assert.ok(!JSON.stringify(rows).includes(hashApiToken(secret)));
    });

    test('allow-list: IPv4, IPv6 and CIDR ranges, the client address taken behind the trusted proxy', async (t) => {
      const { app, services } = await buildTestApp(t, backend, { TRUST_PROXY: '10.0.0.0/8' });
      const portal = await createPortal(services);
      const { secret } = await createKey(app, portal.token, {
        name: 'Servers',
        scopes: ['support:tickets:read'],
        allowedIps: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'],
      });
      const viaProxy = (client: string) =>
        call(app, {
          url: '/auth/verify',
          token: secret,
          remoteAddress: '10.1.2.3',
          forwardedFor: client,
        });
      for (const allowed of ['203.0.113.9', '2001:db8:ffff::1', '198.51.100.7']) {
        const res = await viaProxy(allowed);
        assert.equal(res.status, 200, `${allowed}: ${res.raw}`);
      }
      for (const outside of ['203.0.114.1', '2001:db9::1', '198.51.100.8']) {
        const res = await viaProxy(outside);
        assert.equal(res.status, 403, outside);
        assert.equal(res.body.error.code, 'ip_not_allowed');
        for (const entry of ['203.0.113', '2001:db8', '198.51.100.7'])
          assert.ok(!res.raw.includes(entry), `the refusal names nothing of the list (${entry})`);
      }
      // A client that is not a trusted proxy cannot claim an allowed address.
      const forged = await call(app, {
        url: '/auth/verify',
        token: secret,
        remoteAddress: '192.0.2.50',
        forwardedFor: '203.0.113.9',
      });
      assert.equal(forged.status, 403);
      // A dual-stack socket's IPv4-mapped address is matched as IPv4.
      const mapped = await call(app, {
        url: '/auth/verify',
        token: secret,
        remoteAddress: '::ffff:203.0.113.20',
      });
      assert.equal(mapped.status, 200, mapped.raw);
      const bad = await call(app, {
        method: 'POST',
        url: '/keys',
        token: portal.token,
        body: {
          name: 'Bad',
          scopes: ['support:tickets:read'],
          allowedIps: ['10.0.0.0/33', 'example.com'],
        },
      });
      assert.equal(bad.status, 400);
      assert.match(bad.body.error.message, /10\.0\.0\.0\/33.*example\.com/);
    });

    test('rotation: the previous secret works during the overlap, then stops; 0 stops it at once', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const { key, secret: first } = await createKey(app, portal.token, {
        name: 'Rotating',
        scopes: ['support:tickets:read'],
      });
      assert.equal((await call(app, { url: '/auth/verify', token: first })).status, 200);
      const tooLong = await call(app, {
        method: 'POST',
        url: `/keys/${key.id}/rotate`,
        token: portal.token,
        body: { overlapSeconds: 86_401 },
      });
      assert.equal(tooLong.status, 400);

      const rotated = await call(app, {
        method: 'POST',
        url: `/keys/${key.id}/rotate`,
        token: portal.token,
        body: { overlapSeconds: 1 },
      });
      assert.equal(rotated.status, 200, rotated.raw);
      const second = rotated.body.data.secret as string;
      assert.ok(rotated.body.data.key.previousSecretValidUntil);
      assert.equal((await call(app, { url: '/auth/verify', token: first })).status, 200);
      assert.equal((await call(app, { url: '/auth/verify', token: second })).status, 200);
      await sleep(Date.parse(rotated.body.data.key.previousSecretValidUntil) - Date.now() + 50);
      const stopped = await call(app, { url: '/auth/verify', token: first });
      assert.equal(stopped.status, 401);
      assert.equal(stopped.body.error.code, 'invalid_token');
      assert.equal((await call(app, { url: '/auth/verify', token: second })).status, 200);

      const again = await call(app, {
        method: 'POST',
        url: `/keys/${key.id}/rotate`,
        token: portal.token,
      });
      assert.equal(again.status, 200, again.raw);
      assert.equal((await call(app, { url: '/auth/verify', token: second })).status, 401);
      const other = await createPortal(services);
      const foreign = await call(app, {
        method: 'POST',
        url: `/keys/${key.id}/rotate`,
        token: other.token,
      });
      assert.equal(foreign.status, 404, "another portal's key is not found");
    });

    test('usage per key: requests per day by status class and operation, last use and address', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const { key, secret } = await createKey(app, portal.token, {
        name: 'Counted',
        scopes: ['support:tickets:read'],
      });
      for (let i = 0; i < 3; i++) await call(app, { url: '/auth/verify', token: secret });
      await call(app, { url: '/keys', token: secret }); // 403: no tokens:manage
      await services.tokenVerification.usage.settled();
      const res = await call(app, { url: `/keys/${key.id}/usage?days=7`, token: portal.token });
      assert.equal(res.status, 200, res.raw);
      const usage = res.body.data;
      assert.equal(usage.days.length, 7);
      const today = usage.days.at(-1);
      assert.equal(today.day, new Date().toISOString().slice(0, 10));
      assert.equal(today.requests, 4);
      assert.deepEqual(today.byStatusClass, { '2xx': 3, '3xx': 0, '4xx': 1, '5xx': 0 });
      assert.deepEqual(usage.operations, [
        { operation: 'GET /api/v1/external/auth/verify', statusClass: '2xx', requests: 3 },
        { operation: 'GET /api/v1/external/keys', statusClass: '4xx', requests: 1 },
      ]);
      assert.equal(usage.lastUsedIp, '127.0.0.1');
      assert.ok(usage.lastUsedAt);
    });

    test('revocation: the key is refused at once here and on every other instance', async (t) => {
      const [a, b] = await openInstances(t, backend, 2);
      const portal = await createPortal(a!.services);
      const { key, secret } = await createKey(a!.app, portal.token, {
        name: 'Doomed',
        scopes: ['support:tickets:read'],
      });
      for (const instance of [a!, b!]) {
        for (let i = 0; i < 2; i++)
          assert.equal(
            (await call(instance.app, { url: '/auth/verify', token: secret })).status,
            200,
          );
        assert.ok(instance.services.tokenVerification.cache.has(hashApiToken(secret)));
      }
      const revoked = await call(a!.app, {
        method: 'DELETE',
        url: `/keys/${key.id}`,
        token: portal.token,
      });
      assert.equal(revoked.status, 200, revoked.raw);
      assert.deepEqual(revoked.body.data, { id: key.id, revoked: true });
      assert.equal((await call(a!.app, { url: '/auth/verify', token: secret })).status, 401);
      await eventually(
        async () => (await call(b!.app, { url: '/auth/verify', token: secret })).status === 401,
        'B refuses the revoked key',
      );
      // The portal's other key is untouched.
      assert.equal((await call(b!.app, { url: '/auth/verify', token: portal.token })).status, 200);
      const gone = await call(a!.app, {
        method: 'DELETE',
        url: `/keys/${key.id}`,
        token: portal.token,
      });
      assert.equal(gone.status, 404);
      await a!.services.apiKeys
        .revoke({ portalId: portal.portalId, keyId: key.id, actor: CLI_ACTOR })
        .then(
          () => assert.fail('revoked twice'),
          (err: Error) => assert.match(err.message, /No API key/),
        );
    });
  });
}
