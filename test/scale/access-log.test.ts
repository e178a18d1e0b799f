import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const backend = backends()[0]!;

describe('access log', () => {
  test('one line per request: reqId, method, path without query, status, time', async (t) => {
    const { app, services, logs } = await buildTestApp(t, backend);
    const { token } = await createPortal(services);
    const res = await app.inject({
      url: '/api/v1/external/auth/verify?state=secret-looking',
      headers: { authorization: token },
    });
    assert.equal(res.statusCode, 200);
    const lines = logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.reqId === res.headers['x-request-id']);
    assert.equal(lines.length, 1);
    const [line] = lines as [Record<string, unknown>];
    assert.equal(line.msg, 'request completed');
    assert.equal(line.method, 'GET');
    assert.equal(line.path, '/api/v1/external/auth/verify');
    assert.equal(line.statusCode, 200);
    assert.equal(typeof line.responseTime, 'number');
    assert.ok(!logs.some((l) => l.includes('incoming request')));
    assert.ok(!logs.some((l) => l.includes(token) || l.includes('secret-looking')));
  });

  test('routes that log at warn (/healthz) write no access line', async (t) => {
    const { app, logs } = await buildTestApp(t, backend);
    const before = logs.length;
    assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
    assert.equal(logs.length, before);
  });
});
