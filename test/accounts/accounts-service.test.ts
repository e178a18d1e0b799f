import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { hashApiToken } from '../../src/accounts/api-token.ts';
import { TOKEN_CHANGE_CHANNEL } from '../../src/accounts/token-change-channel.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { apiTokens } from '../../src/db/schema/index.ts';
import { UsageError } from '../../src/platform/errors.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

for (const backend of backends()) {
  describe(`accounts service (${backend.name})`, () => {
    test('the token is stored only as its hash and hint', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const dump = JSON.stringify(await services.storage.db.select().from(apiTokens));
      assert.ok(!dump.includes(token));
      assert.ok(!dump.includes(token.slice(4, -6)));
      assert.ok(dump.includes(hashApiToken(token)));
    });

    test('at most one main administrator per portal; emails unique across portals', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const a = await createPortal(services, { email: 'one@a.test' });
      await assert.rejects(
        services.accounts.createUser({
          portalCode: a.portalCode,
          email: 'two@a.test',
          mainAdmin: true,
        }),
        (err: Error) =>
          err instanceof UsageError && /already has a main administrator/.test(err.message),
      );
      await assert.rejects(createPortal(services, { email: 'ONE@a.test' }), /already exists/);
      const user = await services.accounts.createUser({
        portalCode: a.portalCode,
        email: 'two@a.test',
        mainAdmin: false,
      });
      assert.equal(user.isMainAdmin, false);
    });

    test('regenerate keeps owner and scopes; re-scoping keeps the token', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const p = await createPortal(services, { scopes: ['messaging:send'] });
      const { token } = await services.accounts.regenerateToken({
        portalCode: p.portalCode,
        actor: CLI_ACTOR,
      });
      assert.equal(await services.accounts.principalForTokenHash(hashApiToken(p.token)), null);
      const principal = await services.accounts.principalForTokenHash(hashApiToken(token));
      assert.deepEqual(principal?.scopes, ['messaging:send']);
      assert.equal(principal?.userId, p.userId);
      await services.accounts.setTokenScopes({
        portalCode: p.portalCode,
        scopes: ['crm:contacts:write', 'crm:contacts:read'],
        actor: CLI_ACTOR,
      });
      const after = await services.accounts.principalForTokenHash(hashApiToken(token));
      assert.deepEqual(after?.scopes, ['crm:contacts:read', 'crm:contacts:write']);
    });

    test('concurrent regenerations: exactly one token survives', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const p = await createPortal(services);
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          services.accounts.regenerateToken({ portalCode: p.portalCode, actor: CLI_ACTOR }),
        ),
      );
      const live = [];
      for (const r of results)
        if (await services.accounts.principalForTokenHash(hashApiToken(r.token))) live.push(r);
      assert.equal(live.length, 1);
    });

    test('the regenerating instance drops its own cache entry, without the notification', async (t) => {
      // The listener must hear nothing, or its delivery would hide a missing local drop (PGlite
      // delivers in-process before the call returns). PostgreSQL: the listening session
      // listens in another database (notifications stay within their database); PGlite: the
      // channel is unlistened underneath the listener. Either way the cache stays trusted.
      const env: Record<string, string> =
        backend.name === 'postgres' ? { DATABASE_LISTEN_URL: process.env.TEST_DATABASE_URL! } : {};
      const { app, services } = await buildTestApp(t, backend, env);
      if (services.storage.pglite) await services.storage.pglite.unlisten(TOKEN_CHANGE_CHANNEL);
      assert.equal(app.tokenChangeListener.listening, true);
      const { cache } = services.tokenVerification;
      const p = await createPortal(services);
      const verify = (token: string) =>
        app.inject({ url: '/api/v1/external/auth/verify', headers: { authorization: token } });
      assert.equal((await verify(p.token)).statusCode, 200);
      assert.equal(cache.has(hashApiToken(p.token)), true, 'the principal is cached');

      // Delivery is really off: a notification for the portal leaves the entry in place.
      const portalId = (await cache.lookup(hashApiToken(p.token)))!.portalId;
      await services.storage.db.execute(
        sql`select pg_notify(${TOKEN_CHANGE_CHANNEL}, ${String(portalId)})`,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(cache.has(hashApiToken(p.token)), true, 'no notification reached the cache');

      const { token: fresh } = await services.accounts.regenerateToken({
        portalCode: p.portalCode,
        actor: CLI_ACTOR,
      });
      assert.equal(cache.has(hashApiToken(p.token)), false, 'dropped before the call returned');
      assert.equal((await verify(p.token)).statusCode, 401);
      assert.equal((await verify(fresh)).statusCode, 200);

      await services.accounts.setTokenScopes({
        portalCode: p.portalCode,
        scopes: ['crm:contacts:read'],
        actor: CLI_ACTOR,
      });
      assert.equal(cache.has(hashApiToken(fresh)), false, 're-scoping drops it too');
      assert.deepEqual((await verify(fresh)).json().data.scopes, ['crm:contacts:read']);
    });
  });
}
