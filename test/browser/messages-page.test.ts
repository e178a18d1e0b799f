/**
 * Real browser: headless Chromium (Debian's, driven by playwright-core) on `/messages` of
 * Portico listening on localhost, with the sandbox provider on 127.0.0.1 (another site): sign
 * in, follow the composer's way to connect, connect through the sandbox dialog, submit
 * templates and a draft through the API, and read the numbers, the templates with their review
 * status, the drafts and the chart on the page, at 1280 px and at 390 px. Then the composer:
 * a template with a variable to a picked contact (in the log, its price held), free text
 * refused outside the 24-hour window (next to the field, values kept), and sent once the person
 * wrote in from the sandbox phone. No CSP violation; the tour's checks (pageProblems) on the
 * composer's states. Screenshots land in test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chromium, type Page } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { startTestProvider } from '../helpers/provider.ts';
import { backends } from '../helpers/storage.ts';
import { portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  freePort,
  pageProblems,
  screenshot,
} from '../helpers/browser.ts';
import { deadline } from '../helpers/deadlines.ts';

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
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
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
    // The composer says what to do next, and its link leads there.
    assert.match(
      (await page.textContent('[data-testid=composer-not-connected]')) ?? '',
      /Connect your WhatsApp Business account/,
    );
    assert.deepEqual(await pageProblems(page), [], 'not connected at 1280 px');
    await Promise.all([
      page.waitForURL(`${base}/connect`),
      page.click('[data-testid=composer-not-connected] a[href="/connect"]'),
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
    const giveUp = Date.now() + deadline(20_000);
    let sent: Response;
    for (;;) {
      sent = await api('POST', '/messages', {
        to: '+16505551234',
        from: sender.id,
        type: 'template',
        template: { name: 'order_shipped', language: 'en_US', parameters: ['Ada'] },
      });
      if (sent.status !== 422 || Date.now() > giveUp) break;
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
    while ((await status()) !== 'read' && Date.now() < giveUp + deadline(20_000))
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
    assert.match(log[0]!, /\+16505551234.*Template.*read/);
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

    await composerRound(page, {
      base,
      token: portal.token,
      api,
      sandboxUrl: provider.sandbox.url,
      sender,
    });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/messages`);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `no horizontal scroll at 390 px (overflow ${overflow} px)`);
    await screenshot(page, 'messages-03-phone-390');
    assert.deepEqual(await pageProblems(page), [], 'the composer at 390 px');
    assert.deepEqual(problems, [], 'no CSP violation or page error');
  });
});

type Api = (method: string, path: string, body?: unknown) => Promise<Response>;

/** The value of the `<select>` option whose text contains `text`. */
async function optionWith(page: Page, select: string, text: string): Promise<string> {
  const value = await page.$eval(
    select,
    (el, t) => Array.from((el as HTMLSelectElement).options).find((o) => o.text.includes(t))?.value,
    text,
  );
  assert.ok(value, `an option of ${select} with "${text}"`);
  return value;
}

/**
 * The composer at 1280 px: a template with its variable to a picked contact (in the log, its
 * price held), then free text refused outside the window and sent once the person wrote in
 * from the sandbox phone.
 */
async function composerRound(
  page: Page,
  p: { base: string; token: string; api: Api; sandboxUrl: string; sender: { id: string } },
): Promise<void> {
  const contact = await fetch(`${p.base}/api/v1/external/crm/contacts`, {
    method: 'POST',
    headers: { authorization: p.token, 'content-type': 'application/json' },
    body: JSON.stringify({ phone: '+1 650 555 0100', firstName: 'Grace', lastName: 'Hopper' }),
  });
  assert.equal(contact.status, 201);
  const contactId = ((await contact.json()) as { data: { id: string } }).data.id;

  await page.goto(`${p.base}/messages`);
  // Choosing a template is a GET: its variables become labelled fields.
  await page.selectOption('#c-compose', await optionWith(page, '#c-compose', 'order_shipped'));
  await Promise.all([page.waitForURL(/compose=/), page.click('button:has-text("Choose")')]);
  assert.equal(
    await page.textContent('[data-testid=template-body]'),
    'Hello {{1}}, your order shipped.',
  );
  assert.equal(await page.textContent('label[for=c-parameter-1]'), '{{1}}');
  assert.match((await page.textContent('#c-parameter-1-help')) ?? '', /For example: Ada/);
  // No recipient: the error stands next to the recipient, the variable is kept.
  await page.fill('#c-parameter-1', 'Grace');
  await Promise.all([page.waitForURL(`${p.base}/messages/send`), page.click('[data-testid=send]')]);
  assert.equal(await page.textContent('#c-to-error'), 'Choose a contact or type a phone number.');
  assert.equal(await page.getAttribute('#c-to', 'aria-invalid'), 'true');
  assert.equal(await page.inputValue('#c-parameter-1'), 'Grace');
  assert.match((await page.textContent('[data-testid=template-body]')) ?? '', /order shipped/);
  await screenshot(page, 'messages-04-composer-error-1280');
  assert.deepEqual(await pageProblems(page), [], 'the composer with an error at 1280 px');

  await page.selectOption('#c-contact', contactId);
  await Promise.all([
    page.waitForURL((u) => u.searchParams.get('done') === 'message_sent'),
    page.click('[data-testid=send]'),
  ]);
  const messageId = new URL(page.url()).searchParams.get('message') ?? '';
  assert.match(messageId, /^msg_/);
  assert.match((await page.textContent('[data-testid=notice]')) ?? '', /The message is queued/);
  assert.equal(await page.getAttribute('[data-testid=notice-link]', 'href'), `#m-${messageId}`);
  assert.match((await page.textContent(`#m-${messageId}`)) ?? '', /\+16505550100.*Template/);
  await screenshot(page, 'messages-05-sent-1280');
  assert.deepEqual(await pageProblems(page), [], 'sent at 1280 px');
  // The API's own send: the parameters as typed, the price held from the credit.
  const sent = (await (await p.api('GET', `/messages/${messageId}`)).json()) as {
    data: { contactId: string; template: { name: string; parameters: string[] } };
  };
  assert.equal(sent.data.contactId, contactId);
  assert.deepEqual(sent.data.template, {
    name: 'order_shipped',
    language: 'en_US',
    parameters: ['Grace'],
  });
  const moves = (await (await p.api('GET', '/credit/transactions')).json()) as {
    data: { items: { kind: string; messageId: string | null }[] };
  };
  assert.ok(moves.data.items.some((x) => x.kind === 'reserve' && x.messageId === messageId));

  // Free text to someone who has not written in: the service's refusal, next to the text.
  await page.goto(`${p.base}/messages?compose=text`);
  await page.selectOption('#c-from', p.sender.id);
  await page.fill('#c-to', '+1 650 555 0100');
  await page.fill('#c-text', 'Your parcel is at the door.');
  await Promise.all([page.waitForURL(`${p.base}/messages/send`), page.click('[data-testid=send]')]);
  assert.match(
    (await page.textContent('#c-text-error')) ?? '',
    /has not written to this sender number in the last 24 hours/,
  );
  assert.equal(await page.inputValue('#c-text'), 'Your parcel is at the door.');
  assert.equal(await page.inputValue('#c-to'), '+1 650 555 0100');
  await screenshot(page, 'messages-06-outside-window-1280');

  // The person writes in from the sandbox phone: the window of that sender number opens.
  await page.goto(`${p.sandboxUrl}/sandbox/phone`);
  await page.selectOption('select[name=phone_number_id]', p.sender.id);
  await page.fill('input[name=from]', '16505550100');
  await page.fill('form input[name=text] >> nth=0', 'Is it here yet?');
  await Promise.all([
    page.waitForURL(`${p.sandboxUrl}/sandbox/phone/reply`),
    page.click('button:has-text("Send") >> nth=0'),
  ]);
  assert.match((await page.textContent('main')) ?? '', /answered 200/);
  await page.goto(`${p.base}/messages?compose=text`);
  await page.selectOption('#c-from', p.sender.id);
  await page.selectOption('#c-contact', contactId);
  await page.fill('#c-text', 'Your parcel is at the door.');
  await Promise.all([
    page.waitForURL((u) => u.searchParams.get('done') === 'message_sent'),
    page.click('[data-testid=send]'),
  ]);
  const textId = new URL(page.url()).searchParams.get('message') ?? '';
  assert.match((await page.textContent(`#m-${textId}`)) ?? '', /\+16505550100.*Text/);
}
