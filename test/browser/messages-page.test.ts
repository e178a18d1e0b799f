/**
 * Real browser: headless Chromium (Debian's, driven by playwright-core) on `/messages` of
 * Portico listening on localhost, with the sandbox provider on 127.0.0.1 (another site): sign
 * in, connect through the sandbox dialog, submit templates and a draft through the API, and
 * read the numbers, the templates with their review status, the drafts and the chart on the
 * page, at 1280 px and at 390 px. No CSP violation, no horizontal scroll of the page on a
 * phone. Screenshots land in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { startTestProvider } from '../helpers/provider.ts';
import { backends } from '../helpers/storage.ts';
import { portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH, freePort, screenshot } from '../helpers/browser.ts';

const TEMPLATE = {
  language: 'en_US',
  category: 'UTILITY',
  components: [
    { type: 'BODY', text: 'Hello {{1}}, your order shipped.', example: { body_text: [['Ada']] } },
  ],
};

describe('browser: /messages', () => {
  test('sign in → connect → templates and a draft via the API → /messages at 1280 and 390 px', async (t) => {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    const provider = await startTestProvider(t, {
      appBaseUrl: base,
      cloud: { templateReviewMs: 2000, statusDelaysMs: [100, 200, 300] },
    });
    // The provider's status webhooks come back to this app over real HTTP.
    const verifyToken = 'browser-test-verify-token';
    provider.sandbox.configureApp(provider.appId, {
      webhookUrl: `${base}/api/provider/webhooks`,
      webhookVerifyToken: verifyToken,
    });
    const { app, services, logs } = await buildTestApp(t, backends()[0]!, {
      ...provider.env,
      PROVIDER_WEBHOOK_VERIFY_TOKEN: verifyToken,
    });
    const portal = await portalWithPassword(services);
    await services.messaging.start();
    await services.messaging.startWorkers();
    await services.messaging.addCredit({
      portalId: portal.portalId,
      amount: 1000,
      note: 'browser test',
      actor: { type: 'system', id: 'test' },
    });
    await app.listen({ host: '127.0.0.1', port });
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${base}/api/v1/external/messaging${path}`, {
        method,
        headers: { authorization: portal.token, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });

    const browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: CHROMIUM_ARGS,
    });
    t.after(() => browser.close());
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
        problems.push(m.text());
    });
    page.on('pageerror', (err) => problems.push(err.message));

    await page.goto(`${base}/messages`);
    assert.equal(new URL(page.url()).pathname, '/login');
    await page.fill('#email', portal.email);
    await page.fill('#password', TEST_PASSWORD);
    await Promise.all([page.waitForURL(`${base}/messages`), page.click('button[type=submit]')]);
    // Not connected yet: the account's cards say so, the page still renders.
    assert.match(
      (await page.textContent('[data-testid=numbers-error]')) ?? '',
      /connect it on \/settings/,
    );
    assert.match((await page.textContent('[data-testid=templates-error]')) ?? '', /connect/);

    await Promise.all([
      page.waitForURL(`${base}/settings`),
      page.click('header a[href="/settings"]'),
    ]);
    await Promise.all([
      page.waitForURL(`${base}/connect`),
      page.click('a.button[href="/connect"]'),
    ]);
    await Promise.all([
      page.waitForURL((u) => u.origin === provider.sandbox.url),
      page.click('button:has-text("Continue to")'),
    ]);
    await Promise.all([page.waitForURL(`${base}/authorized`), page.click('button[value=allow]')]);
    const numbersRes = (await (await api('GET', '/numbers')).json()) as {
      data: { items: { id: string; wabaId: string }[] };
    };
    const sender = numbersRes.data.items[0]!;
    const WABA = sender.wabaId;

    assert.equal(
      (await api('POST', '/templates', { ...TEMPLATE, wabaId: WABA, name: 'order_shipped' }))
        .status,
      201,
    );
    assert.equal(
      (await api('POST', '/templates', { ...TEMPLATE, wabaId: WABA, name: 'promo_reject' })).status,
      201,
    );
    const draft = await api('POST', '/drafts', {
      type: 'template',
      template: { name: 'order_shipped', language: 'en_US', parameters: ['Ada'] },
      recipients: { phones: ['+1 650 555 1234'], tag: 'vip' },
    });
    assert.equal(draft.status, 201);
    const draftId = ((await draft.json()) as { data: { id: string } }).data.id;
    // The provider's review takes 2 s; then a template message goes out through the API.
    const deadline = Date.now() + 20_000;
    let sent: Response;
    for (;;) {
      sent = await api('POST', '/messages', {
        to: '+16505551234',
        from: sender.id,
        type: 'template',
        template: { name: 'order_shipped', language: 'en_US', parameters: ['Ada'] },
      });
      if (sent.status !== 422 || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.equal(
      sent.status,
      202,
      logs
        .filter((l) => l.includes('"level":50'))
        .join('\n')
        .slice(0, 2000),
    );
    const messageId = ((await sent.json()) as { data: { id: string } }).data.id;
    const status = async () =>
      ((await (await api('GET', `/messages/${messageId}`)).json()) as { data: { status: string } })
        .data.status;
    while ((await status()) !== 'read' && Date.now() < deadline + 20_000)
      await new Promise((r) => setTimeout(r, 200));
    assert.equal(await status(), 'read');

    await page.goto(`${base}/settings`);
    // The site navigation links the page.
    await Promise.all([
      page.waitForURL(`${base}/messages`),
      page.click('header a[href="/messages"]'),
    ]);
    const numbers = (await page.textContent('[data-testid=numbers]')) ?? '';
    assert.match(numbers, /Sandbox Business/);
    assert.match(numbers, /GREEN/);
    const rows = await page.$$eval('[data-testid=templates-table] tbody tr', (trs) =>
      trs.map((tr) => tr.textContent ?? ''),
    );
    assert.ok(rows.length >= 2, rows.join(' | '));
    assert.ok(
      rows.some((r) => r.includes('order_shipped') && r.includes('approved')),
      rows.join(),
    );
    assert.ok(rows.some((r) => r.includes('promo_reject') && r.includes('rejected')));
    const log = await page.$$eval('[data-testid=messages] tbody tr', (trs) =>
      trs.map((tr) => tr.textContent ?? ''),
    );
    assert.equal(log.length, 1);
    assert.match(log[0]!, /\+16505551234.*template.*read/);
    assert.match((await page.textContent('[data-testid=balance]')) ?? '', /\d/);
    const chart = await page.getAttribute('[data-testid=daily-chart] svg', 'aria-label');
    assert.match(chart ?? '', /1 read/);
    assert.match((await page.textContent('[data-testid=drafts]')) ?? '', new RegExp(draftId));
    assert.ok(await page.isVisible('[data-testid=message-log]'));
    await screenshot(page, 'messages-01-read-1280');

    // The filter form is a GET: its values land in the address and stay in the form.
    await page.selectOption('#status', 'delivered');
    await Promise.all([
      page.waitForURL(/status=delivered/),
      page.click('button:has-text("Filter")'),
    ]);
    assert.equal(await page.inputValue('#status'), 'delivered');
    assert.equal(await page.$('[data-testid=messages]'), null, 'the read message is not delivered');
    await screenshot(page, 'messages-02-filtered-1280');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/messages`);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `no horizontal scroll at 390 px (overflow ${overflow} px)`);
    await screenshot(page, 'messages-03-phone-390');
    assert.deepEqual(problems, [], 'no CSP violation or page error');
  });
});
