/**
 * Real browser: headless Chromium (Debian's, driven by playwright-core) against Portico started
 * as `npm start` would (a child process with its own data directory) on `localhost`, and the
 * sandbox provider on `127.0.0.1`, so that the two are different sites as in production.
 *
 * Screenshots of every page land in test-output/screenshots/ for people to look at.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { SandboxProvider } from '../../src/sandbox-provider/sandbox-provider.tsx';
import {
  CHROMIUM_ARGS,
  developmentSetup,
  portalWithAdmin,
  CHROMIUM_PATH,
  SCREENSHOTS,
  startPortico,
} from '../helpers/browser.ts';
import { suiteCleanup } from '../helpers/spawn.ts';
import { deadline } from '../helpers/deadlines.ts';

const PASSWORD = 'correct horse battery staple';
/** The connection card's status line (the provider named as in development: the sandbox). */
const CONNECTED = 'Connected to Sandbox provider';
const NOT_CONNECTED = 'Not connected to Sandbox provider';

describe('browser: sign in, connect, cancel, decline, disconnect, remove the app', () => {
  let sandbox: SandboxProvider;
  let browser: Browser;
  let appUrl: string;
  // Every process is registered here as it is spawned, and stopped in `after` whatever happened.
  const suite = suiteCleanup();
  const email = 'owner@acme.test';
  const consoleErrors: string[] = [];
  const portalCode = '7007';
  let providerAppId = '';
  /** The sandbox dialog's default person. */
  const person = '100012345678';

  before(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const setup = await developmentSetup(suite, {
      name: 'Portico (browser test)',
      callbacks: true,
    });
    ({ sandbox, appUrl, appId: providerAppId } = setup);
    const { env } = setup;
    await portalWithAdmin(suite, env, { email, code: portalCode, password: PASSWORD });
    await startPortico(suite, env);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await suite.run();
  });

  async function shot(page: Page, name: string) {
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  }

  /** A fresh context (its own cookies), signed in through /login. */
  async function signIn(name: string): Promise<Page> {
    const context = await browser.newContext();
    const page = await context.newPage();
    // A Content-Security-Policy violation shows up as a console error ("Refused to …").
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
        consoleErrors.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (err) => consoleErrors.push(`${page.url()}: ${err.message}`));
    await page.goto(`${appUrl}/settings`);
    assert.equal(new URL(page.url()).pathname, '/login');
    if (name) await shot(page, `${name}-login`);
    await page.fill('#email', email);
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${appUrl}/settings`), page.click('button[type=submit]')]);
    return page;
  }

  /** Settings → Connect → consent → the sandbox dialog. */
  async function openDialog(page: Page, name?: string) {
    await page.goto(`${appUrl}/settings`);
    await Promise.all([
      page.waitForURL(`${appUrl}/connect`),
      page.click('a.button[href="/connect"]'),
    ]);
    if (name) await shot(page, `${name}-connect`);
    await Promise.all([
      page.waitForURL((u) => u.origin === sandbox.url),
      page.click('button:has-text("Continue to Sandbox provider")'),
    ]);
    assert.equal(new URL(page.url()).hostname, '127.0.0.1');
    if (name) await shot(page, `${name}-provider-dialog`);
  }

  test('sign in → settings → connect → Allow → /authorized → settings shows connected; Disconnect', async () => {
    const page = await signIn('01');
    await shot(page, '01-settings-not-connected');
    assert.equal(await page.textContent('[data-testid=connection-status]'), NOT_CONNECTED);
    assert.equal(await page.textContent('[data-testid=portal-code]'), portalCode);

    // The main administrator regenerates the API token: shown once, and it works at once.
    // It asks first, saying what stops working; then POST-redirect-GET shows the token once.
    await Promise.all([
      page.waitForURL(`${appUrl}/settings/token/regenerate`),
      page.click('text=Regenerate token'),
    ]);
    assert.match((await page.textContent('main')) ?? '', /stops working at once/);
    await shot(page, '01-settings-token-confirm');
    await Promise.all([
      page.waitForURL(`${appUrl}/settings?done=regenerated#api-token`),
      page.click('[data-testid=confirm]'),
    ]);
    const token = await page.inputValue('[data-testid=new-token]');
    assert.match(token, /^ptk_/);
    await shot(page, '01-settings-token-regenerated');
    // A reload neither shows the token again nor says "This form has expired".
    await page.reload();
    assert.equal(await page.$('[data-testid=new-token]'), null);
    assert.doesNotMatch((await page.textContent('main')) ?? '', /expired/);
    const verify = await fetch(`${appUrl}/api/v1/external/auth/verify`, {
      headers: { authorization: token },
    });
    assert.equal(verify.status, 200);
    await page.goto(`${appUrl}/settings`);
    assert.equal(await page.$('[data-testid=new-token]'), null, 'shown only once');

    await openDialog(page, '02');
    await Promise.all([page.waitForURL(`${appUrl}/authorized`), page.click('button[value=allow]')]);
    await shot(page, '03-authorized');
    assert.match((await page.textContent('h1')) ?? '', /connected/);
    // The callback's query (code, state) never reaches the page's address.
    assert.equal(new URL(page.url()).search, '');

    await Promise.all([
      page.waitForURL(`${appUrl}/settings#connection`),
      page.click('text=See the connection'),
    ]);
    assert.equal(await page.textContent('[data-testid=connection-status]'), CONNECTED);
    assert.match((await page.textContent('#connection')) ?? '', /by owner@acme\.test/);
    assert.match((await page.textContent('#connection')) ?? '', /send messages for your business/);
    assert.match((await page.textContent('#audit')) ?? '', /Provider account connected/);
    await shot(page, '04-settings-connected');

    // No state cookie survives the flow.
    const cookies = await page.context().cookies(appUrl);
    assert.deepEqual(
      cookies.map((c) => c.name).sort(),
      ['portico_session'],
      'only the session cookie remains',
    );

    await Promise.all([
      page.waitForURL(`${appUrl}/settings/disconnect`),
      page.click('[data-testid=disconnect]'),
    ]);
    await shot(page, '05-disconnect-confirm');
    await Promise.all([
      page.waitForURL(`${appUrl}/settings?done=disconnected`),
      page.click('[data-testid=confirm]'),
    ]);
    assert.equal(await page.textContent('[data-testid=connection-status]'), NOT_CONNECTED);
    assert.match((await page.textContent('#audit')) ?? '', /Provider account disconnected/);
    assert.match((await page.textContent('#audit')) ?? '', /disconnected by a user in Portico/);
    await shot(page, '05-settings-disconnected');
    // The grant is revoked at the provider too, in the background after the local cleanup.
    const giveUp = Date.now() + deadline(15_000);
    while (sandbox.hasGrant(providerAppId, person)) {
      assert.ok(Date.now() < giveUp, 'the grant is still alive at the provider');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.deepEqual(sandbox.tokensOf(providerAppId, person), [], 'no live token at the provider');
    assert.deepEqual(consoleErrors, [], 'no CSP violation or page error on the way');
    await page.context().close();
  });

  test('Cancel at the provider → /auth-error with a retry', async () => {
    const page = await signIn('');
    await openDialog(page);
    await Promise.all([
      page.waitForURL(`${appUrl}/auth-error?reason=cancelled`),
      page.click('button[value=cancel]'),
    ]);
    await shot(page, '06-auth-error-cancelled');
    assert.match((await page.textContent('h1')) ?? '', /cancelled/);
    await Promise.all([page.waitForURL(`${appUrl}/connect`), page.click('text=Try again')]);
    await page.context().close();
  });

  test('declining a permission → /auth-error naming the capability in plain words', async () => {
    const page = await signIn('');
    await openDialog(page);
    await page.uncheck('input[name=permission][value=whatsapp_business_messaging]');
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/auth-error'),
      page.click('button[value=allow]'),
    ]);
    await shot(page, '07-auth-error-permission');
    const text = (await page.textContent('main')) ?? '';
    assert.match(text, /send messages for your business/);
    assert.doesNotMatch(text, /whatsapp_business_messaging/);
    await page.goto(`${appUrl}/settings`);
    assert.equal(await page.textContent('[data-testid=connection-status]'), NOT_CONNECTED);
    await page.context().close();
  });

  test('"Remove the app" at the provider → settings shows inactive after a reload', async () => {
    const page = await signIn('');
    await openDialog(page);
    await Promise.all([page.waitForURL(`${appUrl}/authorized`), page.click('button[value=allow]')]);
    await page.goto(`${appUrl}/settings`);
    assert.equal(await page.textContent('[data-testid=connection-status]'), CONNECTED);

    const provider = await page.context().newPage();
    await provider.goto(`${sandbox.url}/sandbox/apps`);
    await shot(provider, '08-provider-apps');
    await Promise.all([provider.waitForLoadState('load'), provider.click('text=Remove the app')]);
    await shot(provider, '09-provider-app-removed');

    await page.reload();
    assert.equal(await page.textContent('[data-testid=connection-status]'), NOT_CONNECTED);
    assert.match((await page.textContent('#audit')) ?? '', /Provider account disconnected/);
    await shot(page, '10-settings-after-remove');
    await page.context().close();
  });
});
