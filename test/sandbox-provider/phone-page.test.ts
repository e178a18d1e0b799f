/**
 * The sandbox phone page and the apps page's account signals in real headless Chromium at
 * 1280 px and 390 px (no horizontal overflow, no serious axe finding): the person replies,
 * quotes, reacts, sends a sample document, uploads a photo, shares a location and sends STOP,
 * each reaching the app as the Cloud API's inbound webhook; a bad form changes nothing. Every
 * kind a business sends renders (thumbnails of the sandbox's media bytes, document links with
 * their file name, buttons, a list's menu, a template's header, body and buttons with their
 * parameters, locations, contacts, quotes, reactions on their message, text escaped), and tapping
 * a button or a row in Chromium sends the reply webhook.
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
import { call, changesOf, granted, inbound, type Item } from './sandbox-cloud.ts';

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

  test('every kind a business sends renders on the phone, and its buttons can be tapped', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { token, wabaId, numbers } = await granted(p, '6802');
    const [number] = numbers;
    const hello = await inbound(p, {
      phoneNumberId: number,
      from: PERSON,
      text: 'Do you have it in red?',
    });
    const photo = await inbound(p, {
      phoneNumberId: number,
      from: PERSON,
      message: { type: 'image', image: { caption: 'This one' } },
    });
    const inboundOf = (wamid: string) => p.sandbox.cloud.messages.find((m) => m.wamid === wamid)!;
    const imageId = (inboundOf(photo).inbound!.image as { id: string }).id;
    const docWamid = await inbound(p, {
      phoneNumberId: number,
      from: PERSON,
      message: { type: 'document', document: {} },
    });
    const docId = (inboundOf(docWamid).inbound!.document as { id: string }).id;
    const send = async (message: object) => {
      const res = await call(p, 'POST', `/v21.0/${number}/messages`, {
        token,
        body: { messaging_product: 'whatsapp', to: PERSON, ...message },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.messages[0].id as string;
    };
    await send({ type: 'image', image: { id: imageId, caption: 'Red <b>and</b> blue' } });
    await send({
      type: 'document',
      document: { id: docId, filename: 'invoice-17.pdf', caption: 'Your invoice' },
    });
    await send({
      type: 'document',
      document: { link: 'https://example.com/terms.pdf', filename: 'terms.pdf' },
    });
    await send({ type: 'text', text: { body: 'Yes, in red.' }, context: { message_id: hello } });
    await send({ type: 'reaction', reaction: { message_id: photo, emoji: '❤️' } });
    await send({
      type: 'location',
      location: { latitude: 52.3676, longitude: 4.9041, name: 'Our shop', address: 'Dam 1' },
    });
    await send({ type: 'contacts', contacts: [{ name: { formatted_name: 'Shop desk' } }] });
    const buttons = await send({
      type: 'interactive',
      interactive: {
        type: 'button',
        header: { type: 'image', image: { id: imageId } },
        body: { text: 'Shall we reserve it?' },
        footer: { text: 'Reserved for 24 hours' },
        action: {
          buttons: [
            { type: 'reply', reply: { id: 'reserve', title: 'Reserve' } },
            { type: 'reply', reply: { id: 'no-thanks', title: 'No thanks' } },
          ],
        },
      },
    });
    await send({
      type: 'interactive',
      interactive: {
        type: 'list',
        header: { type: 'text', text: 'Pick-up' },
        body: { text: 'When will you come?' },
        action: {
          button: 'Choose a time',
          sections: [
            { title: 'Monday', rows: [{ id: 'mon-9', title: '9:00', description: 'Morning' }] },
            { title: 'Tuesday', rows: [{ id: 'tue-14', title: '14:00' }] },
          ],
        },
      },
    });
    await send({
      type: 'interactive',
      interactive: {
        type: 'cta_url',
        body: { text: 'Track your parcel' },
        action: {
          name: 'cta_url',
          parameters: { display_text: 'Track', url: 'https://example.com/t/17' },
        },
      },
    });
    p.sandbox.cloud.templatesOf(wabaId).push({
      id: '990004',
      name: 'order_shipped',
      language: 'en_US',
      category: 'UTILITY',
      status: 'APPROVED',
      appId: undefined,
      components: [
        { type: 'HEADER', format: 'IMAGE' },
        { type: 'BODY', text: 'Hi {{1}}, your order shipped.' },
        {
          type: 'BUTTONS',
          buttons: [{ type: 'URL', text: 'Track it', url: 'https://example.com/o/{{1}}' }],
        },
      ],
    });
    await send({
      type: 'template',
      template: {
        name: 'order_shipped',
        language: { code: 'en_US' },
        components: [
          { type: 'header', parameters: [{ type: 'image', image: { id: imageId } }] },
          { type: 'body', parameters: [{ type: 'text', text: 'Ada' }] },
          {
            type: 'button',
            sub_type: 'url',
            index: 0,
            parameters: [{ type: 'text', text: 'A17' }],
          },
        ],
      },
    });

    const html = await (await fetch(`${p.sandbox.url}/sandbox/phone`)).text();
    const has = (fragment: string | RegExp, what: string) =>
      typeof fragment === 'string'
        ? assert.ok(html.includes(fragment), `${what}: ${fragment}`)
        : assert.match(html, fragment, what);
    const thumb = `src="/sandbox/phone/media/${imageId}"`;
    has(
      new RegExp(`<img class="thumb" ${thumb} alt="Red &lt;b>and&lt;/b> blue"`),
      'an image as a thumbnail, its caption escaped',
    );
    has('<p>Red &lt;b>and&lt;/b> blue</p>', 'the caption below it');
    assert.ok(!html.includes('<b>and</b>'), 'no markup from a caption');
    has(
      `href="/sandbox/phone/media/${docId}" download="invoice-17.pdf">📄 invoice-17.pdf</a>`,
      'a document as a link with its file name',
    );
    has(
      'href="https://example.com/terms.pdf" rel="noopener noreferrer">document terms.pdf at https://example.com/terms.pdf</a>',
      'a document by link',
    );
    has(
      '<blockquote class="quote">Do you have it in red?</blockquote>Yes, in red.',
      'the quoted text above the reply',
    );
    has('the business reacted ❤️', 'the reaction on its message');
    assert.ok(!html.includes('(reaction)'), 'a reaction is not a message of its own');
    has('📍 Our shop, Dam 1 (52.3676, 4.9041)', 'a location');
    has('👤 Shop desk', 'shared contacts');
    has('<p class="header">Pick-up</p>', "a list's text header");
    has('<button type="submit" name="reply_id" value="reserve">Reserve</button>', 'a reply button');
    has('<p class="meta">Reserved for 24 hours</p>', 'a footer');
    has('<details class="menu"><summary>Choose a time</summary>', 'a list as a menu');
    has(
      '<legend>Monday</legend><button type="submit" name="reply_id" value="mon-9">9:00<br/><span class="meta">Morning</span></button>',
      'a row with its description',
    );
    has(
      '<a href="https://example.com/t/17" rel="noopener noreferrer">Track</a>',
      'a call-to-action link',
    );
    has('<p>Hi Ada, your order shipped.</p>', "a template's body with its parameters");
    has(
      '<a href="https://example.com/o/A17" rel="noopener noreferrer">Track it</a>',
      "a template's URL button with its suffix",
    );
    assert.equal(
      html.split(thumb).length - 1,
      4,
      'the image, the person’s photo, the buttons header, the template header',
    );

    // The thumbnails' bytes: images inline, anything else as a download.
    const image = await fetch(`${p.sandbox.url}/sandbox/phone/media/${imageId}`);
    assert.equal(image.headers.get('content-type'), 'image/jpeg');
    assert.ok(
      Buffer.from(await image.arrayBuffer()).equals(p.sandbox.cloud.medium(imageId)!.bytes),
    );
    const doc = await fetch(`${p.sandbox.url}/sandbox/phone/media/${docId}`);
    assert.equal(doc.headers.get('content-type'), 'application/octet-stream');
    assert.equal(doc.headers.get('content-disposition'), 'attachment');
    await doc.arrayBuffer();
    assert.equal((await fetch(`${p.sandbox.url}/sandbox/phone/media/123`)).status, 404);

    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    t.after(() => browser.close());
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(10_000);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.goto(`${p.sandbox.url}/sandbox/phone`);
      await page.locator('details.menu').evaluate((d) => ((d as HTMLDetailsElement).open = true));
      assert.deepEqual(await pageProblems(page), [], `rich phone at ${viewport.width} px`);
      await screenshot(page, `sandbox-phone-rich-${viewport.width}`);
    }
    const items = () =>
      changesOf(hooks, 'messages').flatMap((c) => ((c.value as Item).messages ?? []) as Item[]);
    const status = page.getByRole('status');
    await page.getByRole('button', { name: 'Reserve' }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.deepEqual(items().at(-1)!.interactive, {
      type: 'button_reply',
      button_reply: { id: 'reserve', title: 'Reserve' },
    });
    assert.equal(items().at(-1)!.context.id, buttons);
    await page.getByText('Choose a time').click();
    await page.getByRole('button', { name: /14:00/ }).click();
    await status.filter({ hasText: 'written' }).waitFor();
    assert.deepEqual(items().at(-1)!.interactive.list_reply, { id: 'tue-14', title: '14:00' });
  });
});
