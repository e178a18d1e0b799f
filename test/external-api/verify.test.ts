import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateApiToken } from '../../src/accounts/api-token.ts';
import { SCOPES } from '../../src/accounts/scopes.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const VERIFY = '/api/v1/external/auth/verify';

for (const backend of backends()) {
  describe(`GET /auth/verify (${backend.name})`, () => {
    test('answers the spec body with either header method', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services, { code: '4242' });
      for (const headers of [
        { authorization: portal.token },
        { authorization: `Bearer ${portal.token}` },
        { 'x-api-key': portal.token },
      ]) {
        const res = await app.inject({
          url: VERIFY,
          headers: { ...headers, accept: 'application/json' },
        });
        assert.equal(res.statusCode, 200);
        assert.match(res.headers['content-type'] as string, /^application\/json/);
        assert.deepEqual(res.json(), {
          success: true,
          data: {
            portalCode: '4242',
            userId: portal.userId,
            isMainAdmin: true,
            scopes: [...SCOPES],
            key: {
              id: res.json().data.key.id,
              name: 'Default',
              expiresAt: null,
              allowedIps: null,
            },
          },
        });
        assert.ok(res.headers['x-request-id']);
        // A JSON API answer: nosniff, none of the HTML pages' headers.
        assert.equal(res.headers['x-content-type-options'], 'nosniff');
        assert.equal(res.headers['content-security-policy'], undefined);
      }
      // HEAD: the same status and headers, no body.
      const get = await app.inject({ url: VERIFY, headers: { authorization: portal.token } });
      const head = await app.inject({
        method: 'HEAD',
        url: VERIFY,
        headers: { authorization: portal.token },
      });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      assert.equal(head.headers['content-length'], get.headers['content-length']);
      assert.match(head.headers['content-type'] as string, /^application\/json/);
    });

    test('a user who is not the main admin and a narrowed token', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services, {
        scopes: ['support:tickets:read', 'crm:contacts:read'],
      });
      const res = await app.inject({ url: VERIFY, headers: { 'x-api-key': portal.token } });
      // Scopes come back in catalog order whatever order they were given in.
      assert.deepEqual(res.json().data.scopes, ['crm:contacts:read', 'support:tickets:read']);
    });

    test('both headers → 400 invalid_request', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const res = await app.inject({
        url: VERIFY,
        headers: { authorization: token, 'x-api-key': token },
      });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error.code, 'invalid_request');
    });

    test('no token → 401 missing_token with a challenge', async (t) => {
      const { app } = await buildTestApp(t, backend);
      for (const headers of [
        {},
        { authorization: '' },
        { 'x-api-key': '   ' },
        { authorization: 'Bearer ' },
      ]) {
        const res = await app.inject({ url: VERIFY, headers });
        assert.equal(res.statusCode, 401);
        assert.equal(res.json().error.code, 'missing_token');
        assert.equal(res.headers['www-authenticate'], 'Bearer realm="portico"');
      }
    });

    test('unknown, malformed and hostile tokens → 401 invalid_token, server keeps serving', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const flipped = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11);
      for (const bad of [
        generateApiToken(), // right prefix and checksum, not in the database
        flipped, // checksum no longer matches
        "ptk_' OR 1=1 --",
        "1' OR '1'='1",
        'x'.repeat(8 * 1024 + 1),
        `${token}\u00e9`,
        token.toLowerCase(),
      ]) {
        const res = await app.inject({ url: VERIFY, headers: { authorization: bad } });
        assert.equal(res.statusCode, 401, bad.slice(0, 40));
        const body = res.json();
        assert.equal(body.error.code, 'invalid_token');
        assert.equal(body.success, false);
        assert.equal(typeof body.error.requestId, 'string');
        assert.doesNotMatch(res.body, /stack|at \w+ \(/);
      }
      const ok = await app.inject({ url: VERIFY, headers: { authorization: token } });
      assert.equal(ok.statusCode, 200);
    });

    test('regenerate: the old token fails on the very next request, the new one works', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services, { scopes: ['messaging:send'] });
      assert.equal(
        (await app.inject({ url: VERIFY, headers: { authorization: portal.token } })).statusCode,
        200,
      );
      const { token } = await services.accounts.regenerateToken({
        portalCode: portal.portalCode,
        actor: CLI_ACTOR,
      });
      const old = await app.inject({ url: VERIFY, headers: { authorization: portal.token } });
      assert.equal(old.statusCode, 401);
      assert.equal(old.json().error.code, 'invalid_token');
      const fresh = await app.inject({ url: VERIFY, headers: { 'x-api-key': token } });
      assert.equal(fresh.statusCode, 200);
      // Owner, scopes and key are kept.
      const { key, ...owner } = fresh.json().data;
      assert.deepEqual(owner, {
        portalCode: portal.portalCode,
        userId: portal.userId,
        isMainAdmin: true,
        scopes: ['messaging:send'],
      });
      assert.equal(key.name, 'Default');
    });

    test('unknown route under the base → 404 envelope (after authentication)', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const res = await app.inject({
        url: '/api/v1/external/nothing/here',
        headers: { authorization: token },
      });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'not_found');
      const anon = await app.inject({ url: '/api/v1/external/nothing/here' });
      assert.equal(anon.statusCode, 401);
    });

    test('a sane incoming X-Request-Id is echoed, an insane one replaced', async (t) => {
      const { app } = await buildTestApp(t, backend);
      const sane = await app.inject({ url: VERIFY, headers: { 'x-request-id': 'abc-123' } });
      assert.equal(sane.headers['x-request-id'], 'abc-123');
      assert.equal(sane.json().error.requestId, 'abc-123');
      const insane = await app.inject({
        url: VERIFY,
        headers: { 'x-request-id': 'a b<script>'.repeat(20) },
      });
      assert.notEqual(insane.headers['x-request-id'], 'a b<script>'.repeat(20));
      assert.match(insane.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/);
    });

    test('a token in either header never reaches the log', async (t) => {
      const { app, services, logs } = await buildTestApp(t, backend, { LOG_LEVEL: 'trace' });
      const { token } = await createPortal(services);
      await app.inject({ url: VERIFY, headers: { authorization: token } });
      await app.inject({ url: VERIFY, headers: { 'x-api-key': token } });
      await app.inject({ url: VERIFY, headers: { authorization: token, 'x-api-key': token } });
      await app.inject({
        url: `${VERIFY}?token=${token}`,
        headers: { authorization: 'Bearer nope' },
      });
      // One access line per request (the last may land just after its response).
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(logs.length >= 4, 'requests were logged');
      for (const line of logs) assert.ok(!line.includes(token.slice(4)), line);
    });
  });
}
