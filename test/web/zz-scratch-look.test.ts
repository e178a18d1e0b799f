import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH, pageProblems, screenshot, VIEWPORTS } from '../helpers/browser.ts';
import { backends } from '../helpers/storage.ts';
import { portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';
import { personWrites } from './inbox.test.ts';

test('look', async (t) => {
  const { app, services } = await buildTestApp(t, backends()[0]!);
  const a = await portalWithPassword(services);
  const aId = await services.accounts.portalIdFor(a.portalCode);
  const ada = await personWrites(services, aId, { phone: '+16505551234', firstName: 'Ada', text: 'hello from Ada, a rather long message that should wrap nicely inside the bubble without overflowing anything at all', image: true });
  await personWrites(services, aId, { phone: '+16505559999', text: 'second person' });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  t.after(() => browser.close());
  for (const vp of VIEWPORTS) {
    const page = await (await browser.newContext({ viewport: vp })).newPage();
    page.on('console', (m) => console.log('console', m.text()));
    await page.goto(`${base}/login`);
    await page.fill('#email', a.email);
    await page.fill('#password', TEST_PASSWORD);
    await Promise.all([page.waitForURL(/settings/), page.click('button[type=submit]')]);
    await page.goto(`${base}/inbox`);
    await screenshot(page, `scratch-inbox-list-${vp.width}`);
    console.log(await pageProblems(page));
    await page.goto(`${base}/inbox/${ada.conversationId}`);
    await screenshot(page, `scratch-inbox-thread-${vp.width}`);
    console.log(await pageProblems(page));
  }
  assert.ok(true);
});
