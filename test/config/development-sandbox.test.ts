/**
 * The development sandbox (`npm start` in development without PROVIDER_APP_ID) registers its
 * app with the configured PROVIDER_APP_SECRET when one is set, instead of replacing it with a
 * random one that is never printed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
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

  const made = await startDevelopmentSandbox(parseConfig(base), logger);
  t.after(() => made.sandbox.close());
  assert.match(made.config.PROVIDER_APP_SECRET ?? '', /^[0-9A-Za-z]{32,}$/);
});
