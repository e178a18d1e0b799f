/**
 * `/settings` with a number whose registration the provider refused (133016), in Chromium at
 * 1280 and 390 px: the number's state says what is missing, the error and the next allowed
 * attempt; Retry onboarding is offered and posts; no horizontal overflow, no serious axe-core
 * violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp } from '../helpers/app.ts';
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  pageProblems,
  screenshot,
  VIEWPORTS,
} from '../helpers/browser.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { backends } from '../helpers/storage.ts';
import { portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

const backend = backends()[0]!;
/** The sandbox's default person's first number (WABA `102034567801`). */
const BLOCKED = '1020345678011';

describe('browser: onboarding on /settings', () => {
  let browser: Browser;
  before(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });
  after(async () => {
    await browser?.close();
  });

  test('a number not registered: its state, the error, the next attempt, Retry', async (t) => {
    const provider = await startTestProvider(t);
    const built = await buildTestApp(t, backend, provider.env);
    const url = await built.app.listen({ host: '127.0.0.1', port: 0 });
    const portal = await portalWithPassword(built.services, { email: 'ada@example.test' });
    const portalId = await built.services.accounts.portalIdFor(portal.portalCode);
    provider.sandbox.cloud.exhaustRegistrations(BLOCKED);
    await connectPortal(built.services, provider, { portalId, userId: portal.userId });
    await built.services.messaging.addCredit({ portalId, amount: 10, note: 't', actor: CLI_ACTOR });

    for (const viewport of VIEWPORTS) {
      const context = await browser.newContext({ viewport });
      t.after(() => context.close());
      const page = await context.newPage();
      await page.goto(`${url}/login`);
      await page.fill('#email', portal.email);
      await page.fill('#password', TEST_PASSWORD);
      await Promise.all([page.waitForURL(`${url}/settings`), page.click('button[type=submit]')]);
      const states = await page.$$eval('[data-testid="onboarding-state"]', (els) =>
        els.map((e) => e.textContent?.trim()),
      );
      assert.equal(states.length, 4);
      assert.deepEqual(
        states.filter((s) => s !== 'Ready'),
        ['Not ready: not registered'],
      );
      assert.match(
        (await page.textContent('[data-testid="onboarding-error"]')) ?? '',
        /too many registration attempts/,
      );
      assert.match(
        (await page.textContent('[data-testid="onboarding-next"]')) ?? '',
        /Next attempt allowed/,
      );
      await screenshot(page, `onboarding-settings-${viewport.width}`);
      assert.deepEqual(await pageProblems(page), [], `at ${viewport.width} px`);
      await Promise.all([
        page.waitForURL((u) => u.search === '?done=onboarding_retried'),
        page.click('[data-testid="onboarding-retry"] button'),
      ]);
      assert.deepEqual(await pageProblems(page), [], `after Retry at ${viewport.width} px`);
    }
  });
});
