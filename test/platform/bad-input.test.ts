/**
 * Bad input that once reached a 500: each now gets the 4xx envelope, changes nothing,
 * leaves no user value in the log, and the server keeps serving. Storage failures are 503.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const TICKETS = '/api/v1/external/support/tickets';

for (const backend of backends()) {
  describe(`bad input (${backend.name})`, () => {
    test('a NUL character in a stored value → 400 invalid_request, nothing stored, not logged', async (t) => {
      const { app, services, logs } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const headers = { authorization: token, 'content-type': 'application/json' };
      for (const body of [
        { subject: 'nul-subject-\u0000-marker', description: 'x' },
        { subject: 'ok', description: 'x', tags: ['nul-tag-\u0000-marker'] },
      ]) {
        const res = await app.inject({ method: 'POST', url: TICKETS, headers, payload: body });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().error.code, 'invalid_request');
      }
      const byId = await app.inject({ url: `${TICKETS}/tkt_%00`, headers });
      assert.ok([400, 404].includes(byId.statusCode), byId.body);
      assert.equal(byId.json().success, false);
      const list = await app.inject({ url: TICKETS, headers });
      assert.deepEqual(list.json().data.items, []);
      assert.ok(!logs.some((l) => l.includes('-marker')), 'no submitted value in the log');
    });

    test('the router’s own refusals get the envelope and do not echo the path', async (t) => {
      const { app } = await buildTestApp(t, backend);
      for (const url of ['/%E0%A4%A', `${TICKETS}/%ff`, `${TICKETS}/${'a'.repeat(300)}`]) {
        const res = await app.inject({ url });
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode}`);
        const body = res.json();
        assert.equal(body.success, false);
        assert.equal(typeof body.error.requestId, 'string');
        assert.ok(!res.body.includes('%E0') && !res.body.includes('aaaaaaaaaa'));
      }
    });

    test('an X-Request-Id shaped like an API token is not echoed', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const { token } = await createPortal(services);
      const res = await app.inject({ url: '/healthz', headers: { 'x-request-id': token } });
      assert.notEqual(res.headers['x-request-id'], token);
      assert.ok(!String(res.headers['x-request-id']).includes('ptk_'));
    });

    test('storage gone → 503 unavailable on the API, not 500', async (t) => {
      const { app, services } = await buildTestApp(t, backend, { TOKEN_CACHE_SIZE: '0' });
      const { token } = await createPortal(services);
      await services.storage.close();
      const res = await app.inject({
        url: '/api/v1/external/auth/verify',
        headers: { authorization: token },
      });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().error.code, 'unavailable');
    });
  });
}
