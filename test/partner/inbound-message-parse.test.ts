/**
 * The inbound messages of the Cloud API's `messages` webhook field, as the provider documents
 * them (one payload per type), read into Portico's typed content; unknown fields and types never
 * fail the webhook.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/components#messages-object
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { sha256Hex } from '../../src/partner/cloud-api/inbound-message-parse.ts';
import type { InboundMessageEvent } from '../../src/partner/cloud-api/provider-webhook-events.ts';
import { parseProviderWebhook } from '../../src/partner/cloud-api/provider-webhook-payload.ts';

const WABA = '102290129340398';
const PHONE_NUMBER_ID = '106540352242922';
const FROM = '16505551234';

/** A documented webhook body around `messages` (with the fields Portico ignores). */
function body(messages: unknown[]) {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: WABA,
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: PHONE_NUMBER_ID },
              contacts: [{ profile: { name: 'Sheena Nelson' }, wa_id: FROM }],
              messages,
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
}

let n = 0;
const message = (type: string, fields: Record<string, unknown>) => ({
  from: FROM,
  id: `wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA${n++}`,
  timestamp: '1744344496',
  type,
  ...fields,
});

/** The one inbound event of a body of one message. */
function one(m: unknown): InboundMessageEvent {
  const parsed = parseProviderWebhook(body([m]));
  assert.ok(parsed.ok);
  assert.equal(parsed.skipped, 0);
  const [change] = parsed.changes;
  assert.ok(change?.kind === 'inbound');
  assert.equal(change.phoneNumberId, PHONE_NUMBER_ID);
  assert.equal(change.events.length, 1);
  return change.events[0]!;
}

const SHA_BYTES = createHash('sha256').update('photo').digest();

describe('inbound messages of the messages webhook field', () => {
  test('text, with the profile name and the time', () => {
    const e = one(message('text', { text: { body: 'Does it come in another color?' } }));
    assert.deepEqual(e.content, { type: 'text', text: { body: 'Does it come in another color?' } });
    assert.equal(e.type, 'text');
    assert.equal(e.from, FROM);
    assert.equal(e.profileName, 'Sheena Nelson');
    assert.equal(e.timestamp.toISOString(), '2025-04-11T04:08:16.000Z');
    assert.equal(e.context, undefined);
  });

  test('image, audio, video, document, sticker: id, mime type, sha256 as hex, caption, filename', () => {
    const sha = SHA_BYTES.toString('base64');
    const image = one(
      message('image', {
        image: {
          caption: 'Hoping to get this',
          mime_type: 'image/jpeg',
          sha256: sha,
          id: '1003383421387256',
          url: 'https://lookaside.fbsbx.com/x',
        },
      }),
    );
    assert.deepEqual(image.content, {
      type: 'image',
      media: {
        providerMediaId: '1003383421387256',
        mimeType: 'image/jpeg',
        sha256: SHA_BYTES.toString('hex'),
        caption: 'Hoping to get this',
      },
    });
    const audio = one(
      message('audio', {
        audio: { mime_type: 'audio/ogg; codecs=opus', sha256: sha, id: '1', voice: true },
      }),
    );
    assert.equal(audio.content.type, 'audio');
    const video = one(
      message('video', { video: { caption: 'c', mime_type: 'video/mp4', sha256: sha, id: '2' } }),
    );
    assert.equal(video.content.type, 'video');
    const document = one(
      message('document', {
        document: {
          caption: 'Invoice',
          filename: 'invoice.pdf',
          mime_type: 'application/pdf',
          sha256: sha,
          id: '3',
        },
      }),
    );
    assert.deepEqual(document.content, {
      type: 'document',
      media: {
        providerMediaId: '3',
        mimeType: 'application/pdf',
        sha256: SHA_BYTES.toString('hex'),
        caption: 'Invoice',
        filename: 'invoice.pdf',
      },
    });
    const sticker = one(
      message('sticker', {
        sticker: { mime_type: 'image/webp', sha256: sha, id: '4', animated: false },
      }),
    );
    assert.deepEqual(sticker.content, {
      type: 'sticker',
      media: {
        providerMediaId: '4',
        mimeType: 'image/webp',
        sha256: SHA_BYTES.toString('hex'),
        animated: false,
      },
    });
  });

  test('sha256: base64 or hex to lower-case hex; anything else dropped', () => {
    assert.equal(sha256Hex(SHA_BYTES.toString('base64')), SHA_BYTES.toString('hex'));
    assert.equal(sha256Hex(SHA_BYTES.toString('hex').toUpperCase()), SHA_BYTES.toString('hex'));
    assert.equal(sha256Hex('not a hash'), undefined);
    assert.equal(sha256Hex(undefined), undefined);
  });

  test('location and contacts', () => {
    const location = one(
      message('location', {
        location: {
          address: '1 Hacker Way, Menlo Park, CA 94025',
          latitude: 37.483307,
          longitude: -122.148981,
          name: 'Main Office',
          url: 'https://www.facebook.com',
        },
      }),
    );
    assert.deepEqual(location.content, {
      type: 'location',
      location: {
        address: '1 Hacker Way, Menlo Park, CA 94025',
        latitude: 37.483307,
        longitude: -122.148981,
        name: 'Main Office',
        url: 'https://www.facebook.com',
      },
    });
    const contacts = one(
      message('contacts', {
        contacts: [
          {
            addresses: [{ city: 'Menlo Park', type: 'WORK' }],
            birthday: '1999-01-23',
            emails: [{ email: 'bjohnson@example.com', type: 'WORK' }],
            name: {
              first_name: 'Barbara',
              last_name: 'Johnson',
              formatted_name: 'Barbara J. Johnson',
              prefix: 'Dr.',
            },
            org: { company: 'Lucky Shrub', department: 'Legal', title: 'Lead Counsel' },
            phones: [{ phone: '+1 (415) 555-0123', wa_id: '14155550123', type: 'MOBILE' }],
            urls: [{ url: 'https://www.luckyshrub.com', type: 'WORK' }],
          },
        ],
      }),
    );
    assert.deepEqual(contacts.content, {
      type: 'contacts',
      contacts: [
        {
          name: { formattedName: 'Barbara J. Johnson', firstName: 'Barbara', lastName: 'Johnson' },
          phones: [{ phone: '+1 (415) 555-0123', waId: '14155550123', type: 'MOBILE' }],
          emails: [{ email: 'bjohnson@example.com', type: 'WORK' }],
          org: { company: 'Lucky Shrub', department: 'Legal', title: 'Lead Counsel' },
          urls: [{ url: 'https://www.luckyshrub.com', type: 'WORK' }],
        },
      ],
    });
  });

  test('interactive replies, a template button, and the context they carry', () => {
    const context = { from: '15550783881', id: 'wamid.OUT1' };
    const button = one(
      message('interactive', {
        context,
        interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } },
      }),
    );
    assert.deepEqual(button.content, {
      type: 'interactive',
      interactive: { type: 'button_reply', buttonReply: { id: 'yes', title: 'Yes' } },
    });
    assert.deepEqual(button.context, { providerMessageId: 'wamid.OUT1', from: '15550783881' });
    const list = one(
      message('interactive', {
        context,
        interactive: {
          type: 'list_reply',
          list_reply: { id: 'priority', title: 'Priority Mail', description: '1-3 days' },
        },
      }),
    );
    assert.deepEqual(list.content, {
      type: 'interactive',
      interactive: {
        type: 'list_reply',
        listReply: { id: 'priority', title: 'Priority Mail', description: '1-3 days' },
      },
    });
    const quick = one(
      message('button', { context, button: { payload: 'STOP_PROMOS', text: 'Stop promotions' } }),
    );
    assert.deepEqual(quick.content, {
      type: 'button',
      button: { payload: 'STOP_PROMOS', text: 'Stop promotions' },
    });
    const forwarded = one(message('text', { context: { forwarded: true }, text: { body: 'fwd' } }));
    assert.deepEqual(forwarded.context, { forwarded: true });
  });

  test('reactions: the message and the emoji; no emoji means removed', () => {
    const added = one(message('reaction', { reaction: { message_id: 'wamid.OUT1', emoji: '👍' } }));
    assert.deepEqual(added.content, {
      type: 'reaction',
      reaction: { providerMessageId: 'wamid.OUT1', emoji: '👍' },
    });
    const removed = one(message('reaction', { reaction: { message_id: 'wamid.OUT1' } }));
    assert.deepEqual(removed.content, {
      type: 'reaction',
      reaction: { providerMessageId: 'wamid.OUT1', emoji: '' },
    });
  });

  test('unsupported and unknown types are kept with their type and error codes', () => {
    const u = one(
      message('unsupported', {
        errors: [
          {
            code: 131051,
            title: 'Message type unknown',
            message: 'Message type unknown',
            error_data: { details: 'Message type is currently not supported.' },
          },
        ],
      }),
    );
    assert.deepEqual(u.content, {
      type: 'unsupported',
      unsupported: {
        providerType: 'unsupported',
        errors: [{ code: 131051, title: 'Unsupported message type' }],
      },
    });
    assert.equal(u.type, 'unsupported');
    for (const [type, fields] of [
      [
        'order',
        { order: { catalog_id: '1', product_items: [{ product_retailer_id: 'x', quantity: 1 }] } },
      ],
      ['system', { system: { body: 'User changed number', type: 'user_changed_number' } }],
      ['request_welcome', {}],
      ['a_type_from_the_future', { a_type_from_the_future: { x: 1 } }],
    ] as const) {
      const e = one(message(type, fields));
      assert.equal(e.type, type);
      assert.deepEqual(e.content, {
        type: 'unsupported',
        unsupported: { providerType: type, errors: [] },
      });
    }
    // A known type whose object does not fit is kept too, never fatal.
    const odd = one(message('image', { image: { caption: 42 } }));
    assert.equal(odd.content.type, 'unsupported');
  });

  test('forwarded and frequently forwarded are kept apart; frequently forwarded is forwarded', () => {
    const often = one(
      message('text', { context: { frequently_forwarded: true }, text: { body: 'chain' } }),
    );
    assert.deepEqual(often.context, { forwarded: true, frequentlyForwarded: true });
    const once = one(message('text', { context: { forwarded: true }, text: { body: 'once' } }));
    assert.equal(once.context?.frequentlyForwarded, undefined);
  });

  test('a click-to-WhatsApp referral is kept on the message, camelCased', () => {
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/text
    const fromAd = one(
      message('text', {
        text: { body: 'Is the offer still on?' },
        referral: {
          source_url: 'https://fb.me/3cr4Wqqkv',
          source_id: '120226305854810726',
          source_type: 'ad',
          body: 'Summer sale: 20% off',
          headline: 'Chat with us',
          media_type: 'image',
          image_url: 'https://scontent.xx.fbcdn.net/v/t45.1600-4/ad.png',
          ctwa_clid: 'Afc3nYt4TTydumlFFsatFz8bR3yvpRSm',
          welcome_message: { text: 'Hi! How can we help?' },
        },
      }),
    );
    assert.deepEqual(fromAd.referral, {
      sourceUrl: 'https://fb.me/3cr4Wqqkv',
      sourceId: '120226305854810726',
      sourceType: 'ad',
      body: 'Summer sale: 20% off',
      headline: 'Chat with us',
      mediaType: 'image',
      imageUrl: 'https://scontent.xx.fbcdn.net/v/t45.1600-4/ad.png',
      ctwaClid: 'Afc3nYt4TTydumlFFsatFz8bR3yvpRSm',
      welcomeMessage: { text: 'Hi! How can we help?' },
    });
    // A referral that does not fit is dropped; the message is kept.
    const odd = one(message('text', { text: { body: 'x' }, referral: { source_url: 42 } }));
    assert.equal(odd.referral, undefined);
    assert.equal(odd.content.type, 'text');
  });

  test('a voice message is an audio with voice: true', () => {
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/audio
    const voice = one(
      message('audio', {
        audio: {
          mime_type: 'audio/ogg; codecs=opus',
          sha256: 'Bzgl2gJJ1TRHuDc/x2YbuYaVYHSlJyjamE3qNZn5vBc=',
          id: '1003383421387256',
          voice: true,
        },
      }),
    );
    assert.equal(voice.content.type, 'audio');
    assert.ok('media' in voice.content);
    assert.equal(voice.content.media.voice, true);
  });

  test("Meta's unsupported names what the person sent", () => {
    // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/unsupported
    const edit = one(
      message('unsupported', {
        errors: [{ code: 131051, title: 'Message type unknown', message: 'Message type unknown' }],
        unsupported: { type: 'edit' },
      }),
    );
    assert.deepEqual(edit.content, {
      type: 'unsupported',
      unsupported: {
        providerType: 'edit',
        errors: [{ code: 131051, title: 'Unsupported message type' }],
      },
    });
  });

  test('a batch with one malformed message keeps the others', () => {
    const good = message('text', { text: { body: 'one' } });
    const parsed = parseProviderWebhook(
      body([
        good,
        { id: 'wamid.BAD', from: 'not digits', type: 'text' },
        message('text', { text: { body: 'two' } }),
      ]),
    );
    assert.ok(parsed.ok);
    assert.equal(parsed.skipped, 1);
    assert.deepEqual(parsed.skippedIds, ['wamid.BAD']);
    const [change] = parsed.changes;
    assert.ok(change?.kind === 'inbound');
    assert.deepEqual(
      change.events.map((e) => e.content),
      [
        { type: 'text', text: { body: 'one' } },
        { type: 'text', text: { body: 'two' } },
      ],
    );
  });
});

test('a voice message played is a read status, not a skipped one', () => {
  // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/status
  const parsed = parseProviderWebhook({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: WABA,
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: PHONE_NUMBER_ID },
              statuses: [
                {
                  id: 'wamid.VOICE',
                  status: 'played',
                  timestamp: '1749416383',
                  recipient_id: FROM,
                },
              ],
            },
          },
        ],
      },
    ],
  });
  assert.ok(parsed.ok);
  assert.equal(parsed.skipped, 0);
  const [change] = parsed.changes;
  assert.ok(change?.kind === 'statuses');
  assert.equal(change.events[0]!.status, 'read');
});
