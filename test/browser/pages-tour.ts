/**
 * Every page in real headless Chromium, at 1280×800 and at 390×844 (a phone), as a new user
 * walks them in development (`NODE_ENV=development`, as `npm start`): 127.0.0.1 is sent to
 * APP_BASE_URL, every page is found from the navigation (the current one marked), the
 * regenerated token is selected whole by one click, destructive actions ask first, the
 * connection card names the provider, the composer of /messages says to connect first and
 * then shows a refusal next to its field, errors are pages. On every page, at both widths: no
 * horizontal overflow, no word broken inside a table cell's short value, and no axe-core
 * violation of impact serious or critical.
 *
 * Screenshots: test-output/screenshots/tour-<page>-<width>.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { SandboxProvider } from '../../src/sandbox-provider/sandbox-provider.tsx';
import type { VIEWPORTS } from '../helpers/browser.ts';
import {
  CHROMIUM_ARGS,
  developmentSetup,
  portalWithAdmin,
  CHROMIUM_PATH,
  pageProblems,
  screenshot,
  startPortico,
} from '../helpers/browser.ts';
import { deadline } from '../helpers/deadlines.ts';
import { suiteCleanup } from '../helpers/spawn.ts';

const PASSWORD = 'correct horse battery staple';
const CSV =
  'phone,firstName,lastName,email,tags,consent\n' +
  '+16505551234,Ada,Lovelace,ada@example.com,vip;newsletter,opted_in\n' +
  '+442079460958,Alan,Turing,,,opted_out\n' +
  'not-a-phone,Nobody,,,,\n';

/**
 * How long the set-up (sandbox, CLI, server, Chromium) and one walk may take, in ms: a quiet
 * 4-CPU machine's figures scaled by the tests' slowdown (deadlines.ts), not the runner's fixed
 * `--test-timeout`.
 */
const SETUP_MS = deadline(120_000);
const WALK_MS = deadline(240_000);
/** Each Playwright action and navigation (its own default is a fixed 30 s). */
const ACTION_MS = deadline(30_000);

/**
 * The tour at each of `viewports`, on a server of its own: one test file per width
 * (pages-tour-*.test.ts) so the walks run side by side. Each walk leaves the portal as it found
 * it (disconnected, no contact, no endpoint).
 */
export function pagesTour(viewports: readonly (typeof VIEWPORTS)[number][]): void {
  describe(`browser: every page at ${viewports.map((v) => v.width).join(' px and ')} px`, () => {
    let sandbox: SandboxProvider;
    let browser: Browser;
    let appUrl: string;
    let port: number;
    const suite = suiteCleanup();
    const email = 'tour@acme.test';
    const problems: string[] = [];

    before(
      async () => {
        const setup = await developmentSetup(suite, { name: 'Portico (tour)' });
        ({ sandbox, appUrl, port } = setup);
        const { env } = setup;
        await portalWithAdmin(suite, env, { email, code: '4343', password: PASSWORD });
        await startPortico(suite, env);
        browser = await chromium.launch({
          executablePath: CHROMIUM_PATH,
          args: CHROMIUM_ARGS,
          timeout: ACTION_MS,
        });
      },
      { timeout: SETUP_MS },
    );

    after(
      async () => {
        await browser?.close();
        await suite.run();
      },
      { timeout: SETUP_MS },
    );

    /** A new signed-in page at `width` (its own cookies); CSP violations are collected. */
    async function signedInAt(viewport: (typeof VIEWPORTS)[number]): Promise<Page> {
      const context = await browser.newContext({ viewport });
      context.setDefaultTimeout(ACTION_MS);
      const page = await context.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
          problems.push(`${page.url()}: ${m.text()}`);
      });
      page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
      // Signing in at 127.0.0.1 lands on APP_BASE_URL (localhost): one address, one cookie jar.
      await page.goto(`http://127.0.0.1:${port}/login`);
      assert.equal(new URL(page.url()).origin, appUrl);
      await page.fill('#email', email);
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(`${appUrl}/settings`), page.click('button[type=submit]')]);
      return page;
    }

    /** Screenshot, then every check of {@link pageProblems}. */
    async function look(page: Page, name: string, width: number) {
      await screenshot(page, `tour-${name}-${width}`);
      assert.deepEqual(await pageProblems(page), [], `${name} at ${width} px`);
    }

    /** The navigation (opened from the menu on a phone) and its current entry. */
    async function navigation(page: Page, width: number) {
      const nav = width < 900 ? 'details.menu nav' : '.shell-desktop nav';
      if (width < 900) await page.click('details.menu > summary');
      const links = await page.$$eval(`${nav} a`, (as) =>
        as.map((a) => [a.getAttribute('href'), a.getAttribute('aria-current')]),
      );
      if (width < 900) await screenshot(page, `tour-menu-${width}`);
      if (width < 900) await page.click('details.menu > summary');
      return links;
    }

    for (const viewport of viewports) {
      const width = viewport.width;
      test(`the walk at ${width} px`, { timeout: WALK_MS }, async () => {
        const page = await signedInAt(viewport);
        await look(page, 'settings', width);
        assert.deepEqual(await navigation(page, width), [
          ['/settings', 'page'],
          ['/inbox', null],
          ['/contacts', null],
          ['/messages', null],
          ['/settings/webhooks', null],
          ['/settings/keys', null],
          ['/settings/team', null],
          ['/support', null],
          ['/audit', null],
        ]);
        assert.match(
          (await page.textContent('[data-testid=token-scopes]')) ?? '',
          /Open support tickets\s*support:tickets:write/,
        );

        // Regenerate: confirm page, then the token once, selected whole by one click.
        await Promise.all([
          page.waitForURL(`${appUrl}/settings/token/regenerate`),
          page.click('[data-testid=regenerate]'),
        ]);
        await look(page, 'token-confirm', width);
        await Promise.all([
          page.waitForURL((u) => u.pathname === '/settings' && u.search === '?done=regenerated'),
          page.click('[data-testid=confirm]'),
        ]);
        const field = page.locator('[data-testid=new-token]');
        const token = await field.inputValue();
        assert.match(token, /^ptk_/);
        await field.click();
        const selected = await field.evaluate((el) => {
          const input = el as HTMLInputElement;
          return [input.selectionStart, input.selectionEnd];
        });
        assert.deepEqual(selected, [0, token.length], 'one click selects the whole token');
        assert.equal(await page.isVisible('button[data-copy-from=new-token]'), true);
        await look(page, 'token-new', width);
        await page.reload();
        assert.equal(await page.$('[data-testid=new-token]'), null, 'shown once');
        assert.match((await page.textContent('main')) ?? '', /shown once/);
        const reference = await page.request.get(
          new URL((await page.getAttribute('a[href="/docs/"]', 'href')) ?? '', appUrl).href,
        );
        assert.equal(reference.status(), 200, 'the API reference is linked from /settings');

        // The inbox, empty until someone writes.
        await page.goto(`${appUrl}/inbox`);
        assert.ok(await page.isVisible('[data-testid=inbox-empty]'));
        await look(page, 'inbox-empty', width);

        // Not connected yet: the composer says what to do next, with the way there.
        await page.goto(`${appUrl}/messages`);
        assert.equal(
          await page.getAttribute('[data-testid=composer-not-connected] a', 'href'),
          '/connect',
        );
        await look(page, 'messages-not-connected', width);
        await page.goto(`${appUrl}/settings`);

        // Connect, see the card, reconnect page, disconnect confirmation.
        await Promise.all([
          page.waitForURL(`${appUrl}/connect`),
          page.click('a.button[href="/connect"]'),
        ]);
        await look(page, 'connect', width);
        await Promise.all([
          page.waitForURL((u) => u.origin === sandbox.url),
          page.click('button:has-text("Continue to Sandbox provider")'),
        ]);
        await look(page, 'sandbox-dialog', width);
        await Promise.all([
          page.waitForURL(`${appUrl}/authorized`),
          page.click('button[value=allow]'),
        ]);
        assert.match((await page.textContent('main')) ?? '', new RegExp(email.replace('.', '\\.')));
        await look(page, 'authorized', width);
        await page.goto(`${appUrl}/settings`);
        assert.equal(
          await page.textContent('[data-testid=connection-status]'),
          'Connected to Sandbox provider',
        );
        assert.match((await page.textContent('#connection')) ?? '', /WABA \d+/);
        await look(page, 'settings-connected', width);
        await page.goto(`${appUrl}/messages`);
        // The composer opens on the account's first approved template, the provider's hello_world.
        assert.match(
          (await page.textContent('[data-testid=template-body]')) ?? '',
          /Welcome and congratulations/,
        );
        await look(page, 'messages', width);
        // Free text to someone who never wrote in (not a contact): the refusal, next to the text.
        await page.goto(`${appUrl}/messages?compose=text`);
        await page.fill('#c-to', '+44 20 7946 0001');
        await page.fill('#c-text', 'Your parcel is at the door.');
        await Promise.all([
          page.waitForURL(`${appUrl}/messages/send`),
          page.click('[data-testid=send]'),
        ]);
        assert.match((await page.textContent('#c-text-error')) ?? '', /last 24 hours/);
        assert.equal(await page.inputValue('#c-text'), 'Your parcel is at the door.');
        await look(page, 'messages-composer-refused', width);
        // A form whose CSRF token does not match: a page that says so, nothing sent.
        await page.$eval('[data-testid=composer-form] input[name=csrf]', (el) => {
          (el as HTMLInputElement).value = 'stale';
        });
        await page.click('[data-testid=send]');
        await page.waitForSelector('h1:has-text("This form has expired")');
        await look(page, 'form-expired', width);
        await page.goto(`${sandbox.url}/sandbox/phone`);
        await look(page, 'sandbox-phone', width);
        await page.goto(`${appUrl}/connect?reconnect=1`);
        await look(page, 'reconnect', width);
        await page.goto(`${appUrl}/settings/disconnect`);
        await look(page, 'disconnect-confirm', width);
        await Promise.all([
          page.waitForURL(`${appUrl}/settings?done=disconnected`),
          page.click('[data-testid=confirm]'),
        ]);

        // Cancelled at the provider: a page with a retry, and a row in the audit log.
        await page.goto(`${appUrl}/connect`);
        await Promise.all([
          page.waitForURL((u) => u.origin === sandbox.url),
          page.click('button:has-text("Continue to Sandbox provider")'),
        ]);
        await Promise.all([
          page.waitForURL(`${appUrl}/auth-error?reason=cancelled`),
          page.click('button[value=cancel]'),
        ]);
        await look(page, 'auth-error-cancelled', width);
        await page.goto(`${appUrl}/audit`);
        assert.match((await page.textContent('main')) ?? '', /Connection attempt cancelled/);
        assert.doesNotMatch((await page.textContent('main')) ?? '', /system cli|error 190|npm run/);
        await look(page, 'audit', width);
        await page.goto(`${appUrl}/contacts`);
        await look(page, 'contacts-empty', width);
        await page.setInputFiles('input[type=file]', {
          name: 'contacts.csv',
          mimeType: 'text/csv',
          buffer: Buffer.from(CSV),
        });
        await Promise.all([
          page.waitForURL(`${appUrl}/contacts/import`),
          page.click('button:has-text("Check the file")'),
        ]);
        assert.match(
          (await page.textContent('[data-testid=preview-summary]')) ?? '',
          /3 row\(s\), 2 ready to import, 1 will not be imported/,
        );
        await look(page, 'contacts-preview', width);
        await Promise.all([
          page.waitForURL((u) => u.pathname === '/contacts'),
          page.click('button:has-text("Import 2 contact(s)")'),
        ]);
        await look(page, 'contacts', width);
        await Promise.all([
          page.waitForURL(/\/contacts\/ctc_\w+$/),
          page.click('[data-testid=contact-link] >> nth=0'),
        ]);
        await look(page, 'contact', width);
        await page.goto(`${appUrl}/contacts`);
        await Promise.all([
          page.waitForURL(/\/delete$/),
          page.click('td a:has-text("Delete") >> nth=0'),
        ]);
        await look(page, 'contact-erase-confirm', width);
        await page.goto(`${appUrl}/contacts?done=Your%20account%20is%20suspended`);
        assert.doesNotMatch((await page.textContent('main')) ?? '', /suspended/);

        // Webhooks: add (the secret once; a reload is a plain page), test, remove after asking.
        await page.goto(`${appUrl}/settings/webhooks`);
        await look(page, 'webhooks-empty', width);
        await page.fill('#f-url', 'ftp://example.com/');
        await page.check('input[value="ticket.created"]');
        await page.click('button:has-text("Add endpoint")');
        assert.match((await page.textContent('#f-url-error')) ?? '', /https/);
        assert.equal(await page.inputValue('#f-url'), 'ftp://example.com/');
        await look(page, 'webhooks-error', width);
        await page.fill('#f-url', 'http://127.0.0.1:9/hook');
        await Promise.all([
          page.waitForURL((u) => u.search === '?done=webhook_added'),
          page.click('button:has-text("Add endpoint")'),
        ]);
        assert.match((await page.textContent('[data-testid=new-secret]')) ?? '', /^whsec_/);
        await look(page, 'webhooks-secret', width);
        const reloaded = await page.reload();
        assert.equal(reloaded?.status(), 200);
        assert.equal(await page.$('[data-testid=new-secret]'), null);
        await Promise.all([
          page.waitForURL((u) => u.search === '?done=test'),
          page.click('button:has-text("Send test event")'),
        ]);
        await look(page, 'webhooks', width);
        await Promise.all([page.waitForURL(/\/remove$/), page.click('a:has-text("Remove")')]);
        await look(page, 'webhook-remove-confirm', width);
        await Promise.all([
          page.waitForURL((u) => u.search === '?done=removed'),
          page.click('[data-testid=confirm]'),
        ]);

        // A page that does not exist, and the cookie-less callback's explanation.
        const missing = await page.goto(`${appUrl}/no-such-page`);
        assert.equal(missing?.status(), 404);
        assert.equal(await page.textContent('h1'), 'Page not found');
        await look(page, 'not-found', width);
        const mangled = await page.goto(`${appUrl}/messages?since=last-week`);
        assert.equal(mangled?.status(), 400);
        await look(page, 'bad-request', width);
        await page.goto(`${appUrl}/auth-error?reason=state&cause=cookies`);
        assert.match((await page.textContent('main')) ?? '', /127\.0\.0\.1/);
        await look(page, 'auth-error-cookies', width);
        await page.goto(
          `${appUrl}/auth-error?reason=permission&missing=send%20messages%20for%20your%20business`,
        );
        await look(page, 'auth-error-permission', width);
        await page.context().close();

        const fresh = await browser.newContext({ viewport });
        fresh.setDefaultTimeout(ACTION_MS);
        const login = await fresh.newPage();
        await login.goto(`${appUrl}/login`);
        await look(login, 'login', width);
        const icon = await login.request.get(`${appUrl}/favicon.ico`);
        assert.equal(icon.status(), 200);
        assert.match(icon.headers()['content-type'] ?? '', /image\/svg\+xml/);
        await fresh.close();
        assert.deepEqual(problems, [], 'no CSP violation or page error');
      });
    }
  });
}
