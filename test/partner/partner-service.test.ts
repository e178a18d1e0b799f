import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { ResealResult } from '../../src/db/sealing.ts';
import { runCommand } from '../../src/cli/commands.ts';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import type { Storage } from '../../src/db/client.ts';
import { ConnectionInactiveError } from '../../src/partner/connections-store.ts';
import { DecryptionError, generateKeyEntry } from '../../src/platform/keyring.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices } from '../../src/services.ts';
import { buildTestApp, createPortal, testConfig } from '../helpers/app.ts';
import { connectPortal, startTestProvider, validated } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

/** Every row of every table, as one JSON text (what an attacker with the database sees). */
async function dumpDatabase(storage: Storage): Promise<string> {
  const out: unknown[] = [];
  for (const table of [
    'portals',
    'users',
    'api_tokens',
    'audit_events',
    'connections',
    'data_deletion_requests',
  ]) {
    out.push(await queryRows(storage, sql.raw(`select * from ${table}`)));
  }
  return JSON.stringify(out);
}

async function portalWithUser(services: Parameters<typeof createPortal>[0]) {
  const portal = await createPortal(services);
  const portalId = await services.accounts.portalIdFor(portal.portalCode);
  return { ...portal, portalId };
}

for (const backend of backends()) {
  describe(`partner service (${backend.name})`, () => {
    test('authorizationUrl: exactly client_id, redirect_uri, state, response_type, scope (config_id instead when set)', async (t) => {
      const p = await startTestProvider(t);
      const { services } = await buildTestApp(t, backend, p.env);
      const url = new URL(services.partner.authorizationUrl('the-state'));
      assert.equal(`${url.origin}${url.pathname}`, `${p.sandbox.url}/v21.0/dialog/oauth`);
      assert.deepEqual([...url.searchParams.keys()].sort(), [
        'client_id',
        'redirect_uri',
        'response_type',
        'scope',
        'state',
      ]);
      assert.equal(url.searchParams.get('client_id'), p.appId);
      assert.equal(url.searchParams.get('redirect_uri'), p.redirectUri);
      assert.equal(url.searchParams.get('state'), 'the-state');
      assert.equal(url.searchParams.get('response_type'), 'code');
      assert.ok(!url.toString().includes(p.appSecret));
      const withConfig = await buildTestApp(t, backend, { ...p.env, PROVIDER_CONFIG_ID: '98765' });
      assert.equal(
        new URL(withConfig.services.partner.authorizationUrl('s')).searchParams.get('config_id'),
        '98765',
      );
    });

    test('connect: stored active with capabilities, assets, who and when; audited; only ciphertext in the database; no secret in the logs', async (t) => {
      const p = await startTestProvider(t);
      const { services, logs } = await buildTestApp(t, backend, p.env);
      const a = await portalWithUser(services);
      const code = p.sandbox.authorize({
        appId: p.appId,
        redirectUri: p.redirectUri,
        userId: '4242',
      });
      const result = await services.partner.completeAuthorization({
        portalId: a.portalId,
        userId: a.userId,
        authorizationCode: validated(code),
        requestId: 'req-1',
      });
      assert.deepEqual(result, { ok: true });
      const summary = await services.partner.connectionSummary(a.portalId);
      assert.equal(summary.status, 'active');
      if (summary.status !== 'active') return;
      assert.deepEqual(summary.capabilities, [
        'see and manage your business account and its assets',
        'send messages for your business',
        'manage your phone numbers and message templates',
      ]);
      assert.ok(summary.assetIds.length > 0);
      assert.equal(summary.connectedBy?.userId, a.userId);
      assert.ok(Date.parse(summary.connectedAt) <= Date.now());
      const [event] = await listAuditEvents(services.storage.db, a.portalId, { limit: 1 });
      assert.equal(event?.action, 'connection.created');
      assert.equal(event?.actorType, 'user');
      assert.equal(event?.actorId, String(a.userId));
      assert.equal(event?.requestId, 'req-1');

      const tokens = p.sandbox.tokensOf(p.appId, '4242');
      assert.ok(tokens.length >= 2, 'short- and long-lived tokens were issued');
      const dump = await dumpDatabase(services.storage);
      const logText = logs.join('\n');
      for (const secret of [...tokens, code, p.appSecret]) {
        assert.ok(!dump.includes(secret), 'no token, code or secret in the database');
        assert.ok(!logText.includes(secret), 'no token, code or secret in the logs');
      }
      assert.match(dump, /"token":\{[^}]*"ciphertext":"[A-Za-z0-9+/=]{40,}"/);
      // The stored token works for outbound calls (decrypts for its own portal).
      assert.equal((await services.partner.fetchProviderProfile(a.portalId)).id, '4242');
    });

    test('a declined permission: nothing stored, the missing capability in plain words', async (t) => {
      const p = await startTestProvider(t);
      const { services } = await buildTestApp(t, backend, p.env);
      const a = await portalWithUser(services);
      const result = await connectPortal(services, p, {
        portalId: a.portalId,
        userId: a.userId,
        permissions: ['business_management', 'whatsapp_business_management'],
      });
      assert.deepEqual(result, {
        ok: false,
        reason: 'permission',
        missingCapabilities: ['send messages for your business'],
      });
      assert.ok(!JSON.stringify(result).includes('whatsapp_business_messaging'));
      assert.deepEqual(await services.partner.connectionSummary(a.portalId), {
        status: 'inactive',
        revokedAt: null,
        revokeReason: null,
      });
      const events = await listAuditEvents(services.storage.db, a.portalId);
      assert.ok(events.every((e) => e.action !== 'connection.created'));
    });

    test('a redirect URI mismatch → config; a reused or bogus code → provider; unconfigured → config', async (t) => {
      const p = await startTestProvider(t);
      const mismatched = await buildTestApp(t, backend, {
        ...p.env,
        PROVIDER_REDIRECT_URI: 'http://localhost:3000/api/auth/partner/callback/',
      });
      const a = await portalWithUser(mismatched.services);
      const code = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri });
      assert.deepEqual(
        await mismatched.services.partner.completeAuthorization({
          portalId: a.portalId,
          userId: a.userId,
          authorizationCode: validated(code),
        }),
        { ok: false, reason: 'config' },
      );
      const { services } = await buildTestApp(t, backend, p.env);
      const b = await portalWithUser(services);
      const reused = p.sandbox.authorize({ appId: p.appId, redirectUri: p.redirectUri });
      assert.deepEqual(
        await services.partner.completeAuthorization({
          portalId: b.portalId,
          userId: b.userId,
          authorizationCode: validated(reused),
        }),
        { ok: true },
      );
      for (const authorizationCode of [reused, 'bogus'])
        assert.deepEqual(
          await services.partner.completeAuthorization({
            portalId: b.portalId,
            userId: b.userId,
            authorizationCode: validated(authorizationCode),
          }),
          { ok: false, reason: 'provider' },
        );
      const unconfigured = await buildTestApp(t, backend);
      assert.equal(unconfigured.services.partner.configured, false);
      assert.deepEqual(
        await unconfigured.services.partner.completeAuthorization({
          portalId: 1,
          userId: 1,
          authorizationCode: validated('x'),
        }),
        { ok: false, reason: 'config' },
      );
    });

    test('a user of another portal cannot store a connection → storage', async (t) => {
      const p = await startTestProvider(t);
      const { services } = await buildTestApp(t, backend, p.env);
      const a = await portalWithUser(services);
      const b = await portalWithUser(services);
      assert.deepEqual(
        await connectPortal(services, p, { portalId: a.portalId, userId: b.userId }),
        { ok: false, reason: 'storage' },
      );
      assert.equal((await services.partner.connectionSummary(a.portalId)).status, 'inactive');
    });

    test('tenant isolation: B never reads A; a ciphertext copied to B fails to decrypt; B connecting leaves A alone', async (t) => {
      const p = await startTestProvider(t);
      const { services } = await buildTestApp(t, backend, p.env);
      const a = await portalWithUser(services);
      const b = await portalWithUser(services);
      await connectPortal(services, p, {
        portalId: a.portalId,
        userId: a.userId,
        providerUserId: '1',
      });
      assert.equal((await services.partner.connectionSummary(b.portalId)).status, 'inactive');
      await assert.rejects(
        services.partner.fetchProviderProfile(b.portalId),
        ConnectionInactiveError,
      );

      const rowA = async () =>
        JSON.stringify(
          await queryRows(
            services.storage,
            sql`select * from connections where portal_id = ${a.portalId}`,
          ),
        );
      const before = await rowA();
      await services.storage.db.execute(sql`
        insert into connections (portal_id, status, token)
        select ${b.portalId}, 'active', token
        from connections where portal_id = ${a.portalId}`);
      await assert.rejects(services.partner.fetchProviderProfile(b.portalId), DecryptionError);

      await connectPortal(services, p, {
        portalId: b.portalId,
        userId: b.userId,
        providerUserId: '2',
      });
      assert.equal((await services.partner.fetchProviderProfile(b.portalId)).id, '2');
      assert.equal(await rowA(), before, "A's row is untouched");
      assert.equal((await services.partner.fetchProviderProfile(a.portalId)).id, '1');
    });

    test('connecting again replaces the previous connection', async (t) => {
      const p = await startTestProvider(t);
      const { services } = await buildTestApp(t, backend, p.env);
      const a = await portalWithUser(services);
      await connectPortal(services, p, {
        portalId: a.portalId,
        userId: a.userId,
        providerUserId: '11',
      });
      await connectPortal(services, p, {
        portalId: a.portalId,
        userId: a.userId,
        providerUserId: '12',
      });
      assert.equal((await services.partner.fetchProviderProfile(a.portalId)).id, '12');
      const rows = await queryRows<{ n: number }>(
        services.storage,
        sql`select count(*)::int as n from connections where portal_id = ${a.portalId}`,
      );
      assert.equal(rows[0]?.n, 1);
      const [latest] = await listAuditEvents(services.storage.db, a.portalId, { limit: 1 });
      assert.match(latest?.reason ?? '', /replacing the previous connection/);
    });

    test('keys rotate: re-encrypts every token under the first key, reports how many, audits', async (t) => {
      const p = await startTestProvider(t);
      const oldKey = generateKeyEntry('old');
      const { services } = await buildTestApp(t, backend, {
        ...p.env,
        TOKEN_ENCRYPTION_KEYS: oldKey,
      });
      const a = await portalWithUser(services);
      const b = await portalWithUser(services);
      await connectPortal(services, p, {
        portalId: a.portalId,
        userId: a.userId,
        providerUserId: '21',
      });
      await connectPortal(services, p, {
        portalId: b.portalId,
        userId: b.userId,
        providerUserId: '22',
      });
      const newKey = generateKeyEntry('new');
      const logger = createLogger('silent');
      const rotated = createServices({
        config: testConfig({ ...p.env, TOKEN_ENCRYPTION_KEYS: `${newKey},${oldKey}` }),
        storage: services.storage,
        logger,
      });
      const tokens = (r: unknown) =>
        (r as ResealResult).columns.find((c) => c.column === 'connections.token')?.resealed;
      const first = await runCommand(rotated, 'keys rotate', {});
      assert.equal(tokens(first), 2);
      assert.equal((first as ResealResult).remaining, 0);
      assert.equal(tokens(await runCommand(rotated, 'keys rotate', {})), 0);
      const onlyNew = createServices({
        config: testConfig({ ...p.env, TOKEN_ENCRYPTION_KEYS: newKey }),
        storage: services.storage,
        logger,
      });
      assert.equal((await onlyNew.partner.fetchProviderProfile(a.portalId)).id, '21');
      assert.equal((await onlyNew.partner.fetchProviderProfile(b.portalId)).id, '22');
      const rows = await queryRows<{ reason: string }>(
        services.storage,
        sql`select action, reason from audit_events where action = 'encryption_key.rotated' order by id`,
      );
      assert.equal(rows.length, 2);
      const pins = (first as ResealResult).columns.find(
        (c) => c.column === 'number_onboarding.pin',
      );
      assert.equal(pins?.resealed, 8, 'the registration PINs of the 2 × 4 numbers');
      // The two tokens, the two portals' `connection.connected` events in the event log and the
      // eight registration PINs.
      assert.match(rows[0]!.reason, /^re-sealed 12 value\(s\) under key new; 0 left/);
    });
  });
}
