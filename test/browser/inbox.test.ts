/**
 * Real browser: headless Chromium (Debian's, driven by playwright-core) on `/inbox` of Portico
 * listening on localhost, the sandbox provider on 127.0.0.1 delivering its signed webhooks over
 * real HTTP. A person writes "hello" from the sandbox phone (`POST /sandbox/inbound`) and the
 * open inbox shows the conversation within a second, without a reload; with the thread open, a
 * photo arrives the same way and shows inline through the page's media route. The reply typed in
 * the inbox reaches the sandbox phone; then a quoted reply, reply buttons (shown disabled), a
 * reaction on the person's message and a PDF attached (uploaded, sent as a document, shown as
 * its file name). With the portal's `autoMarkRead` on, opening the conversation marks it read (the
 * page's script posts it; the GET itself writes nothing). At 1280 px and at 390 px (list and thread as two views, the list form open):
 * no horizontal overflow, no axe-core violation of impact serious or critical, no CSP violation.
 * Screenshots land in test-output/screenshots/inbox-*.png.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp } from '../helpers/app.ts';
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  freePort,
  pageProblems,
  screenshot,
  VIEWPORTS,
} from '../helpers/browser.ts';
import { connectPortal, startTestProvider } from '../helpers/provider.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';
import { deadline } from '../helpers/deadlines.ts';

const PERSON = '16505551234';

for (const backend of backends())
  describe(`browser: /inbox (${backend.name})`, () => {
    test('a person writes → the open inbox shows it without a reload; a photo inline; a reply reaches the phone; quote, buttons, react, attach; 1280 and 390 px', async (t) => {
      const port = await freePort();
      const base = `http://localhost:${port}`;
      const provider = await startTestProvider(t, {
        appBaseUrl: base,
        cloud: { statusDelaysMs: [100, 200, 300] },
      });
      const verifyToken = 'inbox-browser-verify-token';
      provider.sandbox.configureApp(provider.appId, {
        webhookUrl: `${base}/api/provider/webhooks`,
        webhookVerifyToken: verifyToken,
      });
      const { app, services } = await buildTestApp(t, backend, {
        ...provider.env,
        PROVIDER_WEBHOOK_VERIFY_TOKEN: verifyToken,
      });
      const portal = await portalWithPassword(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await connectPortal(services, provider, { portalId, userId: portal.userId });
      await queryRows(
        services.storage,
        sql`insert into messaging_settings (portal_id, opt_out_keywords, opt_in_keywords,
            auto_mark_read)
          values (${portalId}, array['STOP'], array['START'], true)`,
      );
      await services.messaging.start();
      await services.messaging.startWorkers();
      await services.messaging.addCredit({
        portalId,
        amount: 1000,
        note: 'test',
        actor: CLI_ACTOR,
      });
      await app.listen({ host: '127.0.0.1', port });
      const [number] = await services.messagingProvider.numbers(portalId);
      assert.ok(number);
      const writeIn = async (body: object) => {
        const res = await fetch(`${provider.sandbox.url}/sandbox/inbound`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ phoneNumberId: number.id, from: PERSON, name: 'Ada', ...body }),
        });
        assert.equal(res.status, 200, await res.clone().text());
        return Date.now();
      };

      const browser: Browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        args: CHROMIUM_ARGS,
      });
      t.after(() => browser.close());
      const problems: string[] = [];
      const signedIn = async (viewport: (typeof VIEWPORTS)[number]): Promise<Page> => {
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        page.setDefaultTimeout(15_000);
        page.on('console', (m) => {
          if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
            problems.push(m.text());
        });
        page.on('pageerror', (err) => problems.push(err.message));
        await page.goto(`${base}/inbox`);
        assert.equal(new URL(page.url()).pathname, '/login');
        await page.fill('#email', portal.email);
        await page.fill('#password', TEST_PASSWORD);
        await Promise.all([page.waitForURL(`${base}/inbox`), page.click('button[type=submit]')]);
        return page;
      };
      const live = (page: Page) =>
        page.waitForSelector('html[data-inbox-live]', { state: 'attached' });

      const page = await signedIn(VIEWPORTS[0]);
      assert.ok(await page.isVisible('[data-testid=inbox-empty]'));
      assert.equal(await page.getAttribute('header a[href="/inbox"]', 'aria-current'), 'page');
      assert.deepEqual(await pageProblems(page), [], 'empty inbox at 1280 px');
      await live(page);

      // A person writes: the list shows it without a reload, within a second.
      let sentAt = await writeIn({ text: 'hello' });
      const entry = await page.waitForSelector('[data-testid^=conversation-]', {
        timeout: deadline(5_000),
      });
      // Without a reload, within the wait's deadline; the delay is reported, not asserted
      // (speed is measured by the benches, never by a timed test).
      t.diagnostic(`shown ${Date.now() - sentAt} ms after the webhook`);
      assert.match(
        (await entry.textContent()) ?? '',
        /hello[^]*1 unread[^]*Window open · 24 h left/,
      );
      assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation').length), 1);

      await Promise.all([page.waitForURL(/\/inbox\/cnv_/), entry.click()]);
      const conversationUrl = page.url();
      assert.match((await page.textContent('[data-testid=thread]')) ?? '', /hello/);
      await live(page);
      // Opened with autoMarkRead on: the script posts the mark; the phone shows "hello" read
      // and the list, reloaded, shows nothing unread.
      const readBy = Date.now() + deadline(10_000);
      const helloRead = () =>
        provider.sandbox.cloud.messages.find((m) => m.waId === PERSON && m.readAt !== undefined);
      while (!helloRead() && Date.now() < readBy) await delay(100);
      assert.ok(helloRead(), 'opening the conversation sent the read receipt');
      await page.waitForFunction(
        () => !/unread/.test(document.getElementById('inbox-list')?.textContent ?? 'unread'),
        undefined,
        { timeout: deadline(10_000) },
      );

      // With the thread open, a photo arrives the same way and shows inline.
      sentAt = await writeIn({ message: { type: 'image', image: { caption: 'the parcel' } } });
      const image = await page.waitForSelector('[data-testid=inbound-image]', {
        timeout: deadline(5_000),
      });
      // Without a reload, within the wait's deadline; the delay is reported, not asserted
      // (speed is measured by the benches, never by a timed test).
      t.diagnostic(`photo shown ${Date.now() - sentAt} ms after the webhook`);
      assert.equal(await image.getAttribute('alt'), 'the parcel');
      await page.waitForFunction(
        () => {
          const img = document.querySelector<HTMLImageElement>('[data-testid=inbound-image]');
          return !!img && img.complete && img.naturalWidth > 0;
        },
        undefined,
        { timeout: deadline(10_000) },
      );
      await screenshot(page, 'inbox-01-thread-1280');
      assert.deepEqual(await pageProblems(page), [], 'thread at 1280 px');

      // The reply reaches the sandbox phone.
      await page.fill('#r-text', 'On its way');
      await Promise.all([
        page.waitForURL((u) => u.href.startsWith(conversationUrl)),
        page.click('[data-testid=reply-send]'),
      ]);
      assert.match(
        (await page.textContent('[data-testid=thread] [data-testid=bubble-out]')) ?? '',
        /On its way/,
      );
      const giveUp = Date.now() + deadline(10_000);
      const onPhone = () =>
        provider.sandbox.cloud.messages.find(
          (m) => m.direction === 'received' && m.waId === PERSON && m.text === 'On its way',
        );
      while (!onPhone() && Date.now() < giveUp) await delay(100);
      assert.ok(onPhone(), 'the sandbox phone received the reply');
      await screenshot(page, 'inbox-02-replied-1280');

      // Rich replies: quote the person's "hello", send buttons, react, attach a document.
      const hello = page.locator('[data-testid=bubble-in]', { hasText: 'hello' });
      await Promise.all([
        page.waitForURL(/\?quote=msg_/),
        hello.locator('[data-testid=quote-link]').click(),
      ]);
      assert.match((await page.textContent('[data-testid=quoting]')) ?? '', /hello/);
      await page.fill('#r-text', 'Quoting you');
      await Promise.all([
        page.waitForURL((u) => u.hash.startsWith('#m-msg_')),
        page.click('[data-testid=reply-send]'),
      ]);
      const quotedOut = page.locator('[data-testid=bubble-out]', { hasText: 'Quoting you' });
      assert.match((await quotedOut.locator('.quote').textContent()) ?? '', /hello/);

      await Promise.all([
        page.waitForURL(/compose=buttons/),
        page.click('[data-testid=mode-buttons]'),
      ]);
      await page.fill('#r-text', 'Keep the slot?');
      await page.fill('#r-button-1', 'Confirm');
      await page.fill('#r-button-2', 'Reschedule');
      await Promise.all([
        page.waitForURL((u) => u.hash.startsWith('#m-msg_')),
        page.click('[data-testid=reply-send]'),
      ]);
      assert.ok(await page.isDisabled('[data-testid=interactive-button] button >> text=Confirm'));

      await hello.locator('[data-testid=react] summary').click();
      await Promise.all([
        page.waitForURL((u) => u.hash.startsWith('#m-msg_')),
        hello.locator('button[name=emoji][value="👍"]').click(),
      ]);
      assert.match((await hello.locator('ul.reactions').textContent()) ?? '', /👍[^]*from you/);

      await Promise.all([page.waitForURL(/compose=file/), page.click('[data-testid=mode-file]')]);
      await page.fill('#r-caption', 'Your invoice');
      await page.setInputFiles('#r-file', {
        name: 'invoice-42.pdf',
        mimeType: 'application/pdf',
        buffer: Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n'),
      });
      await Promise.all([
        page.waitForURL((u) => u.hash.startsWith('#m-msg_')),
        page.click('[data-testid=attach-send]'),
      ]);
      assert.equal(
        await page.textContent('[data-testid=bubble-out] [data-testid=outbound-file]'),
        'invoice-42.pdf',
      );
      await screenshot(page, 'inbox-05-rich-1280');
      assert.deepEqual(await pageProblems(page), [], 'rich thread at 1280 px');

      // A phone: the list alone, then the thread alone with the way back.
      const phone = await signedIn(VIEWPORTS[1]);
      assert.ok(await phone.isVisible('[data-testid=conversations]'));
      await screenshot(phone, 'inbox-03-list-390');
      assert.deepEqual(await pageProblems(phone), [], 'list at 390 px');
      await phone.goto(conversationUrl);
      assert.equal(await phone.isVisible('[data-testid=conversations]'), false);
      assert.ok(await phone.isVisible('a.split-back'));
      assert.ok(await phone.isVisible('[data-testid=reply-form]'));
      await screenshot(phone, 'inbox-04-thread-390');
      assert.deepEqual(await pageProblems(phone), [], 'thread at 390 px');
      await phone.goto(`${conversationUrl.split('#')[0]}?compose=list`);
      await phone.locator('[data-testid=react] summary').first().click();
      await screenshot(phone, 'inbox-06-list-form-390');
      assert.deepEqual(await pageProblems(phone), [], 'rich thread and list form at 390 px');
      assert.deepEqual(problems, [], 'no CSP violation or page error');
    });
  });
