import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { openStorage, type Storage } from '../../src/db/client.ts';
import { ConnectionInactiveError } from '../../src/partner/connections-store.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices, type Services } from '../../src/services.ts';
import { buildTestApp, createPortal, testConfig, type TestApp } from '../helpers/app.ts';
import { connectPortal, startTestProvider, type TestProvider } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends, type Backend } from '../helpers/storage.ts';

const PROVIDER_USER = '100077';

interface Connected {
  p: TestProvider;
  t: TestApp;
  portalId: number;
  userId: number;
  baseUrl: string;
  /** Every provider token issued for the connection (to scan logs and storage for). */
  tokens: string[];
}

/** The same connected start for every path: a listening app, a sandbox that can call it. */
async function connectedStart(
  ctx: Parameters<typeof buildTestApp>[0],
  backend: Backend,
): Promise<Connected> {
  const p = await startTestProvider(ctx);
  const t = await buildTestApp(ctx, backend, p.env);
  const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  p.sandbox.configureApp(p.appId, {
    deauthorizeCallbackUrl: `${baseUrl}/api/auth/partner/deauthorize`,
    dataDeletionCallbackUrl: `${baseUrl}/api/auth/partner/data-deletion`,
  });
  const portal = await createPortal(t.services);
  const portalId = await t.services.accounts.portalIdFor(portal.portalCode);
  const result = await connectPortal(t.services, p, {
    portalId,
    userId: portal.userId,
    providerUserId: PROVIDER_USER,
  });
  assert.deepEqual(result, { ok: true });
  const tokens = p.sandbox.tokensOf(p.appId, PROVIDER_USER);
  return { p, t, portalId, userId: portal.userId, baseUrl, tokens };
}

async function connectionRow(storage: Storage, portalId: number) {
  const rows = await queryRows(
    storage,
    sql`select status, token, provider_user_id, asset_ids, revoke_reason, revoked_at from connections where portal_id = ${portalId}`,
  );
  return rows[0];
}

async function revocations(services: Services, portalId: number) {
  return (await listAuditEvents(services.storage.db, portalId)).filter(
    (e) => e.action === 'connection.revoked',
  );
}

/** The end state every path must reach. */
async function assertRevokedEndState(
  c: Connected,
  expected: { actorType: string; actorId: string; reason: RegExp },
) {
  const { services } = c.t;
  const row = await connectionRow(services.storage, c.portalId);
  assert.equal(row?.status, 'inactive');
  assert.equal(row?.token, null, 'the sealed token is gone');
  const events = await revocations(services, c.portalId);
  assert.equal(events.length, 1, 'exactly one revocation record');
  assert.equal(events[0]?.actorType, expected.actorType);
  assert.equal(events[0]?.actorId, expected.actorId);
  assert.match(events[0]?.reason ?? '', expected.reason);
  const summary = await services.partner.connectionSummary(c.portalId);
  assert.equal(summary.status, 'inactive');
  // Poller stopped: a health-check cycle does not touch this portal and the provider hears
  // nothing more about this person; outbound calls are refused before any network I/O.
  const before = c.p.sandbox.calls.length;
  assert.deepEqual(await services.partner.checkConnections(), []);
  await assert.rejects(services.partner.fetchProviderProfile(c.portalId), ConnectionInactiveError);
  assert.equal(c.p.sandbox.calls.length, before, 'no provider call after revocation');
  assert.equal(services.partner.inflightCalls(c.portalId), 0);
  const logs = c.t.logs.join('\n');
  for (const secret of [...c.tokens, c.p.appSecret])
    assert.ok(!logs.includes(secret), 'no token or secret in the logs');
}

for (const backend of backends()) {
  describe(`revocation paths converge (${backend.name})`, () => {
    const paths: {
      name: string;
      run: (c: Connected) => Promise<void>;
      expected: (c: Connected) => { actorType: string; actorId: string; reason: RegExp };
    }[] = [
      {
        name: 'user disconnects',
        run: async (c) => {
          const r = await c.t.services.partner.revokeConnection(c.portalId, {
            actor: { type: 'user', id: String(c.userId) },
            reason: 'disconnect',
            requestId: 'req-disconnect',
          });
          assert.deepEqual(r, { revoked: true });
        },
        expected: (c) => ({
          actorType: 'user',
          actorId: String(c.userId),
          reason: /disconnected by a user/,
        }),
      },
      {
        name: 'provider deauthorize ("remove the app" in the sandbox)',
        run: async (c) => {
          assert.equal((await c.p.sandbox.removeApp(c.p.appId, PROVIDER_USER)).status, 200);
        },
        expected: () => ({
          actorType: 'provider',
          actorId: PROVIDER_USER,
          reason: /removed in the provider account settings/,
        }),
      },
      {
        name: 'token revoked at the provider, found by the health checker',
        run: async (c) => {
          c.p.sandbox.revokeTokens(c.p.appId, PROVIDER_USER);
          assert.deepEqual(await c.t.services.partner.checkConnections(), [c.portalId]);
        },
        expected: () => ({
          actorType: 'system',
          actorId: 'health-checker',
          reason: /invalid \(error 190\)/,
        }),
      },
      {
        name: 'data deletion request ("delete my data" in the sandbox)',
        run: async (c) => {
          const { status, body } = await c.p.sandbox.deleteData(c.p.appId, PROVIDER_USER);
          assert.equal(status, 200);
          const answer = body as { url: string; confirmation_code: string };
          assert.match(answer.confirmation_code, /^[A-Za-z0-9]{10,}$/);
          assert.equal(
            answer.url,
            `${c.p.appBaseUrl}/data-deletion?code=${answer.confirmation_code}`,
          );
          const page = await c.t.app.inject({
            url: `/data-deletion?code=${answer.confirmation_code}`,
          });
          assert.equal(page.statusCode, 200);
          assert.match(page.headers['content-type'] as string, /^text\/html/);
          assert.match(page.body, /Deleted the stored access token/);
          assert.match(page.body, /Completed on \d{4}-\d{2}-\d{2}/);
          const row = await connectionRow(c.t.services.storage, c.portalId);
          assert.equal(row?.provider_user_id, null, 'provider-derived data erased');
          assert.deepEqual(row?.asset_ids, []);
        },
        expected: () => ({
          actorType: 'provider',
          actorId: PROVIDER_USER,
          reason: /delete their data/,
        }),
      },
    ];

    for (const path of paths) {
      test(`${path.name} → no ciphertext, inactive, poller stopped, one audit record`, async (t) => {
        const c = await connectedStart(t, backend);
        await path.run(c);
        await assertRevokedEndState(c, path.expected(c));
        // Idempotent: running the path again changes nothing and records nothing.
        await c.t.services.partner.revokeConnection(c.portalId, {
          actor: { type: 'user', id: String(c.userId) },
          reason: 'disconnect',
        });
        assert.equal((await revocations(c.t.services, c.portalId)).length, 1);
      });
    }

    test('an outbound call meeting error 190 revokes (actor system); later calls never leave', async (t) => {
      const c = await connectedStart(t, backend);
      c.p.sandbox.revokeTokens(c.p.appId, PROVIDER_USER);
      await assert.rejects(c.t.services.partner.fetchProviderProfile(c.portalId), {
        name: 'ProviderError',
      });
      await assertRevokedEndState(c, {
        actorType: 'system',
        actorId: 'provider-client',
        reason: /error 190\) during profile read/,
      });
    });

    test('a dead token found after the portal reconnected never revokes the new connection', async (t) => {
      const c = await connectedStart(t, backend);
      const [before] = await queryRows<{ token_ciphertext: string }>(
        c.t.services.storage,
        sql`select token ->> 'ciphertext' as token_ciphertext from connections
            where portal_id = ${c.portalId}`,
      );
      await connectPortal(c.t.services, c.p, {
        portalId: c.portalId,
        userId: c.userId,
        providerUserId: PROVIDER_USER,
      });
      const stale = await c.t.services.partner.revokeConnection(c.portalId, {
        actor: { type: 'system', id: 'health-checker' },
        reason: 'dead_token',
        detail: '(error 190)',
        tokenVersion: before!.token_ciphertext,
      });
      assert.deepEqual(stale, { revoked: false });
      assert.equal((await c.t.services.partner.connectionSummary(c.portalId)).status, 'active');
      assert.equal((await revocations(c.t.services, c.portalId)).length, 0);
    });

    test('the health checker refreshes a token near expiry and keeps the connection', async (t) => {
      const p = await startTestProvider(t);
      const { services } = await buildTestApp(t, backend, {
        ...p.env,
        PROVIDER_TOKEN_REFRESH_WINDOW_S: '5184000',
      });
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await connectPortal(services, p, { portalId, userId: portal.userId, providerUserId: '31' });
      const tokensBefore = p.sandbox.tokensOf(p.appId, '31').length;
      assert.deepEqual(await services.partner.checkConnections(), [portalId]);
      assert.equal(p.sandbox.tokensOf(p.appId, '31').length, tokensBefore + 1);
      assert.equal((await services.partner.connectionSummary(portalId)).status, 'active');
      assert.equal((await services.partner.fetchProviderProfile(portalId)).id, '31');
      assert.deepEqual(await services.partner.checkConnections(), [], 'not due again yet');
    });

    test('a refresh the provider refuses revokes as token_expired, not dead_token', async (t) => {
      const p = await startTestProvider(t);
      // Graph as the sandbox answers it, except the long-lived exchange once connected: refused
      // (code 100: no transient failure, no dead token).
      let refuseExchange = false;
      const proxy = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks);
          const url = req.url ?? '/';
          if (
            refuseExchange &&
            url.includes('/oauth/access_token') &&
            `${url} ${body.toString('utf8')}`.includes('fb_exchange_token')
          ) {
            const error = { message: 'Invalid parameter', type: 'OAuthException', code: 100 };
            res.writeHead(400, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ error: { ...error, fbtrace_id: 'AbCdEf' } }));
            return;
          }
          const headers = Object.fromEntries(
            Object.entries(req.headers).filter(
              (e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host',
            ),
          );
          fetch(`${p.sandbox.url}${url}`, {
            method: req.method ?? 'GET',
            headers,
            ...(body.length > 0 && { body }),
          })
            .then(async (answer) => {
              const type = answer.headers.get('content-type');
              res.writeHead(answer.status, type ? { 'content-type': type } : {});
              res.end(Buffer.from(await answer.arrayBuffer()));
            })
            .catch(() => res.writeHead(502).end());
        });
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      t.after(
        () =>
          new Promise<void>((resolve) => {
            proxy.closeAllConnections();
            proxy.close(() => resolve());
          }),
      );
      const { services } = await buildTestApp(t, backend, {
        ...p.env,
        PROVIDER_GRAPH_BASE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
        PROVIDER_TOKEN_REFRESH_WINDOW_S: '5184000',
      });
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await connectPortal(services, p, { portalId, userId: portal.userId, providerUserId: '32' });
      refuseExchange = true;
      assert.deepEqual(await services.partner.checkConnections(), [portalId]);
      const [row] = await queryRows<{ status: string; revoke_reason: string }>(
        services.storage,
        sql`select status, revoke_reason from connections where portal_id = ${portalId}`,
      );
      assert.equal(row?.status, 'inactive');
      // `token_expired`'s words, not `dead_token`'s ("the provider reported the token invalid").
      assert.match(String(row?.revoke_reason), /could not be refreshed/);
      const events = await revocations(services, portalId);
      assert.equal(events.length, 1);
      assert.match(String(events[0]?.reason), /could not be refreshed/);
    });

    test('an unknown provider user: 200, nothing changes', async (t) => {
      const c = await connectedStart(t, backend);
      const res = await c.t.app.inject({
        method: 'POST',
        url: '/api/auth/partner/deauthorize',
        payload: `signed_request=${c.p.sandbox.signedRequestFor(c.p.appId, '999999')}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(res.statusCode, 200);
      assert.equal((await c.t.services.partner.connectionSummary(c.portalId)).status, 'active');
      assert.equal((await revocations(c.t.services, c.portalId)).length, 0);
    });

    test('forged, malformed, stale, huge signed_requests → 4xx, nothing changes, nothing echoed', async (t) => {
      const c = await connectedStart(t, backend);
      const secret = c.p.appSecret;
      const b64 = (s: string) => Buffer.from(s).toString('base64url');
      const sign = (segment: string) =>
        createHmac('sha256', secret).update(segment).digest('base64url');
      const now = Math.floor(Date.now() / 1000);
      const json = (o: object) => JSON.stringify(o);
      const good = { algorithm: 'HMAC-SHA256', issued_at: now, user_id: PROVIDER_USER };
      const payload = b64(json(good));
      // Independently computed vector (HMAC of a known payload with the known secret) works:
      // proven last, after every refusal left the connection untouched.
      const valid = `${sign(payload)}.${payload}`;
      const [validSig] = valid.split('.') as [string];
      const wrongAlgo = b64(json({ ...good, algorithm: 'HMAC-SHA1' }));
      const stale = b64(json({ ...good, issued_at: now - 3600 }));
      const future = b64(json({ ...good, issued_at: now + 3600 }));
      const cases: [string, string | undefined][] = [
        [
          'wrong signature',
          `${validSig.slice(0, -2)}${validSig.endsWith('AA') ? 'BB' : 'AA'}.${payload}`,
        ],
        ['signature over the decoded JSON', `${sign(json(good))}.${payload}`],
        [
          'signature with another secret',
          `${createHmac('sha256', 'x').update(payload).digest('base64url')}.${payload}`,
        ],
        ['wrong algorithm', `${sign(wrongAlgo)}.${wrongAlgo}`],
        ['stale issued_at', `${sign(stale)}.${stale}`],
        ['future issued_at', `${sign(future)}.${future}`],
        ['garbage', 'garbage<script>'],
        ['three segments', `${valid}.x`],
        ['empty signed_request', ''],
        ['empty body', undefined],
      ];
      for (const url of ['/api/auth/partner/deauthorize', '/api/auth/partner/data-deletion']) {
        for (const [name, value] of cases) {
          const res = await c.t.app.inject({
            method: 'POST',
            url,
            payload:
              value === undefined ? '' : new URLSearchParams({ signed_request: value }).toString(),
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
          });
          assert.ok(
            res.statusCode >= 400 && res.statusCode < 500,
            `${name}: ${res.statusCode} ${res.body}`,
          );
          if (value) assert.ok(!res.body.includes(value), `${name}: echoed`);
        }
        const huge = await c.t.app.inject({
          method: 'POST',
          url,
          payload: `signed_request=${'A'.repeat(1024 * 1024)}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
        assert.equal(huge.statusCode, 413);
        const json415 = await c.t.app.inject({
          method: 'POST',
          url,
          payload: { signed_request: valid },
        });
        assert.equal(json415.statusCode, 415);
      }
      assert.equal((await c.t.services.partner.connectionSummary(c.portalId)).status, 'active');
      assert.equal((await revocations(c.t.services, c.portalId)).length, 0);
      const rows = await queryRows<{ n: number }>(
        c.t.services.storage,
        sql`select count(*)::int as n from data_deletion_requests`,
      );
      assert.equal(rows[0]?.n, 0);
      const ok = await c.t.app.inject({
        method: 'POST',
        url: '/api/auth/partner/deauthorize',
        payload: new URLSearchParams({ signed_request: valid }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(ok.statusCode, 200);
      assert.equal((await c.t.services.partner.connectionSummary(c.portalId)).status, 'inactive');
      // The server kept serving throughout.
      assert.equal((await c.t.app.inject({ url: '/healthz' })).statusCode, 200);
    });

    test('an unknown data deletion code: 404 page that does not echo it', async (t) => {
      const { app } = await buildTestApp(t, backend);
      for (const code of ['NoSuchCode1', '<script>x</script>']) {
        const res = await app.inject({ url: `/data-deletion?code=${encodeURIComponent(code)}` });
        assert.equal(res.statusCode, 404);
        assert.ok(!res.body.includes(code));
      }
    });

    test('concurrency: disconnect and deauthorize at the same moment → one revocation record', async (t) => {
      const c = await connectedStart(t, backend);
      const [disconnect, deauthorize] = await Promise.all([
        c.t.services.partner.revokeConnection(c.portalId, {
          actor: { type: 'user', id: String(c.userId) },
          reason: 'disconnect',
        }),
        c.t.app.inject({
          method: 'POST',
          url: '/api/auth/partner/deauthorize',
          payload: `signed_request=${c.p.sandbox.signedRequestFor(c.p.appId, PROVIDER_USER)}`,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        c.t.services.partner.revokeConnection(c.portalId, {
          actor: { type: 'system', id: 'health-checker' },
          reason: 'dead_token',
          detail: '(error 190)',
        }),
      ]);
      assert.ok(disconnect);
      assert.equal(deauthorize.statusCode, 200);
      assert.equal((await revocations(c.t.services, c.portalId)).length, 1);
      assert.equal((await connectionRow(c.t.services.storage, c.portalId))?.token, null);
    });

    test('multi-instance: two instances on one database; each connection checked by exactly one', async (t) => {
      const p = await startTestProvider(t);
      const first = await buildTestApp(t, backend, p.env);
      let secondStorage = first.services.storage;
      if (first.services.storage.kind === 'postgres') {
        const url = (
          first.services.storage.pool as unknown as { options: { connectionString: string } }
        ).options.connectionString;
        secondStorage = await openStorage({ kind: 'postgres', url, poolSize: 5 });
        t.after(() => secondStorage.close());
      }
      // Both instances share the encryption keys, as a real deployment does.
      const second = createServices({
        config: testConfig({ ...p.env, DATA_DIR: first.config.DATA_DIR }),
        storage: secondStorage,
        logger: createLogger('silent'),
      });
      const users: string[] = [];
      for (let i = 0; i < 6; i++) {
        const portal = await createPortal(first.services);
        const portalId = await first.services.accounts.portalIdFor(portal.portalCode);
        users.push(`4000${i}`);
        await connectPortal(first.services, p, {
          portalId,
          userId: portal.userId,
          providerUserId: `4000${i}`,
        });
      }
      const start = p.sandbox.calls.length;
      const [a, b] = await Promise.all([
        first.services.partner.checkConnections({ limit: 4 }),
        second.partner.checkConnections({ limit: 4 }),
      ]);
      const again = await Promise.all([
        first.services.partner.checkConnections(),
        second.partner.checkConnections(),
      ]);
      const all = [...a, ...b, ...again[0], ...again[1]];
      assert.equal(all.length, 6, 'every connection checked');
      assert.equal(new Set(all).size, 6, 'none checked twice');
      const inspections = p.sandbox.calls
        .slice(start)
        .filter((call) => call.url.endsWith('/debug_token'));
      for (const user of users)
        assert.equal(
          inspections.filter((call) => call.userId === user).length,
          1,
          `person ${user} inspected once`,
        );
    });
  });
}

describe('background health checker (the task partner.health-check)', () => {
  test('started, it finds a token revoked at the provider and revokes; stopped, it calls no more', async (t) => {
    const [backend] = backends();
    const p = await startTestProvider(t);
    const { services } = await buildTestApp(t, backend!, {
      ...p.env,
      PROVIDER_HEALTH_CHECK_INTERVAL_MS: '1000',
    });
    t.after(() => services.background.stop());
    const portal = await createPortal(services);
    const portalId = await services.accounts.portalIdFor(portal.portalCode);
    await connectPortal(services, p, { portalId, userId: portal.userId, providerUserId: '71' });
    p.sandbox.revokeTokens(p.appId, '71');
    services.background.start();
    // Wait for the condition, not for a duration.
    for (let i = 0; (await services.partner.connectionSummary(portalId)).status === 'active'; i++) {
      assert.ok(i < 600, 'the checker never revoked (gave up after about a minute)');
      await new Promise((r) => setTimeout(r, 100));
    }
    await services.background.stop();
    const [event] = (await listAuditEvents(services.storage.db, portalId)).filter(
      (e) => e.action === 'connection.revoked',
    );
    assert.equal(event?.actorId, 'health-checker');
    const calls = p.sandbox.calls.length;
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(p.sandbox.calls.length, calls, 'a stopped checker makes no call');
  });
});
