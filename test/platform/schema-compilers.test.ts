/**
 * The route schemas compile at first use, not while the app starts, and every one of them
 * compiles (src/platform/schema-compilers.ts). The rest of the suite never runs the warm-up, so
 * every other test goes through the stand-ins too.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import {
  compilePendingSchemas,
  pendingSchemaCount,
  sharedSchemaCompilers,
} from '../../src/platform/schema-compilers.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const [backend] = backends();

test('the app starts with its route schemas uncompiled; every one compiles afterwards', async (t) => {
  const before = pendingSchemaCount();
  const { app, services } = await buildTestApp(t, backend!);
  await app.ready();
  assert.ok(pendingSchemaCount() - before > 50, `${pendingSchemaCount() - before} left`);

  await compilePendingSchemas();
  assert.equal(pendingSchemaCount(), 0);

  // The compiled functions behind the stand-ins: a refusal with Ajv's message, then an answer.
  const { token } = await createPortal(services);
  const url = '/api/v1/external/support/tickets';
  const bad = await app.inject({ url: `${url}?limit=0`, headers: { authorization: token } });
  assert.equal(bad.statusCode, 400, bad.body);
  assert.match(JSON.stringify(bad.json().error), /limit/);
  const good = await app.inject({ url: `${url}?limit=2`, headers: { authorization: token } });
  assert.equal(good.statusCode, 200, good.body);
  assert.deepEqual(good.json().data.items, []);
});

test('a stand-in validates, coerces, fills defaults and serializes as the compiled function', async (t) => {
  const app = Fastify({ schemaController: { compilersFactory: sharedSchemaCompilers } });
  t.after(() => app.close());
  const schema = {
    querystring: {
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, default: 20 } },
      additionalProperties: false,
    },
    response: {
      200: { type: 'object', properties: { limit: { type: 'integer' } } },
    },
  };
  app.get('/', { schema }, async (request) => ({ ...(request.query as object), secret: 'x' }));
  await app.ready();

  const defaulted = await app.inject({ url: '/' });
  assert.deepEqual(defaulted.json(), { limit: 20 }, 'default filled, unknown field not serialized');
  assert.deepEqual((await app.inject({ url: '/?limit=7' })).json(), { limit: 7 }, 'coerced');
  const refused = await app.inject({ url: '/?limit=nope' });
  assert.equal(refused.statusCode, 400);
  assert.match(refused.json().message, /querystring\/limit must be integer/);
});

test('a schema that does not compile: the warm-up rejects, its route answers 500, others serve', async (t) => {
  const app = Fastify({ schemaController: { compilersFactory: sharedSchemaCompilers } });
  t.after(() => app.close());
  app.get('/broken', { schema: { querystring: { type: 'no-such-type' } } }, async () => 'never');
  app.get('/fine', async () => 'ok');
  await app.ready();

  const invalid = /schema is invalid|JSONType/;
  await assert.rejects(compilePendingSchemas(), invalid);
  assert.equal((await app.inject({ url: '/broken' })).statusCode, 500);
  assert.equal((await app.inject({ url: '/fine' })).body, 'ok');
  // The HEAD route Fastify adds beside the GET has its own stand-in: it fails the same way.
  await assert.rejects(compilePendingSchemas(), invalid);
  assert.equal(pendingSchemaCount(), 0);
});
