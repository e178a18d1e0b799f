import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileErrors, validate } from '@readme/openapi-parser';
import { OPENAPI_URL } from '../../src/app.ts';
import { concreteUrl, protectedRoutes } from '../helpers/auth-suite.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

/** Fastify's `/a/:id` → OpenAPI's `/a/{id}`. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

for (const backend of backends()) {
  describe(`OpenAPI document and reference page (${backend.name})`, () => {
    test('is served without a token, validates as OpenAPI 3.1 and covers every route', async (t) => {
      const { app } = await buildTestApp(t, backend);
      const res = await app.inject({ url: OPENAPI_URL });
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'] as string, /^application\/json/);
      const doc = res.json();
      assert.equal(doc.openapi, '3.1.0');

      const result = await validate(structuredClone(doc));
      assert.ok(result.valid, result.valid ? '' : compileErrors(result));

      assert.deepEqual(Object.keys(doc.components.securitySchemes).sort(), [
        'ApiKeyHeader',
        'AuthorizationHeader',
      ]);
      assert.equal(doc.components.securitySchemes.AuthorizationHeader.name, 'Authorization');
      assert.equal(doc.components.securitySchemes.ApiKeyHeader.name, 'X-API-Key');

      const routes = protectedRoutes(app.routeTable);
      assert.ok(routes.length >= 4);
      for (const route of routes) {
        const operation = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
        assert.ok(operation, `${route.method} ${route.url} is in the document`);
        const scopes =
          (route.config as { requiredScopes?: string[] } | undefined)?.requiredScopes ?? [];
        assert.deepEqual(operation['x-required-scopes'], scopes);
        assert.deepEqual(operation.security, [
          { AuthorizationHeader: scopes },
          { ApiKeyHeader: scopes },
        ]);
        for (const scope of scopes) assert.ok(operation.description.includes(scope));
        const statuses = Object.keys(operation.responses);
        for (const s of ['400', '401', '429', '500', '503']) {
          assert.ok(statuses.includes(s), `${route.method} ${route.url} documents ${s}`);
        }
        if (scopes.length) assert.ok(statuses.includes('403'));
        const codes401 =
          operation.responses['401'].content['application/json'].schema.properties.error.properties
            .code;
        assert.match(JSON.stringify(codes401), /missing_token/);
        assert.match(JSON.stringify(codes401), /invalid_token/);
      }
      // Nothing outside the API base leaks into the document.
      for (const path of Object.keys(doc.paths)) {
        assert.ok(path.startsWith('/api/v1/external/'), path);
        assert.notEqual(path, OPENAPI_URL);
      }

      const create = doc.paths['/api/v1/external/support/tickets'].post;
      assert.ok(create.responses['429'].headers['Retry-After']);
      assert.ok(create.responses['201'].headers['X-RateLimit-Remaining']);
      assert.ok(create.responses['201'].headers['Idempotent-Replayed']);
      assert.ok(create.responses['401'].headers['WWW-Authenticate']);
      for (const s of ['201', '409', '413', '415']) assert.ok(create.responses[s], s);
      assert.ok(
        create.parameters.some(
          (p: { name: string; in: string }) => p.name === 'idempotency-key' && p.in === 'header',
        ),
      );
      assert.ok(doc.paths['/api/v1/external/support/tickets/{id}'].get.responses['404']);
    });

    test('unknown routes under the base still need a token; the document does not', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      assert.equal((await app.inject({ url: '/api/v1/external/openapi.yaml' })).statusCode, 401);
      assert.equal((await app.inject({ url: '/api/v1/external/nope' })).statusCode, 401);
      const { token } = await createPortal(services);
      const withToken = await app.inject({ url: OPENAPI_URL, headers: { authorization: token } });
      assert.equal(withToken.statusCode, 200);
      assert.equal(concreteUrl('/a/:id'), '/a/x_auth_suite_id');
    });

    test('/docs is served locally: the page and its script, nothing from another origin', async (t) => {
      const { app } = await buildTestApp(t, backend);
      const redirect = await app.inject({ url: '/docs' });
      assert.equal(redirect.statusCode, 301);
      const page = await app.inject({ url: '/docs/' });
      assert.equal(page.statusCode, 200);
      assert.match(page.headers['content-type'] as string, /^text\/html/);
      const scripts = [...page.body.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]!);
      assert.deepEqual(scripts, ['js/scalar.js']);
      assert.doesNotMatch(page.body, /https?:\/\//);
      assert.match(page.body, /"withDefaultFonts": false/);
      // Its own policy lets its same-origin script and inline bootstrap run (the app's strict
      // default-src 'none' would blank the page), and nothing from another origin.
      const csp = page.headers['content-security-policy'] as string;
      assert.match(csp, /script-src 'self' 'unsafe-inline'/);
      assert.match(csp, /default-src 'self'/);
      assert.doesNotMatch(csp, /https?:|\*/);
      const script = await app.inject({ url: '/docs/js/scalar.js' });
      assert.equal(script.statusCode, 200);
      assert.match(script.headers['content-type'] as string, /javascript/);
      assert.ok(script.body.length > 100_000);
      const spec = await app.inject({ url: '/docs/openapi.json' });
      assert.equal(spec.statusCode, 200);
      assert.equal(spec.json().openapi, '3.1.0');
    });
  });
}
