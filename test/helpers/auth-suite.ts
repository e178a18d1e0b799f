/**
 * The shared authentication cases (docs/security.md): missing token, invalid token,
 * regenerated token, and a token without the route's scopes, run against EVERY protected route
 * under the API base. Routes come from the app's route table, so a new route is covered the
 * moment it is registered; a route without `requiredScopes` must be named in SCOPE_FREE_ROUTES.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateApiToken } from '../../src/accounts/api-token.ts';
import { SCOPES } from '../../src/accounts/scopes.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { EXTERNAL_API_PREFIX } from '../../src/external-api/plugin.ts';
import type { RegisteredRoute } from '../../src/platform/route-table.ts';
import { buildTestApp, createPortal } from './app.ts';
import type { Backend } from './storage.ts';

/** Routes that any valid token may call (no scope). Adding one here is a reviewed decision. */
export const SCOPE_FREE_ROUTES = new Set(['GET /api/v1/external/auth/verify']);

/** Protected routes of the API: under the base, not `config.public`, HEAD excluded. */
export function protectedRoutes(routes: readonly RegisteredRoute[]): RegisteredRoute[] {
  return routes.filter(
    (r) =>
      r.url.startsWith(`${EXTERNAL_API_PREFIX}/`) &&
      r.method !== 'HEAD' &&
      !(r.config as { public?: true } | undefined)?.public,
  );
}

/** A concrete URL for a route pattern: each `:param` becomes a value that matches nothing. */
export function concreteUrl(url: string): string {
  return url.replace(/:(\w+)/g, 'x_auth_suite_$1');
}

function scopesOf(route: RegisteredRoute): readonly string[] {
  return (route.config as { requiredScopes?: readonly string[] } | undefined)?.requiredScopes ?? [];
}

export function runAuthSuite(backend: Backend): void {
  describe(`auth suite over every protected route (${backend.name})`, () => {
    test('missing, invalid, regenerated token and missing scope', async (t) => {
      // Every route is called with bad tokens from one address: the failure budget must cover
      // them all (its own test is test/external-api/rate-limit.test.ts).
      const { app, services } = await buildTestApp(t, backend, {
        RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '100000',
      });
      await app.ready();
      const routes = protectedRoutes(app.routeTable);
      assert.ok(routes.length >= 4, 'the route table lists the API routes');
      // The only route under the base that skips authentication is the OpenAPI document.
      const open = app.routeTable.filter(
        (r) =>
          r.url.startsWith(`${EXTERNAL_API_PREFIX}/`) &&
          (r.config as { public?: true } | undefined)?.public,
      );
      assert.deepEqual(
        [...new Set(open.map((r) => r.url))],
        [`${EXTERNAL_API_PREFIX}/openapi.json`],
      );

      const regenerated = await createPortal(services);
      await services.accounts.regenerateToken({
        portalCode: regenerated.portalCode,
        actor: CLI_ACTOR,
      });

      for (const route of routes) {
        const name = `${route.method} ${route.url}`;
        const required = scopesOf(route);
        if (required.length === 0) {
          assert.ok(SCOPE_FREE_ROUTES.has(name), `${name} declares no requiredScopes`);
        }
        const call = (headers: Record<string, string>) =>
          app.inject({
            method: route.method as 'GET',
            url: concreteUrl(route.url),
            headers: { ...headers, 'content-type': 'application/json' },
            ...(route.method === 'GET' ? {} : { payload: '{}' }),
          });

        await t.test(name, async () => {
          const missing = await call({});
          assert.equal(missing.statusCode, 401, `${name}: missing token`);
          assert.equal(missing.json().error.code, 'missing_token');
          assert.match(missing.headers['www-authenticate'] as string, /^Bearer realm=/);

          const invalid = await call({ authorization: generateApiToken() });
          assert.equal(invalid.statusCode, 401, `${name}: invalid token`);
          assert.equal(invalid.json().error.code, 'invalid_token');

          const old = await call({ 'x-api-key': regenerated.token });
          assert.equal(old.statusCode, 401, `${name}: regenerated token`);
          assert.equal(old.json().error.code, 'invalid_token');

          if (required.length > 0) {
            const others = SCOPES.filter((s) => !required.includes(s));
            const narrow = await createPortal(services, { scopes: others });
            const res = await call({ authorization: narrow.token });
            assert.equal(res.statusCode, 403, `${name}: token without ${required.join(' ')}`);
            assert.equal(res.json().error.code, 'insufficient_scope');
            assert.deepEqual(res.json().error.requiredScopes, [...required]);

            // The same route with the scope gets past authentication.
            const allowed = await createPortal(services, { scopes: [...required] });
            const ok = await call({ authorization: allowed.token });
            assert.ok(
              ![401, 403].includes(ok.statusCode),
              `${name}: ${ok.statusCode} with the scope`,
            );
          }
        });
      }
    });
  });
}
