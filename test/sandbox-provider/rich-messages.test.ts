/**
 * The sandbox's `POST /{phone-number-id}/messages` takes every kind a business sends, as the
 * Cloud API does, over raw HTTP: what the official WhatsApp Node SDK sends for each kind (its
 * documented example objects, in the body its `bodyBuilder` makes) is accepted with a wamid;
 * each refusal answers the Cloud API's error object (`OAuthException`, `code`, `error_data:
 * {messaging_product, details}`, `fbtrace_id`, HTTP 400) with its code, and records nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SandboxTemplate } from '../../src/sandbox-provider/cloud-state.ts';
import { recordAppWebhooks, startTestProvider, type TestProvider } from '../helpers/provider.ts';
import { call, granted, inbound } from './sandbox-cloud.ts';

const PERSON = '16505551234';

/** A started sandbox with a person who wrote in, and the media ids of the samples they sent. */
async function setUp(t: test.TestContext) {
  const p = await startTestProvider(t);
  await recordAppWebhooks(t, p);
  const { token, wabaId, numbers } = await granted(p, '7101');
  const [number] = numbers;
  const mediaOf = async (type: string) => {
    const wamid = await inbound(p, {
      phoneNumberId: number,
      from: PERSON,
      message: { type, [type]: {} },
    });
    const item = p.sandbox.cloud.messages.find((m) => m.wamid === wamid)!.inbound!;
    return { wamid, id: (item[type] as { id: string }).id };
  };
  const image = await mediaOf('image');
  const media = {
    image: image.id,
    document: (await mediaOf('document')).id,
    audio: (await mediaOf('audio')).id,
    video: (await mediaOf('video')).id,
    sticker: (await mediaOf('sticker')).id,
  };
  const send = (body: object) =>
    call(p, 'POST', `/v21.0/${number}/messages`, {
      token,
      body: { messaging_product: 'whatsapp', to: PERSON, ...body },
    });
  return { p, token, wabaId, number, media, personWamid: image.wamid, send };
}

/** The wamid of an accepted send. */
async function accepted(send: (b: object) => ReturnType<typeof call>, body: object) {
  const res = await send(body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.messaging_product, 'whatsapp');
  assert.deepEqual(res.body.contacts, [{ input: PERSON, wa_id: PERSON }]);
  assert.match(res.body.messages[0].id, /^wamid\./);
  // A template's answer carries its pacing state; the sandbox paces none.
  // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/templates/template-pacing
  if ((body as { type?: string }).type === 'template')
    assert.equal(res.body.messages[0].message_status, 'accepted');
  return res.body.messages[0].id as string;
}

/** A refused send: HTTP 400, the Cloud API's error object with `code`, nothing recorded. */
async function refused(
  p: TestProvider,
  send: (b: object) => ReturnType<typeof call>,
  body: object,
  code: number,
) {
  const before = p.sandbox.cloud.messages.length;
  const res = await send(body);
  assert.equal(res.status, 400, JSON.stringify(body));
  const { error } = res.body;
  assert.equal(error.code, code, `${JSON.stringify(body)} → ${JSON.stringify(error)}`);
  assert.equal(error.type, 'OAuthException');
  assert.equal(typeof error.message, 'string');
  assert.equal(error.error_data.messaging_product, 'whatsapp');
  assert.ok(error.error_data.details.length > 0);
  assert.match(error.fbtrace_id, /^[A-Za-z0-9_-]+$/);
  assert.equal(p.sandbox.cloud.messages.length, before, 'a refused send records nothing');
  return error.error_data as { details: string };
}

/** The body the SDK's `MessagesAPI.bodyBuilder` makes (its messages API module). */
const sdkBody = (type: string, payload: unknown, recipient: number, replyMessageId?: string) => ({
  messaging_product: 'whatsapp',
  recipient_type: 'individual',
  to: recipient.toString(),
  type,
  [type]: payload,
  ...(replyMessageId && { context: { message_id: replyMessageId } }),
});

describe('rich messages to the sandbox', () => {
  test("the official Node SDK's documented examples are accepted", async (t) => {
    const { p, wabaId, number, media, personWamid, token } = await setUp(t);
    const sdk = (type: string, payload: unknown, reply?: string) =>
      call(p, 'POST', `/v21.0/${number}/messages`, {
        token,
        body: sdkBody(type, payload, Number(PERSON), reply),
      });
    const send = (type: string, payload: unknown, reply?: string) =>
      accepted(() => sdk(type, payload, reply), {});
    // The SDK's examples, their placeholder media id "123456abcde" replaced by sandbox media.
    await send('text', { body: 'MESSAGE_CONTENT', preview_url: false });
    await send('text', { body: 'A reply' }, personWamid);
    await send('audio', { id: media.audio, caption: 'My audio file', filename: 'example.mp4' });
    await send('audio', {
      link: new URL('https://example.com/example_1234.mp4').href,
      caption: 'My audio file',
      filename: 'example.mp4',
    });
    await send('document', {
      id: media.document,
      caption: 'My important document',
      filename: 'example.pdf',
    });
    await send('document', {
      link: 'https://example.com/example_1234.pdf',
      caption: 'My important document',
      filename: 'example.pdf',
    });
    await send('image', { id: media.image, caption: 'My image' });
    await send('image', { link: 'https://example.com/example.png', caption: 'My image' });
    await send('video', { id: media.video, caption: 'My video file', filename: 'example.mp4' });
    await send('video', { link: 'https://example.com/example_1234.mp4', caption: 'My video file' });
    await send('sticker', { id: media.sticker });
    await send('sticker', { link: 'https://example.com/example_1234.webp' });
    await send('location', {
      longitude: '37.4850729',
      latitude: '-122.1527671',
      name: 'Meta Headquarters',
      address: '1 Hacker Way, Menlo Park, CA 94025, USA',
    });
    await send('contacts', [
      {
        addresses: [
          {
            street: 'STREET',
            city: 'CITY',
            state: 'STATE',
            zip: 'ZIP',
            country: 'COUNTRY',
            country_code: 'COUNTRY_CODE',
            type: 'HOME',
          },
        ],
        birthday: 'YEAR_MONTH_DAY',
        emails: [{ email: 'EMAIL', type: 'WORK' }],
        name: {
          formatted_name: 'NAME',
          first_name: 'FIRST_NAME',
          last_name: 'LAST_NAME',
          middle_name: 'MIDDLE_NAME',
          suffix: 'SUFFIX',
          prefix: 'PREFIX',
        },
        org: { company: 'COMPANY', department: 'DEPARTMENT', title: 'TITLE' },
        phones: [
          { phone: 'PHONE_NUMBER', type: 'HOME' },
          { phone: 'PHONE_NUMBER', type: 'WORK', wa_id: 'PHONE_OR_WA_ID' },
        ],
        urls: [
          { url: 'URL', type: 'WORK' },
          { url: 'URL', type: 'HOME' },
        ],
      },
    ]);
    await send('interactive', {
      type: 'button',
      body: { text: 'BUTTON_TEXT' },
      action: {
        buttons: [
          { type: 'reply', reply: { id: 'UNIQUE_BUTTON_ID_1', title: 'BUTTON_TITLE_1' } },
          { type: 'reply', reply: { id: 'UNIQUE_BUTTON_ID_2', title: 'BUTTON_TITLE_2' } },
        ],
      },
    });
    const section = (n: number) => ({
      title: `SECTION_${n}_TITLE`,
      rows: [1, 2].map((r) => ({
        id: `SECTION_${n}_ROW_${r}_ID`,
        title: `SECTION_${n}_ROW_${r}_TITLE`,
        description: `SECTION_${n}_ROW_${r}_DESCRIPTION`,
      })),
    });
    await send('interactive', {
      type: 'list',
      header: { type: 'text', text: 'HEADER_TEXT' },
      body: { text: 'BODY_TEXT' },
      footer: { text: 'FOOTER_TEXT' },
      action: { button: 'BUTTON_TEXT', sections: [section(1), section(2)] },
    });
    await send('interactive', {
      type: 'product',
      body: { text: 'optional body text' },
      footer: { text: 'optional footer text' },
      action: { catalog_id: 'CATALOG_ID', product_retailer_id: 'ID_TEST_ITEM_1' },
    });
    await send('interactive', {
      type: 'product_list',
      header: { type: 'text', text: 'header-content' },
      body: { text: 'body-content' },
      footer: { text: 'footer-content' },
      action: {
        catalog_id: 'CATALOG_ID',
        sections: [1, 2].map(() => ({
          title: 'section-title',
          product_items: [
            { product_retailer_id: 'product-SKU-in-catalog' },
            { product_retailer_id: 'product-SKU-in-catalog' },
          ],
        })),
      },
    });
    const subscribe: SandboxTemplate = {
      id: '990001',
      name: 'Subscribe',
      language: 'en_US',
      category: 'MARKETING',
      status: 'APPROVED',
      components: [{ type: 'BODY', text: 'Thanks for subscribing to our {{1}}!' }],
      appId: undefined,
    };
    p.sandbox.cloud.templatesOf(wabaId).push(subscribe);
    const wamid = await send('template', {
      name: 'Subscribe',
      language: { policy: 'deterministic', code: 'en_US' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: 'newsletter' }] }],
    });
    const sent = p.sandbox.cloud.messages.find((m) => m.wamid === wamid)!;
    assert.equal(sent.templateView?.body, 'Thanks for subscribing to our newsletter!');
  });

  test('every kind is checked as the Cloud API checks it', async (t) => {
    const { p, send, media, personWamid } = await setUp(t);
    const ok = (body: object) => accepted(send, body);
    const no = (body: object, code: number) => refused(p, send, body, code);

    await no({ type: 'carousel', carousel: {} }, 131051);
    await no({ type: 'text' }, 100);
    await no({ type: 'text', text: { body: 'x'.repeat(4097) } }, 131009);
    await no({ type: 'text', text: { body: 'hi' }, context: 'wamid.x' }, 100);
    const quote = await ok({
      type: 'text',
      text: { body: 'Quoting you' },
      context: { message_id: personWamid },
    });
    assert.equal(p.sandbox.cloud.messages.at(-1)!.contextId, personWamid);
    assert.equal(p.sandbox.cloud.messages.at(-1)!.wamid, quote);

    // Media: exactly one of id and link, a known id of a type that fits, caption and file name.
    await no({ type: 'image', image: { id: media.image, link: 'https://example.com/a.png' } }, 100);
    await no({ type: 'image', image: { caption: 'nothing' } }, 100);
    await no({ type: 'image', image: { link: 'ftp://example.com/a.png' } }, 100);
    await no({ type: 'image', image: { id: '1234567890123456' } }, 131053);
    const wrongKind = await no({ type: 'image', image: { id: media.document } }, 131053);
    assert.match(wrongKind.details, /application\/pdf/);
    await no({ type: 'sticker', sticker: { id: media.image } }, 131053);
    await no({ type: 'image', image: { id: media.image, caption: 'x'.repeat(1025) } }, 131009);
    await no(
      { type: 'document', document: { id: media.document, filename: 'x'.repeat(241) } },
      131009,
    );
    await ok({
      type: 'document',
      document: { id: media.document, caption: 'Invoice', filename: 'invoice.pdf' },
    });
    await ok({
      type: 'image',
      image: { link: 'https://example.com/a.png', caption: 'x'.repeat(1024) },
    });

    // A voice message: `voice` is a boolean; the phone shows it as one.
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/audio-messages
    await no({ type: 'audio', audio: { id: media.audio, voice: 'yes' } }, 100);
    await ok({ type: 'audio', audio: { id: media.audio, voice: true } });
    assert.deepEqual(p.sandbox.cloud.messages.at(-1)!.content, { id: media.audio, voice: true });

    await no({ type: 'location', location: { latitude: 'north', longitude: 4 } }, 100);
    await ok({ type: 'location', location: { latitude: 52.37, longitude: 4.9, name: 'Dam' } });
    await no({ type: 'contacts', contacts: [] }, 100);
    await no({ type: 'contacts', contacts: [{ name: {} }] }, 100);
    await ok({ type: 'contacts', contacts: [{ name: { formatted_name: 'Grace Hopper' } }] });

    // Reactions: a wamid of this conversation, one emoji or none.
    await no({ type: 'reaction', reaction: { message_id: 'wamid.unknown', emoji: '👍' } }, 131009);
    await no({ type: 'reaction', reaction: { message_id: personWamid, emoji: 'yes' } }, 131009);
    await no(
      { type: 'reaction', reaction: { message_id: personWamid, emoji: '👍👍👍👍👍👍👍👍👍' } },
      131009,
    );
    await no({ type: 'reaction', reaction: { message_id: personWamid } }, 100);
    await ok({ type: 'reaction', reaction: { message_id: personWamid, emoji: '👍🏽' } });
    const reacted = () => p.sandbox.cloud.messages.find((m) => m.wamid === personWamid)!;
    assert.equal(reacted().businessReaction, '👍🏽');
    await ok({ type: 'reaction', reaction: { message_id: personWamid, emoji: '' } });
    assert.equal(reacted().businessReaction, undefined);
  });

  test('interactive messages within every length limit', async (t) => {
    const { p, send, media } = await setUp(t);
    const no = (interactive: object, code = 131009) =>
      refused(p, send, { type: 'interactive', interactive }, code);
    const ok = (interactive: object) => accepted(send, { type: 'interactive', interactive });
    const reply = (id: string, title = id) => ({ type: 'reply', reply: { id, title } });
    const buttons = (...b: object[]) => ({
      type: 'button',
      body: { text: 'Confirm?' },
      action: { buttons: b },
    });

    await ok({
      ...buttons(reply('yes', 'Y'.repeat(20)), reply('no', 'No'), reply('later', 'Later')),
      header: { type: 'image', image: { id: media.image } },
      footer: { text: 'F'.repeat(60) },
    });
    await no(buttons());
    await no(buttons(reply('a'), reply('b'), reply('c'), reply('d')));
    await no(buttons(reply('a', 'T'.repeat(21))));
    await no(buttons(reply('a', ''), reply('b')));
    await no(buttons(reply('a', 'One'), reply('a', 'Two')));
    await no(buttons(reply('a', 'Same'), reply('b', 'Same')));
    await no({ ...buttons(reply('a')), body: { text: 'B'.repeat(1025) } });
    await no({ ...buttons(reply('a')), body: undefined }, 100);
    await no({ ...buttons(reply('a')), footer: { text: 'F'.repeat(61) } });
    await no({ ...buttons(reply('a')), header: { type: 'text', text: 'H'.repeat(61) } });
    await no({ ...buttons(reply('a')), header: { type: 'image', image: { id: '42' } } }, 131053);
    await no({ ...buttons({ type: 'url', url: {} }) }, 100);
    await no({ type: 'flow_x', body: { text: 'x' }, action: {} }, 100);

    const row = (id: string, title = id, description?: string) => ({
      id,
      title,
      ...(description !== undefined && { description }),
    });
    const list = (sections: object[], button = 'Choose') => ({
      type: 'list',
      body: { text: 'Pick a day' },
      action: { button, sections },
    });
    await ok(
      list(
        [
          { title: 'T'.repeat(24), rows: [row('mon', 'R'.repeat(24), 'D'.repeat(72))] },
          { title: 'Later', rows: [row('tue')] },
        ],
        'B'.repeat(20),
      ),
    );
    await ok(list([{ rows: [row('mon')] }]));
    await no(list([{ rows: [row('mon')] }], 'B'.repeat(21)));
    await no(list([]));
    await no(
      list(Array.from({ length: 11 }, (_, i) => ({ title: `S${i}`, rows: [row(`r${i}`)] }))),
    );
    await no(
      list([
        { title: 'A', rows: Array.from({ length: 6 }, (_, i) => row(`a${i}`)) },
        { title: 'B', rows: Array.from({ length: 5 }, (_, i) => row(`b${i}`)) },
      ]),
    );
    await no(list([{ rows: [row('mon', 'R'.repeat(25))] }]));
    await no(list([{ rows: [row('mon', 'Monday', 'D'.repeat(73))] }]));
    await no(list([{ rows: [row('mon'), row('mon', 'Again')] }]));
    await no(list([{ title: 'A', rows: [row('a')] }, { rows: [row('b')] }]), 100);
    await no({
      ...list([{ rows: [row('a')] }]),
      header: { type: 'image', image: { id: media.image } },
    });

    const cta = (display_text: string, url: string) => ({
      type: 'cta_url',
      body: { text: 'See it' },
      action: { name: 'cta_url', parameters: { display_text, url } },
    });
    await ok(cta('Open'.padEnd(20, '!'), 'https://example.com/order/1'));
    await no(cta('O'.repeat(21), 'https://example.com'));
    await no(cta('Open', 'javascript:alert(1)'));
  });

  test('templates are checked against their definition', async (t) => {
    const { p, send, media, wabaId } = await setUp(t);
    const no = (template: object, code: number) =>
      refused(p, send, { type: 'template', template }, code);
    const ok = (template: object) => accepted(send, { type: 'template', template });
    p.sandbox.cloud.templatesOf(wabaId).push({
      id: '990002',
      name: 'order_ready',
      language: 'en_US',
      category: 'UTILITY',
      status: 'APPROVED',
      appId: undefined,
      components: [
        { type: 'HEADER', format: 'IMAGE' },
        { type: 'BODY', text: 'Hi {{1}}, order {{2}} is ready. Total {{3}}.' },
        { type: 'FOOTER', text: 'Reply STOP to opt out' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'URL', text: 'Track', url: 'https://example.com/track/{{1}}' },
            { type: 'QUICK_REPLY', text: 'Stop promotions' },
            { type: 'COPY_CODE', text: 'Copy code' },
          ],
        },
      ],
    });
    const header = { type: 'header', parameters: [{ type: 'image', image: { id: media.image } }] };
    const body = {
      type: 'body',
      parameters: [
        { type: 'text', text: 'Ada' },
        { type: 'date_time', date_time: { fallback_value: 'May 1' } },
        {
          type: 'currency',
          currency: { fallback_value: '€12.00', code: 'EUR', amount_1000: 12000 },
        },
      ],
    };
    const url = {
      type: 'button',
      sub_type: 'url',
      index: '0',
      parameters: [{ type: 'text', text: 'A17' }],
    };
    const code = {
      type: 'button',
      sub_type: 'copy_code',
      index: 2,
      parameters: [{ type: 'coupon_code', coupon_code: 'SAVE10' }],
    };
    const quick = {
      type: 'button',
      sub_type: 'quick_reply',
      index: 1,
      parameters: [{ type: 'payload', payload: 'STOP' }],
    };
    const template = (...components: object[]) => ({
      name: 'order_ready',
      language: { code: 'en_US' },
      components,
    });

    const wamid = await ok(template(header, body, url, quick, code));
    const sent = p.sandbox.cloud.messages.find((m) => m.wamid === wamid)!.templateView!;
    assert.deepEqual(sent.header, { media: { type: 'image', id: media.image } });
    assert.equal(sent.body, 'Hi Ada, order May 1 is ready. Total €12.00.');
    assert.deepEqual(sent.buttons, [
      { type: 'URL', text: 'Track', url: 'https://example.com/track/A17' },
      { type: 'QUICK_REPLY', text: 'Stop promotions', payload: 'STOP' },
      { type: 'COPY_CODE', text: 'Copy code' },
    ]);
    await ok(
      template(
        {
          type: 'header',
          parameters: [{ type: 'image', image: { link: 'https://example.com/p.jpg' } }],
        },
        body,
        url,
        code,
      ),
    );

    const missingHeader = await no(template(body, url, code), 132000);
    assert.match(
      missingHeader.details,
      /^header: number of localizable_params \(0\) does not match the expected number of params \(1\)$/,
    );
    const textHeader = await no(
      template({ type: 'header', parameters: [{ type: 'text', text: 'Hi' }] }, body, url, code),
      132012,
    );
    assert.equal(textHeader.details, 'header: Format mismatch, expected IMAGE, received TEXT');
    await no(
      template(
        { type: 'header', parameters: [{ type: 'image', image: { id: media.document } }] },
        body,
        url,
        code,
      ),
      131053,
    );
    await no(
      template(header, { type: 'body', parameters: body.parameters.slice(0, 2) }, url, code),
      132000,
    );
    await no(
      template(
        header,
        {
          type: 'body',
          parameters: [
            ...body.parameters.slice(0, 2),
            { type: 'image', image: { id: media.image } },
          ],
        },
        url,
        code,
      ),
      132012,
    );
    await no(
      template(
        header,
        {
          type: 'body',
          parameters: [
            ...body.parameters.slice(0, 2),
            { type: 'currency', currency: { fallback_value: 'x' } },
          ],
        },
        url,
        code,
      ),
      100,
    );
    await no(template(header, body, code), 132000);
    await no(template(header, body, url), 132000);
    await no(template(header, body, url, code, { ...quick, index: 5 }), 131009);
    await no(template(header, body, { ...url, sub_type: 'quick_reply' }, code), 131009);
    await no(
      template(header, body, url, { ...code, parameters: [{ type: 'text', text: 'SAVE10' }] }),
      132012,
    );
    await no(template(header, body, url, code, { type: 'footer', parameters: [] }), 100);
    await no({ name: 'order_ready', language: { code: 'fr' } }, 132001);
    // Graph's message starts with the code, as Meta's error-codes page shows.
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/support/error-codes
    const missing = await send({
      type: 'template',
      template: { name: 'order_ready', language: { code: 'fr' } },
    });
    assert.equal(
      missing.body.error.message,
      '(#132001) Template name does not exist in the translation',
    );
    await no(
      {
        name: 'hello_world',
        language: { code: 'en_US' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'x' }] }],
      },
      132000,
    );
    await ok({ name: 'hello_world', language: { code: 'en_US' } });

    // An authentication template's one-time-password button takes the code as a URL button.
    p.sandbox.cloud.templatesOf(wabaId).push({
      id: '990005',
      name: 'login_code',
      language: 'en_US',
      category: 'AUTHENTICATION',
      status: 'APPROVED',
      appId: undefined,
      components: [
        { type: 'BODY', text: '{{1}} is your verification code.' },
        { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE', text: 'Copy code' }] },
      ],
    });
    const otpBody = { type: 'body', parameters: [{ type: 'text', text: '123456' }] };
    const otp = {
      type: 'button',
      sub_type: 'url',
      index: '0',
      parameters: [{ type: 'text', text: '123456' }],
    };
    const login = (...components: object[]) => ({
      name: 'login_code',
      language: { code: 'en_US' },
      components,
    });
    await ok(login(otpBody, otp));
    await no(login(otpBody), 132000);
    await no(login(otpBody, { ...otp, sub_type: 'copy_code' }), 131009);
  });
});
