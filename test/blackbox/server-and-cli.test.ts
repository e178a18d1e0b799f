/**
 * Black box: the real server process with a temporary data directory, the real CLI, verify over
 * HTTP with fetch. The CLI hands its commands to the running server over the admin socket.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, describe, test } from 'node:test';
import {
  runCli,
  startServer,
  suiteCleanup,
  tempDataDir,
  type RunningServer,
} from '../helpers/spawn.ts';

const VERIFY = '/api/v1/external/auth/verify';

describe('server + CLI on the embedded database', () => {
  const env = { DATA_DIR: tempDataDir() };
  let server: RunningServer;
  let token = '';
  let portalCode = '';
  // Servers outlive the test that starts them, so the suite's `after` stops them.
  const suite = suiteCleanup();
  after(() => suite.run());

  const verify = (headers: Record<string, string>) =>
    fetch(`${server.url}${VERIFY}`, { headers: { accept: 'application/json', ...headers } });

  test('start, create a portal with the CLI (through the admin socket)', async (t) => {
    server = await startServer(suite, env);
    const res = await runCli(
      t,
      ['portal', 'create', '--name', 'Acme', '--admin-email', 'admin@acme.test', '--json'],
      env,
    );
    assert.equal(res.code, 0, res.stderr);
    const created = JSON.parse(res.stdout);
    assert.deepEqual(Object.keys(created).sort(), ['portalCode', 'scopes', 'token', 'userId']);
    assert.match(created.portalCode, /^[0-9]+$/);
    ({ token, portalCode } = created);
  });

  test('verify over HTTP: both header methods, both, none, wrong, bad checksum', async () => {
    for (const headers of [{ authorization: token }, { 'x-api-key': token }]) {
      const res = await verify(headers);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type')!, /^application\/json/);
      const body = (await res.json()) as {
        success: boolean;
        data: { portalCode: string; isMainAdmin: boolean };
      };
      assert.equal(body.success, true);
      assert.equal(body.data.portalCode, portalCode);
      assert.equal(body.data.isMainAdmin, true);
    }
    const cases: [Record<string, string>, number, string][] = [
      [{ authorization: token, 'x-api-key': token }, 400, 'invalid_request'],
      [{}, 401, 'missing_token'],
      [{ authorization: 'ptk_wrong' }, 401, 'invalid_token'],
      [
        { authorization: `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}` },
        401,
        'invalid_token',
      ],
    ];
    for (const [headers, status, code] of cases) {
      const res = await verify(headers);
      assert.equal(res.status, status);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, code);
      assert.ok(res.headers.get('x-request-id'));
    }
  });

  test('regenerate: old token 401 at once, new token 200', async (t) => {
    const res = await runCli(t, ['token', 'regenerate', '--portal', portalCode, '--json'], env);
    assert.equal(res.code, 0, res.stderr);
    const { token: fresh } = JSON.parse(res.stdout);
    assert.equal((await verify({ authorization: token })).status, 401);
    assert.equal((await verify({ authorization: fresh })).status, 200);
    token = fresh;
  });

  test('requests the HTTP parser refuses still get the envelope; the server keeps serving', async () => {
    const { port } = new URL(server.url);
    const raw = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(head));
        let out = '';
        socket.on('data', (c: Buffer) => (out += c.toString('latin1')));
        socket.on('end', () => resolve(out));
        socket.on('error', reject);
      });
    const control = await raw(
      `GET ${VERIFY} HTTP/1.1\r\nHost: x\r\nAuthorization: ptk_a\u0001b\r\n\r\n`,
    );
    assert.match(control, /^HTTP\/1\.1 400 /);
    assert.match(control, /"code":"invalid_request"/);
    const huge = await raw(
      `GET ${VERIFY} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    assert.match(huge, /^HTTP\/1\.1 431 /);
    assert.match(huge, /"success":false/);
    assert.equal((await verify({ authorization: token })).status, 200);
  });

  test('the log never holds a token', () => {
    const all = server.output.join('\n');
    assert.ok(!all.includes(token.slice(4, 30)));
  });

  test('a second server on the same data directory is refused with a clear message', async (t) => {
    await assert.rejects(startServer(t, env), /in use by another Portico process/);
  });

  test('restart keeps portals and tokens', async (t) => {
    assert.equal(await server.stop(), 0);
    // With no server running, the CLI opens the data directory itself.
    const show = await runCli(t, ['portal', 'show', '--portal', portalCode, '--json'], env);
    assert.equal(show.code, 0, show.stderr);
    assert.equal(JSON.parse(show.stdout).token.hint, token.slice(-4));
    assert.ok(!show.stdout.includes(token));
    server = await startServer(suite, env);
    assert.equal((await verify({ 'x-api-key': token })).status, 200);
  });
});
