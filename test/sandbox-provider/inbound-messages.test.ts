/**
 * `POST /sandbox/inbound` writes in every Cloud API inbound message type, and the app receives
 * it signed (the recording receiver refuses a bad `X-Hub-Signature-256`, which would make the
 * sandbox answer 502) in the documented shape: `contacts[{profile: {name}, wa_id}]` and one
 * `messages[]` item with `from`, `id`, `timestamp` and the type's object; media get sandbox
 * media ids (a bundled sample when no id is given), `context` gets its `from`, `unsupported`
 * the provider's error. Bad input gets the sandbox's error envelope and records nothing.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { SAMPLES } from '../../src/sandbox-provider/samples/samples.ts';
import { bsuidOfPhone } from '../../src/sandbox-provider/sandbox-people.ts';
import { recordAppWebhooks, startTestProvider } from '../helpers/provider.ts';
import { call, granted, inbound, inboundValue, type Item } from './sandbox-cloud.ts';

const PERSON = '16505551234';
const b64 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64');
const sample = (key: string) => SAMPLES.find((s) => s.key === key)!;

describe('inbound messages from the sandbox', () => {
  test('every type arrives signed, in the Cloud API shape', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { wabaId, numbers } = await granted(p, '6601');
    const [number] = numbers;
    const write = (message: object, name?: string) =>
      inbound(p, { phoneNumberId: number, from: PERSON, message, ...(name && { name }) });

    const hello = await inbound(p, {
      phoneNumberId: number,
      from: PERSON,
      text: 'hello',
      name: 'Ada',
    });
    const first = inboundValue(hooks, hello);
    assert.equal(first.object, 'whatsapp_business_account');
    assert.equal(first.wabaId, wabaId);
    assert.equal(first.value.messaging_product, 'whatsapp');
    assert.equal(first.value.metadata.phone_number_id, number);
    assert.match(first.value.metadata.display_phone_number, /^[0-9]{10,15}$/);
    assert.deepEqual(first.value.contacts, [
      { profile: { name: 'Ada' }, wa_id: PERSON, user_id: bsuidOfPhone(PERSON) },
    ]);
    const item = first.value.messages[0];
    assert.deepEqual(Object.keys(item), [
      'from',
      'from_user_id',
      'id',
      'timestamp',
      'type',
      'text',
    ]);
    assert.equal(item.from, PERSON);
    assert.equal(item.from_user_id, bsuidOfPhone(PERSON));
    assert.match(item.timestamp, /^[0-9]{10}$/);
    assert.deepEqual(item.text, { body: 'hello' });

    const itemOf = async (message: object): Promise<Item> => {
      const { value } = inboundValue(hooks, await write(message));
      return (value.messages as Item[])[0]!;
    };

    const image = await itemOf({ type: 'image', image: { caption: 'My parcel' } });
    assert.deepEqual(Object.keys(image.image).sort(), ['caption', 'id', 'mime_type', 'sha256']);
    assert.equal(image.image.caption, 'My parcel');
    assert.equal(image.image.mime_type, 'image/jpeg');
    assert.match(image.image.id, /^[0-9]{16}$/);
    assert.equal(image.image.sha256, b64(sample('jpeg').bytes), 'base64 SHA-256 of the sample');

    const png = await itemOf({ type: 'image', image: { mime_type: 'image/png' } });
    assert.equal(png.image.mime_type, 'image/png');
    assert.equal(png.image.caption, undefined);

    const doc = await itemOf({ type: 'document', document: { caption: 'Invoice' } });
    assert.deepEqual(doc.document, {
      caption: 'Invoice',
      filename: 'sandbox-invoice.pdf',
      mime_type: 'application/pdf',
      sha256: b64(sample('pdf').bytes),
      id: doc.document.id,
    });
    const audio = await itemOf({ type: 'audio', audio: { voice: true } });
    assert.deepEqual([audio.audio.mime_type, audio.audio.voice], ['audio/mpeg', true]);
    const video = await itemOf({ type: 'video', video: {} });
    assert.equal(video.video.mime_type, 'video/mp4');
    const sticker = await itemOf({ type: 'sticker', sticker: {} });
    assert.deepEqual([sticker.sticker.mime_type, sticker.sticker.animated], ['image/webp', false]);

    // The sandbox's own `from`, `id` and `timestamp`; other unknown fields pass through.
    const forged = await write({
      type: 'text',
      text: { body: 'x' },
      id: 'wamid.forged',
      from: '1',
      referral: { source_type: 'ad' },
    });
    const forgedItem = (inboundValue(hooks, forged).value.messages as Item[])[0]!;
    assert.deepEqual([forgedItem.id, forgedItem.from], [forged, PERSON]);
    assert.deepEqual(forgedItem.referral, { source_type: 'ad' });

    // A medium the sandbox has, by id: the same medium again.
    const again = await itemOf({ type: 'image', image: { id: image.image.id, caption: 'Again' } });
    assert.deepEqual(again.image, { ...image.image, caption: 'Again' });

    const location = { latitude: 52.3676, longitude: 4.9041, name: 'Dam', address: 'Dam 1' };
    assert.deepEqual((await itemOf({ type: 'location', location })).location, location);
    const contacts = [
      {
        name: { formatted_name: 'Grace Hopper', first_name: 'Grace' },
        phones: [{ phone: '+1 650 555 0101', type: 'CELL' }],
      },
    ];
    assert.deepEqual((await itemOf({ type: 'contacts', contacts })).contacts, contacts);
    const buttonReply = { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } };
    assert.deepEqual(
      (await itemOf({ type: 'interactive', interactive: buttonReply })).interactive,
      buttonReply,
    );
    const listReply = {
      type: 'list_reply',
      list_reply: { id: 'row-2', title: 'Tuesday', description: 'Morning' },
    };
    assert.deepEqual(
      (await itemOf({ type: 'interactive', interactive: listReply })).interactive,
      listReply,
    );

    // Replies to a business message: the template's quick-reply button, a quote, a reaction.
    const sent = p.sandbox.cloud.messages.find((m) => m.wamid === hello)!;
    assert.equal(sent.direction, 'sent_by_person');
    const business = first.value.metadata.display_phone_number;
    const button = await itemOf({
      type: 'button',
      button: { payload: 'STOP_PROMOS', text: 'Stop promotions' },
      context: { id: 'wamid.fromthebusiness' },
    });
    assert.deepEqual(button.button, { payload: 'STOP_PROMOS', text: 'Stop promotions' });
    assert.deepEqual(button.context, { id: 'wamid.fromthebusiness', from: business });
    const quote = await itemOf({
      type: 'text',
      text: { body: 'As I said' },
      context: { id: hello },
    });
    assert.deepEqual(
      quote.context,
      { id: hello, from: PERSON },
      'quoting oneself: from is the person',
    );
    const reaction = await itemOf({
      type: 'reaction',
      reaction: { message_id: hello, emoji: '👍' },
    });
    assert.deepEqual(reaction.reaction, { message_id: hello, emoji: '👍' });
    const removed = await itemOf({ type: 'reaction', reaction: { message_id: hello, emoji: '' } });
    assert.equal(removed.reaction.emoji, '');

    const unsupported = await itemOf({
      type: 'unsupported',
      unsupported: { type: 'poll_creation' },
    });
    assert.deepEqual(unsupported.errors, [
      {
        code: 131051,
        title: 'Message type unknown',
        message: 'Message type unknown',
        error_data: { details: 'Message type is currently not supported.' },
      },
    ]);
    assert.deepEqual(unsupported.unsupported, { type: 'poll_creation' });

    // Each medium is its own, and the sandbox remembers what the webhook said.
    assert.notEqual(image.image.id, png.image.id);
    assert.equal(p.sandbox.cloud.medium(doc.document.id)?.mimeType, 'application/pdf');
  });

  test('a batch: 100 messages of three people in one signed webhook', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { numbers } = await granted(p, '6603');
    const people = ['16505550101', '16505550102', '16505550103'];
    const inputs = Array.from({ length: 100 }, (_, i) => ({
      from: people[i % 3]!,
      name: `Person ${i % 3}`,
      text: `message ${i}`,
    }));
    const outcome = await p.sandbox.cloud.writeInBatch(numbers[0], inputs);
    assert.ok(outcome.ok);
    assert.equal(outcome.wamids.length, 100);
    assert.deepEqual(
      outcome.deliveries.map((d) => d.status),
      [200],
    );
    assert.equal(hooks.bodies.length, 1);
    const { value } = inboundValue(hooks, outcome.wamids[0]!);
    assert.deepEqual(
      value.contacts,
      people.map((wa_id, i) => ({
        profile: { name: `Person ${i}` },
        wa_id,
        user_id: bsuidOfPhone(wa_id),
      })),
    );
    const messages = value.messages as Item[];
    assert.deepEqual(
      messages.map((m) => String(m.id)),
      outcome.wamids,
    );
    assert.deepEqual(messages[42], {
      from: people[0],
      from_user_id: bsuidOfPhone(people[0]!),
      id: outcome.wamids[42],
      timestamp: messages[42]!.timestamp,
      type: 'text',
      text: { body: 'message 42' },
    });
    const refused = await p.sandbox.cloud.writeInBatch(numbers[0], [
      { from: people[0]!, text: 'fine' },
      { from: people[0]! },
    ]);
    assert.deepEqual(refused, { ok: false, reason: 'no_message' });
    assert.equal(hooks.bodies.length, 1, 'a batch with a bad message sends nothing');
  });

  test('from an ad, forwarded many times, a voice message, an unsupported edit: as Meta sends them', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { numbers } = await granted(p, '6603');
    const write = async (message: object): Promise<Item> => {
      const wamid = await inbound(p, { phoneNumberId: numbers[0], from: PERSON, message });
      return (inboundValue(hooks, wamid).value.messages as Item[])[0]!;
    };
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
    const referral = {
      source_url: 'https://fb.me/3cr4Wqqkv',
      source_id: '120226305854810726',
      source_type: 'ad',
      headline: 'Chat with us',
      body: 'Summer sale',
      media_type: 'image',
      image_url: 'https://example.com/ad.png',
      ctwa_clid: 'Afc3nYt4TTydumlFFsatFz8bR3yvpRSm',
    };
    const fromAd = await write({ type: 'text', text: { body: 'Still on?' }, referral });
    assert.deepEqual(fromAd.referral, referral);
    assert.equal(fromAd.context, undefined);
    const forwarded = await write({
      type: 'text',
      text: { body: 'Pass it on' },
      context: { forwarded: true, frequently_forwarded: true },
    });
    assert.deepEqual(forwarded.context, { forwarded: true, frequently_forwarded: true });
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/audio
    const voice = await write({ type: 'audio', audio: { voice: true } });
    assert.equal(voice.audio.voice, true);
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/unsupported
    const edit = await write({ type: 'unsupported', unsupported: { type: 'edit' } });
    assert.deepEqual(edit.unsupported, { type: 'edit' });
    assert.equal(edit.errors[0].code, 131051);

    // A referral that is not Meta's shape is refused.
    const res = await call(p, 'POST', '/sandbox/inbound', {
      body: {
        phoneNumberId: numbers[0],
        from: PERSON,
        message: { type: 'text', text: { body: 'x' }, referral: { source_url: 'javascript:x' } },
      },
    });
    assert.equal(res.status, 400);
  });

  test('bad input gets the error envelope and records nothing', async (t) => {
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { numbers } = await granted(p, '6602');
    const before = p.sandbox.cloud.messages.length;
    const post = (body: object) => call(p, 'POST', '/sandbox/inbound', { body });
    const who = { phoneNumberId: numbers[0], from: PERSON };
    for (const [body, status, error] of [
      [
        { ...who, text: 'hi', message: { type: 'text', text: { body: 'hi' } } },
        400,
        'invalid_request',
      ],
      [{ ...who }, 400, 'invalid_request'],
      [{ ...who, message: { type: 'hologram', hologram: {} } }, 400, 'invalid_request'],
      [{ ...who, message: { type: 'text', text: { body: '' } } }, 400, 'invalid_request'],
      [
        { ...who, message: { type: 'location', location: { latitude: 91, longitude: 0 } } },
        400,
        'invalid_request',
      ],
      [{ ...who, message: { type: 'image', image: { id: '1234567890' } } }, 400, 'unknown_media'],
      [{ ...who, from: '+16505551234', text: 'hi' }, 400, 'invalid_request'],
      [{ phoneNumberId: '999', from: PERSON, text: 'hi' }, 404, 'unknown_number'],
      [{ phoneNumberId: numbers[0], text: 'hi' }, 400, 'invalid_request'],
      [{ phoneNumberId: numbers[0], userId: '+16505551234', text: 'hi' }, 400, 'invalid_request'],
    ] as const) {
      const res = await post(body);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.equal(res.body.error, error, JSON.stringify(res.body));
    }
    assert.equal(p.sandbox.cloud.messages.length, before);
    assert.equal(hooks.bodies.length, 0);
  });

  test('a username person writes without a phone: BSUID and username, no `from` or `wa_id`', async (t) => {
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
    const p = await startTestProvider(t);
    const hooks = await recordAppWebhooks(t, p);
    const { numbers } = await granted(p, '6603');
    const res = await call(p, 'POST', '/sandbox/inbound', {
      body: { phoneNumberId: numbers[0], username: 'ada.l', name: 'Ada', text: 'hi' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const { value } = inboundValue(hooks, String(res.body.wamid));
    const [contact] = value.contacts as Item[];
    assert.equal(contact!.wa_id, undefined);
    assert.deepEqual(contact!.profile, { name: 'Ada', username: 'ada.l' });
    const userId = String(contact!.user_id);
    assert.match(userId, /^US\.[0-9]{20}$/);
    const [item] = value.messages as Item[];
    assert.equal(item!.from, undefined);
    assert.equal(item!.from_user_id, userId);
  });
});
