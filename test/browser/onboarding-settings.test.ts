/**
 * `/settings` with a number whose registration the provider refused (133016), in Chromium at
 * 1280 and 390 px: the number's state says what is missing, the error and the next allowed
 * attempt; Retry onboarding is offered and posts; no horizontal overflow, no serious axe-core
 * violation. And the provider's account signals: each number's portfolio messaging limit, and
 * the banner of the signals in force (a restriction, an alert, a display name decision) after
 * the sandbox sent their webhooks.
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

  test('the messaging limit per number and the banner of the account signals', async (t) => {
    const provider = await startTestProvider(t);
    const built = await buildTestApp(t, backend, provider.env);
    const url = await built.app.listen({ host: '127.0.0.1', port: 0 });
    provider.sandbox.configureApp(provider.appId, {
      webhookUrl: `${url}/api/provider/webhooks`,
      webhookVerifyToken: provider.env.PROVIDER_WEBHOOK_VERIFY_TOKEN!,
    });
    const portal = await portalWithPassword(built.services, { email: 'grace@example.test' });
    const portalId = await built.services.accounts.portalIdFor(portal.portalCode);
    await connectPortal(built.services, provider, { portalId, userId: portal.userId });
    const [wabaId] = await built.services.partner.wabaIdsOf(portalId);
    const { cloud } = provider.sandbox;
    for (const outcome of [
      await cloud.businessCapability(wabaId!, 'TIER_10K'),
      await cloud.accountAlert(wabaId!, 'INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED'),
      await cloud.accountUpdate(wabaId!, 'ACCOUNT_RESTRICTION'),
      await cloud.phoneNumberName(`${wabaId}1`, 'REJECTED'),
    ])
      assert.ok(outcome.ok && outcome.deliveries.every((d) => d.status === 200));

    for (const viewport of VIEWPORTS) {
      const context = await browser.newContext({ viewport });
      t.after(() => context.close());
      const page = await context.newPage();
      await page.goto(`${url}/login`);
      await page.fill('#email', portal.email);
      await page.fill('#password', TEST_PASSWORD);
      await Promise.all([page.waitForURL(`${url}/settings`), page.click('button[type=submit]')]);
      const limits = await page.$$eval('[data-testid="messaging-limit"]', (els) =>
        els.map((e) => e.textContent?.trim()),
      );
      assert.deepEqual(limits, [
        '· portfolio limit 10,000 people a day',
        '· portfolio limit 10,000 people a day',
        '· portfolio limit 2,000 people a day',
        '· portfolio limit 2,000 people a day',
      ]);
      const banner = page.locator('[data-testid="account-signals"]');
      assert.equal(await banner.getAttribute('role'), 'alert', 'a restriction is critical');
      const lines = await banner.locator('li').allTextContents();
      assert.equal(lines.length, 4);
      assert.match(lines[0]!, /display name “Sandbox Business 1” of \+1555[0-9]{7}: REJECTED/);
      assert.match(lines[1]!, /restricted until .*RESTRICTED_BIZ_INITIATED_MESSAGING/);
      assert.match(lines[2]!, /Additional verification is required for your business/);
      assert.match(lines[3]!, /messaging limit is now 10,000 people a day/);
      await screenshot(page, `account-signals-settings-${viewport.width}`);
      assert.deepEqual(await pageProblems(page), [], `at ${viewport.width} px`);
    }
  });
});
