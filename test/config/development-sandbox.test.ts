/**
 * The development sandbox (`npm start` in development without PROVIDER_APP_ID) registers its
 * app with the configured PROVIDER_APP_SECRET when one is set, instead of replacing it with a
 * random one that is never printed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../src/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { startDevelopmentSandbox } from '../../src/sandbox-provider/development.ts';

const SECRET = 'a-configured-development-app-secret-0123';

/** Whether the sandbox accepts `{appId}|{secret}` as its app's access token (debug_token). */
async function acceptsAppToken(url: string, appId: string, secret: string): Promise<boolean> {
  const res = await fetch(`${url}/debug_token?input_token=x`, {
    headers: { authorization: `Bearer ${appId}|${secret}` },
  });
  return res.status === 200;
}

test('a configured PROVIDER_APP_SECRET is kept; without one a random secret is made', async (t) => {
  const base = {
    NODE_ENV: 'development',
    SANDBOX_PROVIDER_PORT: '0',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-dev-')),
  };
  const logger = createLogger('silent');
  const kept = await startDevelopmentSandbox(
    parseConfig({ ...base, PROVIDER_APP_SECRET: SECRET }),
    logger,
  );
  t.after(() => kept.sandbox.close());
  assert.equal(kept.config.PROVIDER_APP_SECRET, SECRET);
  const appId = kept.config.PROVIDER_APP_ID!;
  assert.ok(await acceptsAppToken(kept.sandbox.url, appId, SECRET), 'the sandbox knows it');
  assert.ok(!(await acceptsAppToken(kept.sandbox.url, appId, 'another-secret')));

  // A data directory of its own: the first one now holds the saved app with its secret, which
  // a restart without PROVIDER_APP_SECRET takes back (the next test).
  const fresh = { ...base, DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-dev-')) };
  const made = await startDevelopmentSandbox(parseConfig(fresh), logger);
  t.after(() => made.sandbox.close());
  assert.match(made.config.PROVIDER_APP_SECRET ?? '', /^[0-9A-Za-z]{32,}$/);
});

test('the development sandbox comes back with its app, grants and tokens from the data directory', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-dev-'));
  const config = parseConfig({
    NODE_ENV: 'development',
    SANDBOX_PROVIDER_PORT: '0',
    DATA_DIR: dataDir,
  });
  const logger = createLogger('silent');
  const first = await startDevelopmentSandbox(config, logger);
  const appId = first.config.PROVIDER_APP_ID!;
  const code = first.sandbox.authorize({
    appId,
    redirectUri: first.config.PROVIDER_REDIRECT_URI!,
    userId: '100012345678',
  });
  const exchanged = await fetch(`${first.sandbox.url}/v21.0/oauth/access_token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: appId,
      client_secret: first.config.PROVIDER_APP_SECRET!,
      redirect_uri: first.config.PROVIDER_REDIRECT_URI!,
      code,
    }),
  });
  assert.equal(exchanged.status, 200);
  const { access_token: token } = (await exchanged.json()) as { access_token: string };
  await first.sandbox.close();

  const second = await startDevelopmentSandbox(config, logger);
  try {
    assert.equal(second.config.PROVIDER_APP_ID, appId);
    assert.equal(second.config.PROVIDER_APP_SECRET, first.config.PROVIDER_APP_SECRET);
    assert.equal(
      second.config.PROVIDER_WEBHOOK_VERIFY_TOKEN,
      first.config.PROVIDER_WEBHOOK_VERIFY_TOKEN,
    );
    assert.ok(second.sandbox.hasGrant(appId, '100012345678'));
    const inspected = await fetch(
      `${second.sandbox.url}/debug_token?input_token=${encodeURIComponent(token)}`,
      { headers: { authorization: `Bearer ${appId}|${second.config.PROVIDER_APP_SECRET}` } },
    );
    const body = (await inspected.json()) as { data: { is_valid: boolean } };
    assert.equal(body.data.is_valid, true, 'the token issued before the restart is valid');
  } finally {
    await second.sandbox.close();
  }

  // A file that is not the sandbox's state is named, not silently replaced.
  writeFileSync(join(dataDir, 'sandbox-provider.json'), '{"not": "a snapshot"}');
  await assert.rejects(
    startDevelopmentSandbox(config, logger),
    /sandbox-provider\.json.*delete it/,
  );
});
