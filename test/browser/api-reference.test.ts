/**
 * The API reference page (`/docs`) in real Chromium, under its own Content-Security-Policy:
 * Scalar's bundle and its inline bootstrap (allowed by hash, not 'unsafe-inline') run and
 * render the document, and the browser reports no violation of the policy.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH, freePort, startPortico } from '../helpers/browser.ts';
import { deadline } from '../helpers/deadlines.ts';
import { suiteCleanup } from '../helpers/spawn.ts';

describe('the API reference page in Chromium', () => {
  const suite = suiteCleanup();
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-docs-'));
  let browser: Browser;
  let appUrl = '';

  before(async () => {
    const port = await freePort();
    appUrl = `http://localhost:${port}`;
    await startPortico(suite, {
      PATH: process.env.PATH,
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      APP_BASE_URL: appUrl,
      // A configured provider, so that development does not start its sandbox.
      PROVIDER_APP_ID: '1234567890',
      PROVIDER_APP_SECRET: randomBytes(24).toString('hex'),
      PROVIDER_HEALTH_CHECK_INTERVAL_MS: '0',
      TOKEN_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await suite.run();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('/docs renders the document with its inline bootstrap allowed by hash, no CSP violation', async () => {
    const page = await browser.newPage();
    // Playwright's fixed 30 s does not scale: loading and rendering Scalar's bundle is CPU-bound.
    page.setDefaultTimeout(deadline(30_000));
    const violations: string[] = [];
    await page.exposeFunction('reportViolation', (v: string) => violations.push(v));
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) =>
        (window as unknown as { reportViolation(v: string): void }).reportViolation(
          `${e.violatedDirective} ${e.blockedURI}`,
        ),
      );
    });
    const res = await page.goto(`${appUrl}/docs/`);
    assert.equal(res?.status(), 200);
    assert.doesNotMatch(
      String(res?.headers()['content-security-policy']),
      /script-src[^;]*unsafe-inline/,
    );
    // Scalar rendered the OpenAPI document's operations (only its bootstrap starts it).
    await page
      .getByText('Verify the API token', { exact: false })
      .first()
      .waitFor({
        timeout: deadline(20_000),
      });
    // No inline script or style was refused. (The bundle probes `eval`, which the policy keeps
    // refused; the page works without it.)
    assert.deepEqual(
      violations.filter((v) => !/^script-src eval$/.test(v)),
      [],
    );
  });
});
