import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { compileErrors, validate } from '@readme/openapi-parser';
import { SCOPES } from '../../src/accounts/scopes.ts';
import { MESSAGE_TYPES } from '../../src/db/schema/messages.ts';
import { OPENAPI_URL } from '../../src/app.ts';
import { ERROR_CODES } from '../../src/platform/errors.ts';
import { concreteUrl, protectedRoutes } from '../helpers/auth-suite.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

/** Fastify's `/a/:id` → OpenAPI's `/a/{id}`. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');
const ERROR_REF = '#/components/schemas/Error';

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
        // API keys, not OAuth: no scope names in the requirement (they are in the
        // description, `x-required-scopes` and the schemes' catalog).
        assert.deepEqual(operation.security, [{ AuthorizationHeader: [] }, { ApiKeyHeader: [] }]);
        for (const scope of scopes) assert.ok(operation.description.includes(scope));
        const statuses = Object.keys(operation.responses);
        for (const s of ['400', '401', '429', '500', '503']) {
          assert.ok(statuses.includes(s), `${route.method} ${route.url} documents ${s}`);
        }
        if (scopes.length) assert.ok(statuses.includes('403'));
        const unauthorized = operation.responses['401'];
        assert.deepEqual(unauthorized.content['application/json'].schema.$ref, ERROR_REF);
        assert.match(unauthorized.description, /`missing_token`.*`invalid_token`/);
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

    test('generates good clients: operationIds, named schemas, enums, honest required', async (t) => {
      const { app, config } = await buildTestApp(t, backend);
      const doc = (await app.inject({ url: OPENAPI_URL })).json();
      assert.deepEqual(doc.servers, [
        { url: config.APP_BASE_URL, description: 'This Portico server.' },
      ]);
      assert.match(doc.info.contact.url, /^http/);

      const ids = new Set<string>();
      for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(
        doc.paths,
      )) {
        for (const [method, operation] of Object.entries(item)) {
          const id = operation.operationId as string;
          assert.match(id, /^[a-z][A-Za-z0-9]+$/, `${method} ${path}`);
          assert.ok(!ids.has(id), `${id} is unique`);
          ids.add(id);
          for (const [status, response] of Object.entries<{ description: string }>(
            operation.responses as Record<string, { description: string }>,
          )) {
            assert.match(status, /^[1-5]\d\d$/, `${method} ${path}: no 4XX range`);
            assert.notEqual(
              response.description,
              'Default Response',
              `${method} ${path} ${status}`,
            );
          }
          for (const p of (operation.parameters as {
            name: string;
            in: string;
            required?: boolean;
            schema: { default?: unknown };
          }[]) ?? []) {
            // Required exactly when the server refuses the request without it.
            assert.equal(p.required === true, p.in === 'path', `${method} ${path} ${p.name}`);
          }
        }
      }
      for (const id of [
        'verifyApiToken',
        'createSupportTicket',
        'listSupportTickets',
        'readSupportTicket',
        'listContacts',
        'updateContact',
      ]) {
        assert.ok(ids.has(id), id);
      }

      const schemas = doc.components.schemas;
      for (const name of [
        'Ticket',
        'Contact',
        'Error',
        'ErrorDetail',
        'Verification',
        'TicketPage',
      ]) {
        assert.ok(schemas[name], name);
      }
      const ref = (name: string) => `#/components/schemas/${name}`;
      assert.equal(schemas.TicketEnvelope.properties.data.$ref, ref('Ticket'));
      assert.equal(schemas.TicketPage.properties.data.properties.items.items.$ref, ref('Ticket'));
      assert.equal(schemas.Ticket.properties.priority.$ref, ref('TicketPriority'));
      assert.deepEqual(schemas.TicketPriority.enum, ['low', 'normal', 'high', 'urgent']);
      assert.deepEqual(schemas.Scope.enum, [...SCOPES]);
      assert.deepEqual(schemas.Error.properties.error.$ref, ref('ErrorBody'));
      assert.deepEqual(schemas.ErrorBody.properties.code.enum, ERROR_CODES);
      assert.deepEqual(schemas.CreateTicketRequest.required, ['subject', 'description']);
      const create = doc.paths['/api/v1/external/support/tickets'].post;
      assert.equal(
        create.requestBody.content['application/json'].schema.$ref,
        ref('CreateTicketRequest'),
      );
      assert.equal(
        create.responses['201'].content['application/json'].schema.$ref,
        ref('TicketEnvelope'),
      );
      // A send: one schema per kind, told apart by `type`, each named.
      const send = doc.paths['/api/v1/external/messaging/messages'].post;
      assert.equal(
        send.requestBody.content['application/json'].schema.$ref,
        ref('SendMessageRequest'),
      );
      const kinds = schemas.SendMessageRequest;
      assert.equal(kinds.oneOf.length, MESSAGE_TYPES.length);
      assert.deepEqual(kinds.discriminator, {
        propertyName: 'type',
        mapping: Object.fromEntries(
          MESSAGE_TYPES.map((k) => [k, ref(`Send${k[0]!.toUpperCase()}${k.slice(1)}Message`)]),
        ),
      });
      for (const branch of kinds.oneOf)
        assert.ok(schemas[branch.$ref.split('/').at(-1)], branch.$ref);
      assert.deepEqual(
        Object.keys(schemas.SendInteractiveMessage.properties.interactive.discriminator.mapping),
        ['button', 'list', 'cta_url'],
      );
      const verify = doc.paths['/api/v1/external/auth/verify'].get.responses['200'];
      assert.equal(verify.content['application/json'].schema.$ref, ref('VerificationEnvelope'));
      // No one-value anyOf, no anyOf of constants: enums are `enum`.
      const text = JSON.stringify(doc);
      assert.doesNotMatch(text, /"anyOf":\[\{"const"/);
      assert.doesNotMatch(text, /"const":"/);
      // The schemes describe every scope of the catalog.
      for (const scope of SCOPES) {
        assert.ok(doc.components.securitySchemes.AuthorizationHeader.description.includes(scope));
      }
    });

    test('every success response is a named schema (a generated client names its type)', async (t) => {
      const { app } = await buildTestApp(t, backend);
      const doc = (await app.inject({ url: OPENAPI_URL })).json();
      const anonymous: string[] = [];
      let messaging = 0;
      for (const [path, item] of Object.entries<Record<string, { responses: object }>>(doc.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          for (const [status, response] of Object.entries<{
            content?: Record<string, { schema: { $ref?: string } }>;
          }>(operation.responses as Record<string, never>)) {
            const schema = response.content?.['application/json']?.schema;
            if (!status.startsWith('2') || !schema) continue;
            if (path.includes('/messaging/')) messaging++;
            if (schema.$ref === undefined) anonymous.push(`${method} ${path} ${status}`);
          }
        }
      }
      assert.equal(messaging, 34, 'the messaging operations');
      assert.deepEqual(anonymous, []);
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
      assert.equal(scripts.length, 1);
      assert.match(scripts[0]!, /^js\/scalar\.js\?v=[A-Za-z0-9_-]{16}$/);
      assert.doesNotMatch(page.body, /https?:\/\//);
      assert.match(page.body, /"withDefaultFonts": false/);
      // Its own policy lets its same-origin script and inline bootstrap run (the app's strict
      // default-src 'none' would blank the page), and nothing from another origin: the
      // bootstrap by its hash, never 'unsafe-inline' scripts.
      const csp = page.headers['content-security-policy'] as string;
      const scriptSrc = csp.split('; ').find((d) => d.startsWith('script-src '));
      const inline = [...page.body.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)]
        .filter((m) => !m[0].includes(' src='))
        .map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
      assert.equal(inline.length, 1, 'one inline bootstrap');
      assert.equal(scriptSrc, `script-src 'self' ${inline.join(' ')}`);
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
