/**
 * The sandbox phone page and the apps page's account signals in real headless Chromium at
 * 1280 px and 390 px (no horizontal overflow, no serious axe finding): the person replies,
 * quotes, reacts, sends a sample document, uploads a photo, shares a location and sends STOP,
 * each reaching the app as the Cloud API's inbound webhook; a bad form changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { SAMPLES } from '../../src/sandbox-provider/samples/samples.ts';
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  pageProblems,
  screenshot,
  VIEWPORTS,
} from '../helpers/browser.ts';
import { recordAppWebhooks, startTestProvider } from '../helpers/provider.ts';
import { call, changesOf, granted, type Item } from './sandbox-cloud.ts';

const PERSON = '16505551234';

describe('browser: the sandbox phone and the account signals', () => {
  test('the person sends every kind of message from the phone page', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, numbers } = await granted(p, '6801');
    const sent = await call(p, 'POST', `/v21.0/${numbers[0]}/messages`, {
      token,
      body: {
        messaging_product: 'whatsapp',
        to: PERSON,
        type: 'template',
        template: { name: 'hello_world', language: { code: 'en_US' } },
      },
    });
    const businessWamid = sent.body.messages[0].id as string;
    const items = () =>
      changesOf(hooks, 'messages').flatMap((c) => ((c.value as Item).messages ?? []) as Item[]);
    const lastItem = () => items().at(-1)!;

    // A bad form answers 400 and records nothing.
    const before = p.sandbox.cloud.messages.length;
    const bad = await fetch(`${p.sandbox.url}/sandbox/phone/location`, {
      method: 'POST',
      body: new URLSearchParams({
        phone_number_id: numbers[0],
        from: PERSON,
        latitude: 'north',
        longitude: '4',
      }),
    });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /Sandbox phone/);
    assert.equal(p.sandbox.cloud.messages.length, before);

    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    t.after(() => browser.close());
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.goto(`${p.sandbox.url}/sandbox/phone`);
      await page
        .locator('details')
        .first()
        .evaluate((d) => ((d as HTMLDetailsElement).open = true));
      assert.deepEqual(await pageProblems(page), [], `phone at ${viewport.width} px`);
      await screenshot(page, `sandbox-phone-${viewport.width}`);
    }
    const person = page.locator(`section:has(h2:text-is("+${PERSON}"))`);
    const status = page.getByRole('status');

    await person.getByLabel('Message', { exact: true }).fill('hello');
    await person.getByRole('button', { name: 'Send', exact: true }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.deepEqual(lastItem().text, { body: 'hello' });

    const received = person.locator('li', { hasText: 'hello_world' });
    await received.getByText('Reply or react').click();
    await received.getByLabel('Reply quoting this message').fill('Yes please');
    await received.getByRole('button', { name: 'Send reply' }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.deepEqual(lastItem().context?.id, businessWamid);
    assert.deepEqual(lastItem().text, { body: 'Yes please' });

    await received.getByText('Reply or react').click();
    await received.getByRole('button', { name: 'React 👍' }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.deepEqual(lastItem().reaction, { message_id: businessWamid, emoji: '👍' });
    assert.match(await received.innerText(), /you reacted 👍/);

    await person.getByText('Send a photo, document or other file').click();
    await person.getByLabel('Sample file').selectOption('pdf');
    await person.getByLabel('Caption').fill('My invoice');
    await person.getByRole('button', { name: 'Send file' }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.equal(lastItem().type, 'document');
    assert.equal(lastItem().document.caption, 'My invoice');
    assert.equal(lastItem().document.mime_type, 'application/pdf');

    const png = SAMPLES.find((s) => s.key === 'png')!;
    await person.getByText('Send a photo, document or other file').click();
    await person
      .getByLabel(/Or upload a file/)
      .setInputFiles({ name: 'mine.png', mimeType: 'image/png', buffer: png.bytes });
    await person.getByRole('button', { name: 'Send file' }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.equal(lastItem().type, 'image');
    assert.equal(lastItem().image.mime_type, 'image/png');
    assert.equal(
      p.sandbox.cloud.medium(lastItem().image.id as string)?.bytes.equals(png.bytes),
      true,
    );

    await person.getByText('Share a location').click();
    await person.getByLabel('Place name').fill('Dam square');
    await person.getByRole('button', { name: 'Share location' }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.deepEqual(lastItem().location, {
      latitude: 52.3676,
      longitude: 4.9041,
      name: 'Dam square',
    });

    await person.getByRole('button', { name: 'Send STOP' }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.deepEqual(lastItem().text, { body: 'STOP' });
    assert.equal(items().length, 7);
    await page.setViewportSize({ width: 390, height: 844 });
    assert.deepEqual(await pageProblems(page), [], 'the thread at 390 px');
    const outcomeOverflow = await status.evaluate((box) => box.scrollWidth - box.clientWidth);
    assert.ok(outcomeOverflow <= 1, `the outcome's wamid wraps (${outcomeOverflow} px over)`);
    await screenshot(page, 'sandbox-phone-thread-390');

    // The apps page: a number's quality from a button.
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.goto(`${p.sandbox.url}/sandbox/apps`);
      assert.deepEqual(await pageProblems(page), [], `apps at ${viewport.width} px`);
      await screenshot(page, `sandbox-apps-${viewport.width}`);
    }
    await page.getByRole('button', { name: 'Quality YELLOW' }).first().click();
    await page.getByRole('heading', { name: 'Signal sent' }).waitFor();
    assert.equal(
      (changesOf(hooks, 'phone_number_quality_update')[0]?.value as Item).event,
      'FLAGGED',
    );
  });
});
