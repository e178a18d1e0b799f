/**
 * The logger's redaction list, tested directly: for every redacted path, one object shaped like
 * it (as the code that logs it would build it) goes through the real logger into a captured
 * stream, and its secret never comes out. The shapes are listed here, not derived from
 * REDACTED_PATHS, so emptying or shortening that list fails this test.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { createLogger, REDACTED_PATHS } from '../../src/platform/logger.ts';
import { captureLogs } from '../helpers/app.ts';

/** Each redacted path → a loggable object carrying `secret` at that path. */
const SHAPES: Record<string, (secret: string) => Record<string, unknown>> = {
  // A raw request logged by hand; the `req` serializer keeps only method and path as well.
  'req.headers.authorization': (s) => ({
    req: { method: 'GET', url: '/api/v1/external/auth/verify', headers: { authorization: s } },
  }),
  'req.headers["x-api-key"]': (s) => ({
    req: { method: 'GET', url: '/api/v1/external/auth/verify', headers: { 'x-api-key': s } },
  }),
  'req.headers.cookie': (s) => ({
    req: { method: 'GET', url: '/settings', headers: { cookie: `portico_session=${s}` } },
  }),
  // A response logged by hand (no serializer for `res`: redaction alone protects it).
  'res.headers["set-cookie"]': (s) => ({
    res: { statusCode: 303, headers: { 'set-cookie': [`portico_session=${s}; HttpOnly`] } },
  }),
  // Headers logged on their own, e.g. of an outbound call.
  'headers.authorization': (s) => ({ headers: { authorization: `Bearer ${s}` } }),
  'headers["x-api-key"]': (s) => ({ headers: { 'x-api-key': s } }),
  'headers.cookie': (s) => ({ headers: { cookie: `portico_session=${s}` } }),
  'headers["set-cookie"]': (s) => ({ headers: { 'set-cookie': [`portico_oauth_state=${s}`] } }),
  // Secrets one level down in any logged object.
  '*.password': (s) => ({ body: { email: 'admin@acme.test', password: s } }),
  '*.token': (s) => ({ connection: { portalId: 1, token: s } }),
  '*.accessToken': (s) => ({ provider: { accessToken: s, expiresIn: 3600 } }),
  '*.access_token': (s) => ({ response: { access_token: s, token_type: 'bearer' } }),
  '*.client_secret': (s) => ({ form: { client_id: '123', client_secret: s, code: 'c' } }),
  '*.authorizationCode': (s) => ({ callback: { authorizationCode: s, state: 'st' } }),
};

/**
 * The value at `path` in a logged line (pino's syntax: dots and `["quoted"]` keys); `*` stands
 * for the one top-level key of the object that was logged.
 */
function valueAt(line: Record<string, unknown>, path: string, logged: object): unknown {
  const keys = [...path.matchAll(/([^.[\]"]+)|\["([^"]+)"\]/g)].map((m) => m[1] ?? m[2]!);
  let node: unknown = line;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key === '*' ? Object.keys(logged)[0]! : key];
  }
  return node;
}

describe('logger redaction', () => {
  test('every path of the redaction list has a shape here, and no shape lacks its path', () => {
    assert.deepEqual([...REDACTED_PATHS].sort(), Object.keys(SHAPES).sort());
  });

  for (const [path, shape] of Object.entries(SHAPES)) {
    test(`${path}: the secret never reaches the log line`, () => {
      const { logs, stream } = captureLogs();
      const logger = createLogger('info', stream);
      const secret = `s3cret${randomBytes(12).toString('hex')}`;
      const object = shape(secret);
      logger.info(object, 'logged by hand');
      logger.child({ component: 'test' }).warn(object, 'logged through a child');
      assert.equal(logs.length, 2);
      for (const raw of logs) {
        assert.ok(!raw.includes(secret), `${path} leaked: ${raw}`);
        const line = JSON.parse(raw) as Record<string, unknown>;
        // Censored in place, unless a serializer dropped the field altogether (`req`).
        const at = valueAt(line, path, object);
        if (!path.startsWith('req.')) assert.equal(at, '[REDACTED]', `${path} in ${raw}`);
        else assert.ok(at === undefined || at === '[REDACTED]', `${path} in ${raw}`);
      }
    });
  }
});
