/**
 * `/settings/keys` in real headless Chromium at 1280 px and 390 px, as the main administrator
 * clicks it: create a key limited to 127.0.0.1 (the secret shown once, gone on reload), call the
 * API with it, rotate it with a one-hour overlap (both secrets work), see its last use and its
 * usage chart, revoke it (a cancel first changes nothing; then it is refused at once). Rotating
 * and revoking confirm first. Every page passes pageProblems (no horizontal overflow, no
 * serious or critical axe-core violation).
 *
 * Screenshots: test-output/screenshots/api-keys-<step>-<width>.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  developmentSetup,
  pageProblems,
  portalWithAdmin,
  screenshot,
  startPortico,
} from '../helpers/browser.ts';
import { deadline } from '../helpers/deadlines.ts';
import { suiteCleanup } from '../helpers/spawn.ts';

const PASSWORD = 'correct horse battery staple';
const WIDTHS = [1280, 390] as const;

describe('browser: /settings/keys at 1280 px and 390 px', () => {
  let browser: Browser;
  let appUrl: string;
  let apiUrl: string;
  const suite = suiteCleanup();
  const emailAt = (width: number) => `keys${width}@acme.test`;
  const codeAt = (width: number) => (width === 1280 ? '5761' : '5762');
  const problems: string[] = [];

  before(async () => {
    const setup = await developmentSetup(suite, { name: 'Portico (keys)' });
    appUrl = setup.appUrl;
    // The API from this process, over IPv4: the address the key allows.
    apiUrl = `http://127.0.0.1:${setup.port}/api/v1/external`;
    for (const width of WIDTHS)
      await portalWithAdmin(suite, setup.env, {
        email: emailAt(width),
        code: codeAt(width),
        password: PASSWORD,
      });
    await startPortico(suite, setup.env);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await suite.run();
  });

  const verify = async (secret: string) =>
    (await fetch(`${apiUrl}/auth/verify`, { headers: { authorization: secret } })).status;

  async function look(page: Page, name: string, width: number) {
    await screenshot(page, `api-keys-${name}-${width}`);
    assert.deepEqual(await pageProblems(page), [], `${name} at ${width} px`);
  }

  for (const width of WIDTHS) {
    test(`create, use, rotate and revoke a key at ${width} px`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
      await page.goto(`${appUrl}/login`);
      await page.fill('#email', emailAt(width));
      await page.fill('#password', PASSWORD);
      await Promise.all([
        page.waitForURL(`${appUrl}/settings`),
        page.click('main button[type=submit]'),
      ]);
      await Promise.all([
        page.waitForURL(`${appUrl}/settings/keys`),
        page.click('main a[href="/settings/keys"]'),
      ]);
      await look(page, 'list', width);

      // Create: name, two scopes, an expiry, one allowed address.
      await page.fill('#f-name', `Billing ${width}`);
      await page.check('input[name=scopes][value="support:tickets:read"]');
      await page.check('input[name=scopes][value="crm:contacts:read"]');
      await page.fill('#f-expiresOn', '2099-01-31');
      await page.fill('#f-allowedIps', '127.0.0.1/32');
      await Promise.all([
        page.waitForURL(/\/settings\/keys\?done=key_created/),
        page.click('[data-testid=create-key]'),
      ]);
      const secret = await page.locator('[data-testid=new-key-secret]').inputValue();
      assert.match(secret, /^ptk_/);
      await look(page, 'created', width);
      const row = page.locator('[data-testid=keys] tr', { hasText: `Billing ${width}` });
      const rowText = (await row.innerText()).replace(/\s+/g, ' ');
      assert.match(rowText, /support:tickets:read/);
      assert.match(rowText, /2099-01-31 00:00 UTC/);
      assert.match(rowText, /127\.0\.0\.1\/32/);
      assert.match(rowText, /Not used yet/);
      await page.reload();
      assert.equal(await page.locator('[data-testid=new-key-secret]').count(), 0, 'shown once');

      assert.equal(await verify(secret), 200, 'the key works from 127.0.0.1');

      // Rotate: a confirmation step with the overlap chosen there.
      await Promise.all([
        page.waitForURL(/\/settings\/keys\/\d+\/rotate$/),
        row.locator('a', { hasText: 'Rotate' }).click(),
      ]);
      await look(page, 'rotate-confirm', width);
      await page.selectOption('#f-overlap', '3600');
      await Promise.all([
        page.waitForURL(/\/settings\/keys\?done=key_rotated/),
        page.click('[data-testid=confirm]'),
      ]);
      const rotated = await page.locator('[data-testid=new-key-secret]').inputValue();
      assert.notEqual(rotated, secret);
      assert.equal(await verify(rotated), 200);
      assert.equal(await verify(secret), 200, 'the previous secret works for the overlap');
      assert.match(await row.innerText(), /Previous secret works until/);

      // Last use and usage: the counts are written every few seconds.
      const until = Date.now() + deadline(40_000);
      for (;;) {
        await page.goto(`${appUrl}/settings/keys`);
        await row.locator('a', { hasText: 'Usage' }).click();
        const total = Number(await page.locator('[data-testid=usage-total]').innerText());
        if (total >= 3 && /from 127\.0\.0\.1/.test(await row.innerText())) break;
        assert.ok(Date.now() < until, `usage not shown in time (total ${total})`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      assert.match(
        (await page.locator('[data-testid=usage] h2').innerText()) ?? '',
        new RegExp(`Usage of Billing ${width}`),
      );
      assert.ok((await page.locator('[data-testid=key-usage-chart] rect.bar-s2xx').count()) > 0);
      await look(page, 'usage', width);

      // Revoke: cancel first (nothing changes), then confirm.
      await Promise.all([
        page.waitForURL(/\/settings\/keys\/\d+\/revoke$/),
        row.locator('a', { hasText: 'Revoke' }).click(),
      ]);
      await look(page, 'revoke-confirm', width);
      await Promise.all([
        page.waitForURL(`${appUrl}/settings/keys`),
        page.click('a:has-text("Cancel")'),
      ]);
      assert.equal(await verify(rotated), 200, 'cancel changed nothing');
      await Promise.all([
        page.waitForURL(/\/settings\/keys\/\d+\/revoke$/),
        row.locator('a', { hasText: 'Revoke' }).click(),
      ]);
      await Promise.all([
        page.waitForURL(/\/settings\/keys\?done=key_revoked/),
        page.click('[data-testid=confirm]'),
      ]);
      await page.waitForSelector('text=The API key is revoked; it no longer works.');
      assert.equal(await row.count(), 0);
      assert.equal(await verify(rotated), 401, 'revoked: refused at once');
      await look(page, 'revoked', width);

      // A refused create: the error shown, what was typed kept, nothing made.
      await page.fill('#f-name', 'No scope');
      await page.click('[data-testid=create-key]');
      await page.waitForSelector('[data-testid=error]');
      assert.equal(await page.locator('#f-name').inputValue(), 'No scope');
      assert.equal(await page.locator('[data-testid=keys] tr', { hasText: 'No scope' }).count(), 0);
      await look(page, 'refused', width);
      await context.close();
      assert.deepEqual(problems, []);
    });
  }
});
