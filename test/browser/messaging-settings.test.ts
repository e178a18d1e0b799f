/**
 * The "Messaging" section of /settings in real headless Chromium at 1280 px and 390 px: the
 * main administrator sees the defaults, types a keyword that is in both lists (refused, the
 * error beside the field, what was typed kept), fixes it, saves (flash, values kept after the
 * reload). Every page passes pageProblems (no overflow, no serious or critical axe-core
 * violation) and no form is wider than its box.
 *
 * Screenshots: test-output/screenshots/messaging-settings-<step>-<width>.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  CHROMIUM_ARGS,
  developmentSetup,
  portalWithAdmin,
  CHROMIUM_PATH,
  pageProblems,
  screenshot,
  startPortico,
} from '../helpers/browser.ts';
import { suiteCleanup } from '../helpers/spawn.ts';

const PASSWORD = 'correct horse battery staple';
const WIDTHS = [1280, 390] as const;

describe('browser: the Messaging section of /settings at 1280 px and 390 px', () => {
  let browser: Browser;
  let appUrl: string;
  const suite = suiteCleanup();
  const emailAt = (width: number) => `owner${width}@acme.test`;
  const codeAt = (width: number) => (width === 1280 ? '5656' : '5657');
  const problems: string[] = [];

  before(async () => {
    const setup = await developmentSetup(suite, { name: 'Portico (settings)' });
    ({ appUrl } = setup);
    const { env } = setup;
    // One portal per width: each starts from the defaults.
    for (const width of WIDTHS)
      await portalWithAdmin(suite, env, {
        email: emailAt(width),
        code: codeAt(width),
        password: PASSWORD,
      });
    await startPortico(suite, env);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await suite.run();
  });

  async function pageAt(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
        problems.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
    return page;
  }

  /** Screenshot, then every check of {@link pageProblems} and no form wider than its box. */
  async function look(page: Page, name: string, width: number) {
    await screenshot(page, `messaging-settings-${name}-${width}`);
    const wideForms = await page.evaluate(() =>
      Array.from(document.querySelectorAll('form'))
        .filter((box) => box.scrollWidth > box.clientWidth + 1)
        .map((box) => `form ${box.scrollWidth}px > ${box.clientWidth}px`),
    );
    assert.deepEqual([...(await pageProblems(page)), ...wideForms], [], `${name} at ${width} px`);
  }

  for (const width of WIDTHS) {
    test(`edit the messaging settings at ${width} px`, async () => {
      const page = await pageAt(width);
      await page.goto(`${appUrl}/login`);
      await page.fill('#email', emailAt(width));
      await page.fill('#password', PASSWORD);
      await Promise.all([
        page.waitForURL(`${appUrl}/settings`),
        page.click('main button[type=submit]'),
      ]);
      const optOut = page.locator('#f-optOutKeywords');
      const optIn = page.locator('#f-optInKeywords');
      await optOut.scrollIntoViewIfNeeded();
      assert.equal(await optOut.inputValue(), 'STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT');
      assert.equal(await optIn.inputValue(), 'START, UNSTOP');
      await look(page, 'defaults', width);

      // A keyword in both lists: refused, the error beside the field, what was typed kept.
      await optIn.fill('START, quit');
      await page.fill('#f-optOutReply', `Opted out (${width}).`);
      await Promise.all([
        page.waitForURL(`${appUrl}/settings/messaging`),
        page.click('[data-testid=messaging-save]'),
      ]);
      assert.equal(await optIn.getAttribute('aria-invalid'), 'true');
      assert.match(
        (await page.locator('#f-optInKeywords-error').textContent()) ?? '',
        /QUIT cannot be an opt-out and an opt-in keyword at once/,
      );
      assert.equal(await optIn.inputValue(), 'START, quit');
      assert.equal(await page.locator('#f-optOutReply').inputValue(), `Opted out (${width}).`);
      await look(page, 'refused', width);

      await optIn.fill('START');
      await page.check('input[name=autoMarkRead]');
      await Promise.all([
        page.waitForURL((u) => u.pathname === '/settings' && u.search === '?done=messaging_saved'),
        page.click('[data-testid=messaging-save]'),
      ]);
      await page.waitForSelector('text=The messaging settings are saved.');
      assert.equal(await optIn.inputValue(), 'START');
      assert.equal(await page.locator('#f-optOutReply').inputValue(), `Opted out (${width}).`);
      assert.ok(await page.isChecked('input[name=autoMarkRead]'));
      await look(page, 'saved', width);
      await page.context().close();
      assert.deepEqual(problems, []);
    });
  }
});
