/**
 * A token sent in a URL path never reaches a log line: the access line masks token-shaped path
 * segments, and so do the `req` and `err` serializers and string messages of the real logger.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp, captureLogs, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const backend = backends()[0]!;

/** The token's random part: what must never be written, whatever surrounds it. */
const secretPart = (token: string) => token.slice('ptk_'.length);

/** `text` with every character percent-encoded, as a client could send it. */
const percentEncoded = (text: string) =>
  [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

describe('a token in the URL path', () => {
  test('is masked in the access line of a real HTTP request', async (t) => {
    const { app, services, logs } = await buildTestApp(t, backend);
    const { token } = await createPortal(services);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });

    const cases: [string, Record<string, string>, number, string][] = [
      // A client that put its token where a resource id goes, with a valid token header.
      [
        `/api/v1/external/${token}?x=1`,
        { authorization: token },
        404,
        '/api/v1/external/[REDACTED]',
      ],
      // The same without a header: refused before routing, still logged with its path.
      [`/api/v1/external/tickets/${token}`, {}, 401, '/api/v1/external/tickets/[REDACTED]'],
      // Outside the API base, upper-cased prefix, a suffix in the same segment.
      [`/settings/PTK_${secretPart(token)}.json`, {}, 404, '/settings/[REDACTED]'],
      // Percent-encoded: the log shows the raw path, which decodes to the token.
      [`/api/v1/external/${percentEncoded(token)}`, {}, 401, '/api/v1/external/[REDACTED]'],
    ];
    for (const [path, headers, status, logged] of cases) {
      const res = await fetch(`${base}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
      assert.equal(res.status, status, path);
      const requestId = res.headers.get('x-request-id');
      const lines = logs
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.reqId === requestId && l.msg === 'request completed');
      assert.equal(lines.length, 1, path);
      assert.equal(lines[0]!.path, logged, path);
    }
    assert.ok(logs.length > 0);
    for (const line of logs) assert.ok(!line.includes(secretPart(token)), line);
  });

  test('is masked in error logs that serialise the request, an error or a message', () => {
    const { logs, stream } = captureLogs();
    const logger = createLogger('info', stream);
    const token = `ptk_${'a1B2c3'.repeat(8)}XyZ`;
    // What Fastify's error logs pass (`{ req: request }`), shaped as the serializer reads it.
    logger.error({ req: { method: 'GET', url: `/api/v1/external/${token}?q=1` } }, 'failed');
    // An error quoting the URL, like Fastify's FST_ERR_REP_ALREADY_SENT.
    logger.warn({ err: new Error(`Reply was already sent in "/api/v1/external/${token}"`) });
    // Fastify's own string messages ("Route GET:/… not found").
    logger.info(`Route GET:/api/v1/external/${token} not found`);

    assert.equal(logs.length, 3);
    for (const line of logs) assert.ok(!line.includes(secretPart(token)), line);
    const [req, err, msg] = logs.map((l) => JSON.parse(l) as Record<string, unknown>) as [
      Record<string, { path?: string; message?: string }>,
      Record<string, { path?: string; message?: string }>,
      Record<string, unknown>,
    ];
    assert.deepEqual(req.req, { method: 'GET', path: '/api/v1/external/[REDACTED]' });
    assert.equal(err.err?.message, 'Reply was already sent in "/api/v1/external/[REDACTED]"');
    assert.equal(msg.msg, 'Route GET:/api/v1/external/[REDACTED] not found');
  });
});
