import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  openContent,
  sealContent,
  type StoredInboundContent,
} from '../../../src/messaging/store/message-content.ts';
import { inboundMessageView } from '../../../src/messaging/store/message-view.ts';
import { InboundMessageSchema } from '../../../src/messaging/store/inbound-schemas.ts';
import {
  createKeyring,
  DecryptionError,
  generateKeyEntry,
  parseKeySpec,
} from '../../../src/platform/keyring.ts';
import { Value } from 'typebox/value';

const keyring = createKeyring(parseKeySpec(generateKeyEntry('k1')));

describe('message content sealed at rest', () => {
  test('round-trip; the text is not in the sealed value', () => {
    const sealed = sealContent(keyring, 4, 'msg_a', { type: 'text', text: { body: 'hello' } });
    assert.ok(!JSON.stringify(sealed).includes('hello'));
    assert.deepEqual(openContent(keyring, 4, 'msg_a', sealed), {
      type: 'text',
      text: { body: 'hello' },
    });
    assert.equal(openContent(keyring, 4, 'msg_a', null), null);
  });

  test('a content sealed for one message or portal never opens as another', () => {
    const sealed = sealContent(keyring, 4, 'msg_a', { text: { body: 'hi' } });
    assert.throws(() => openContent(keyring, 4, 'msg_b', sealed), DecryptionError);
    assert.throws(() => openContent(keyring, 5, 'msg_a', sealed), DecryptionError);
    // Nor as another purpose's value (a provider token, a webhook secret).
    assert.throws(() => keyring.open(sealed, 4), DecryptionError);
    assert.throws(() => keyring.open(sealed, 4, 'webhook-secret'), DecryptionError);
    // Subjects are length-prefixed: no two (id) pairs share associated data.
    const odd = keyring.seal('x', 4, 'message-content', 'a:subject:1:b');
    assert.throws(() => keyring.open(odd, 4, 'message-content', 'a'), DecryptionError);
  });
});

const row = {
  id: 'msg_in1',
  waId: '+16505551234',
  contactId: 'ctc_1',
  phoneNumberId: '1020345678011',
  providerMessageId: 'wamid.IN1',
  type: 'text',
  contextProviderMessageId: null,
  contextMessageId: null,
  createdAt: new Date('2026-11-23T18:05:00.000Z'),
  readAt: null,
};

describe('inboundMessageView', () => {
  test('a text, valid against the schema', () => {
    const view = inboundMessageView(row, { type: 'text', text: { body: 'hello' } });
    assert.deepEqual(view, {
      id: 'msg_in1',
      direction: 'inbound',
      from: '+16505551234',
      contactId: 'ctc_1',
      phoneNumberId: '1020345678011',
      providerMessageId: 'wamid.IN1',
      type: 'text',
      text: { body: 'hello' },
      context: null,
      receivedAt: '2026-11-23T18:05:00.000Z',
      readAt: null,
    });
    assert.ok(Value.Check(InboundMessageSchema, view));
  });

  test('an image replying to our message; erased content; a reaction; an unknown type', () => {
    const content: StoredInboundContent = {
      type: 'image',
      media: { providerMediaId: '99', mimeType: 'image/jpeg', caption: 'look' },
      context: { from: '16505550000' },
    };
    const image = inboundMessageView(
      {
        ...row,
        type: 'image',
        contextProviderMessageId: 'wamid.OUT',
        contextMessageId: 'msg_out',
      },
      content,
      { id: 'med_1', mimeType: 'image/jpeg', sha256: 'ab', fileSize: null },
    );
    assert.deepEqual(image.media, {
      id: 'med_1',
      mimeType: 'image/jpeg',
      sha256: 'ab',
      fileSize: null,
      caption: 'look',
      filename: null,
    });
    assert.deepEqual(image.context, {
      messageId: 'msg_out',
      providerMessageId: 'wamid.OUT',
      forwarded: false,
      frequentlyForwarded: false,
    });
    assert.ok(Value.Check(InboundMessageSchema, image));

    const erased = inboundMessageView({ ...row, type: 'image' }, null);
    assert.equal(erased.contentErased, true);
    assert.equal(erased.media, undefined);
    assert.equal(erased.type, 'image');
    assert.ok(Value.Check(InboundMessageSchema, erased));

    const reaction = inboundMessageView(
      {
        ...row,
        type: 'reaction',
        contextProviderMessageId: 'wamid.OUT',
        contextMessageId: 'msg_out',
      },
      { type: 'reaction', reaction: { providerMessageId: 'wamid.OUT', emoji: '' } },
    );
    assert.deepEqual(reaction.reaction, {
      messageId: 'msg_out',
      providerMessageId: 'wamid.OUT',
      emoji: '',
    });
    assert.equal(reaction.context, null);

    const order = inboundMessageView(
      { ...row, type: 'order' },
      { type: 'unsupported', unsupported: { providerType: 'order', errors: [] } },
    );
    assert.equal(order.type, 'unsupported');
    assert.deepEqual(order.unsupported, { providerType: 'order', errors: [] });
    assert.ok(Value.Check(InboundMessageSchema, order));
  });
});
