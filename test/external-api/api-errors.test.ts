/**
 * The API's errors as a client meets them: every validation problem at once in words, the 413
 * naming the limit, a trailing slash as an unknown path, a wrong method as 405 with `Allow`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const BASE = '/api/v1/external';
const TICKETS = `${BASE}/support/tickets`;
/** Phrases of Ajv and TypeBox that must never reach a client. */
const VALIDATOR_WORDING =
  /NOT|##|identical|>=|<=|allowed values|must match pattern|anyOf|\bparams\b/;

for (const backend of backends()) {
  describe(`API errors (${backend.name})`, () => {
    test('a body with five problems gets five details, each a field and words', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const res = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: token },
        payload: {
          subject: '',
          description: '   ',
          priority: 'asap',
          tags: ['a', 'a'],
          colour: 'red',
        },
      });
      assert.equal(res.statusCode, 400);
      const { error } = res.json();
      assert.equal(error.code, 'invalid_request');
      assert.deepEqual(
        [...error.details].sort((a: { field: string }, b: { field: string }) =>
          a.field.localeCompare(b.field),
        ),
        [
          { field: 'body.colour', message: 'is not a known field' },
          { field: 'body.description', message: 'must not be blank' },
          { field: 'body.priority', message: 'must be one of: low, normal, high, urgent' },
          { field: 'body.subject', message: 'must not be empty' },
          { field: 'body.tags', message: 'must not contain the same value twice' },
        ],
      );
      for (const d of error.details) assert.doesNotMatch(d.message, VALIDATOR_WORDING);
      assert.deepEqual(
        (await app.inject({ url: TICKETS, headers: { authorization: token } })).json().data.items,
        [],
        'nothing was created',
      );

      const missing = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: token },
        payload: { tags: { a: 1 }, category: [1, 2] },
      });
      assert.deepEqual(
        missing.json().error.details.map((d: { field: string; message: string }) => d),
        [
          { field: 'body.subject', message: 'is required' },
          { field: 'body.description', message: 'is required' },
          { field: 'body.category', message: 'must be a string' },
          { field: 'body.tags', message: 'must be an array' },
        ],
      );
    });

    test('query problems: bounds and enums in words', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const res = await app.inject({
        url: `${TICKETS}?limit=0&status=archived`,
        headers: { authorization: token },
      });
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json().error.details, [
        { field: 'querystring.limit', message: 'must be at least 1' },
        {
          field: 'querystring.status',
          message: 'must be one of: new, open, pending, solved, closed',
        },
      ]);
      const many = await app.inject({
        url: `${TICKETS}?limit=101`,
        headers: { authorization: token },
      });
      assert.deepEqual(many.json().error.details, [
        { field: 'querystring.limit', message: 'must be at most 100' },
      ]);
      const word = await app.inject({
        url: `${TICKETS}?limit=ten`,
        headers: { authorization: token },
      });
      assert.deepEqual(word.json().error.details, [
        { field: 'querystring.limit', message: 'must be a whole number' },
      ]);
    });

    test('413 states the limit', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const res = await app.inject({
        method: 'POST',
        url: TICKETS,
        headers: { authorization: token, 'content-type': 'application/json' },
        payload: JSON.stringify({ subject: 's', description: 'x'.repeat(70_000) }),
      });
      assert.equal(res.statusCode, 413);
      assert.equal(res.json().error.code, 'payload_too_large');
      assert.equal(res.json().error.message, 'The request body is over the limit of 64 KiB.');
    });

    test('a trailing slash is an unknown path, never a parameter error', async (t) => {
      const { app, services, logs } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      for (const url of [`${TICKETS}/`, `${BASE}/crm/contacts/`]) {
        const anonymous = await app.inject({ url });
        assert.equal(anonymous.statusCode, 401, `${url} needs a token like any path`);
        const res = await app.inject({ url, headers: { authorization: token } });
        assert.equal(res.statusCode, 404, url);
        assert.equal(res.json().error.code, 'not_found');
        assert.equal(
          res.json().error.message,
          'No GET route matches this path (paths do not end with a slash).',
        );
        assert.equal(res.json().error.details, undefined);
      }
      const list = await app.inject({ url: TICKETS, headers: { authorization: token } });
      assert.equal(list.statusCode, 200);
      // The answer stops the request: the route's handler never runs after it.
      assert.ok(!logs.some((line) => /already sent|request failed/i.test(line)), logs.join('\n'));
      // A wildcard may be empty: the reference page at /docs/ is served.
      assert.equal((await app.inject({ url: '/docs/' })).statusCode, 200);
    });

    test('a wrong method on a known path is 405 with Allow, in the envelope', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const cases: [string, string, string][] = [
        ['DELETE', TICKETS, 'GET, HEAD, POST'],
        ['PUT', `${TICKETS}/tkt_123`, 'GET, HEAD, PATCH'],
        ['POST', `${BASE}/auth/verify`, 'GET, HEAD'],
        ['POST', `${BASE}/crm/contacts/ct_1`, 'DELETE, GET, HEAD, PATCH'],
      ];
      for (const [method, url, allow] of cases) {
        const anonymous = await app.inject({ method: method as 'PUT', url });
        assert.equal(anonymous.statusCode, 401, `${method} ${url}: the token comes first`);
        const res = await app.inject({
          method: method as 'PUT',
          url,
          headers: { authorization: token },
        });
        assert.equal(res.statusCode, 405, `${method} ${url}`);
        assert.equal(res.headers.allow, allow, `${method} ${url}`);
        assert.deepEqual(Object.keys(res.json()), ['success', 'error']);
        assert.equal(res.json().error.code, 'method_not_allowed');
        assert.equal(res.json().error.message, `This path does not take ${method}.`);
        assert.ok(res.headers['x-request-id']);
      }
      // A path no route matches stays 404, whatever the method.
      const unknown = await app.inject({
        method: 'DELETE',
        url: `${BASE}/nope`,
        headers: { authorization: token },
      });
      assert.equal(unknown.statusCode, 404);
      // Outside the API too: the probes take GET only.
      const probe = await app.inject({ method: 'POST', url: '/healthz' });
      assert.equal(probe.statusCode, 405);
      assert.match(String(probe.headers.allow), /GET/);
    });
  });
}
