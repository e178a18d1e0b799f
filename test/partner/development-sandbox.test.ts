import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { builtEntry, spawnNode, type Hookable } from '../helpers/spawn.ts';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * Run src/main.ts with `env` (and nothing from the developer's environment or .env); it is
 * killed in `t.after` whatever happens.
 */
function start(t: Hookable, env: Record<string, string>) {
  return spawnNode(t, builtEntry('main'), {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    cwd: mkdtempSync(join(tmpdir(), 'portico-cwd-')),
  });
}

describe('npm start and the sandbox provider', () => {
  test('development without PROVIDER_APP_ID starts the sandbox and says so', async (t) => {
    const [port, sandboxPort] = [await freePort(), await freePort()];
    const run = start(t, {
      NODE_ENV: 'development',
      PORT: String(port),
      SANDBOX_PROVIDER_PORT: String(sandboxPort),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-dev-')),
    });
    await run.waitForLine(/Portico is serving/, 'the development server did not start');
    assert.match(run.stdout(), /started the sandbox provider/);
    const res = await fetch(`http://127.0.0.1:${sandboxPort}/sandbox/apps`);
    assert.equal(res.status, 200);
    const dialog = await fetch(
      `http://127.0.0.1:${sandboxPort}/v21.0/dialog/oauth?${new URLSearchParams({
        client_id: /"appId":"(sandbox[A-Za-z0-9]+)"/.exec(run.stdout())![1]!,
        redirect_uri: `http://localhost:${port}/api/auth/partner/callback`,
        response_type: 'code',
        state: 's',
      })}`,
    );
    assert.equal(dialog.status, 200, 'the sandbox knows the app and its redirect URI');
    assert.equal(await run.stop('SIGTERM'), 0);
  });

  test('production pointed at the sandbox refuses to start, one line', async (t) => {
    const key = `k:${Buffer.alloc(32, 7).toString('base64')}`;
    const run = start(t, {
      NODE_ENV: 'production',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-prod-')),
      APP_BASE_URL: 'https://portico.example.com',
      TOKEN_ENCRYPTION_KEYS: key,
      PROVIDER_APP_ID: '123',
      PROVIDER_APP_SECRET: 'a-secret-that-is-long-enough',
      PROVIDER_REDIRECT_URI: 'https://portico.example.com/api/auth/partner/callback',
      PROVIDER_AUTHORIZATION_BASE_URL: 'https://127.0.0.1:3001',
      PROVIDER_GRAPH_BASE_URL: 'https://127.0.0.1:3001',
    });
    assert.equal(await run.waitForExit('production did not refuse to start'), 1);
    assert.match(run.stderr(), /^portico: PROVIDER_AUTHORIZATION_BASE_URL: points at the sandbox/);
    assert.equal(run.stderr().trim().split('\n').length, 1);
    assert.ok(!run.stderr().includes('a-secret-that-is-long-enough'));
    assert.ok(!run.stdout().includes('sandbox provider'));
  });
});
