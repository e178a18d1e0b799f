/**
 * Every free-form kind of `POST /messaging/messages` end to end on both backends: accepted,
 * delivered over real HTTP to the sandbox provider with the Cloud API's wire object (what the
 * sandbox recorded), shown back kind by kind; the limits refused with a 400 naming the field;
 * the service window; reactions and quotes of messages of another conversation or portal, or of
 * a message that failed before it was sent, refused; an
 * idempotent replay carrying the kind's object.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { freeFormOutbound } from '../../src/messaging/outbound/outbound-wire.ts';
import { findSendableMedium } from '../../src/messaging/media/outbound-media.ts';
import { failQueuedMessage, INACTIVE_ERROR } from '../../src/messaging/store/message-failures.ts';
import type { MessageRow } from '../../src/messaging/store/messages-repository.ts';
import { createPortal } from '../helpers/app.ts';
import { personWrites, type Written } from '../helpers/inbound.ts';
import { png, upload } from '../helpers/media.ts';
import { eventually } from '../helpers/instances.ts';
import { hello, messagingSetup, MESSAGES, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const PERSON = '16505553333';
const TO = `+${PERSON}`;

/** Send `kind` (the body without `to` and `from`) and wait until the sandbox has it. */
async function sent(s: MessagingSetup, kind: Record<string, unknown>) {
  const res = await s.send({ to: TO, from: s.numbers[0], ...kind });
  assert.equal(res.statusCode, 202, res.body);
  const accepted = res.json().data as Record<string, unknown> & { id: string };
  await eventually(
    async () => (await s.message(accepted.id)).providerMessageId !== null,
    'the provider accepted it',
  );
  const shown = await s.message(accepted.id);
  const received = s.provider.sandbox.cloud.messages.find(
    (m) => m.wamid === shown.providerMessageId,
  );
  assert.ok(received, 'the sandbox received it');
  return { accepted, shown, received };
}

/** A medium uploaded through the first number: our id and the provider's. */
async function uploaded(s: MessagingSetup, bytes: Buffer, name: string) {
  const res = await upload(s, { file: { bytes, name }, phoneNumberId: s.numbers[0]! });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const mediaId = res.body.data!.id;
  const medium = await findSendableMedium(s.services.storage.db, s.portalId, mediaId);
  assert.ok(medium);
  return { mediaId, providerMediaId: medium.providerMediaId };
}

/** The detail fields of a 400. */
async function refusedFields(s: MessagingSetup, kind: Record<string, unknown>) {
  const res = await s.send({ to: TO, from: s.numbers[0], ...kind });
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.json().error.code, 'invalid_request');
  return (res.json().error.details as { field: string; message: string }[]).map((d) => d.field);
}

const buttons = (n: number, title?: string) => ({
  type: 'interactive',
  interactive: {
    type: 'button',
    body: { text: 'Confirm your visit?' },
    action: {
      buttons: Array.from({ length: n }, (_, i) => ({
        type: 'reply',
        reply: { id: `b${i}`, title: title ?? `Option ${i + 1}` },
      })),
    },
  },
});

const list = (sections: { title?: string; rows: number }[]) => ({
  type: 'interactive',
  interactive: {
    type: 'list',
    body: { text: 'Pick a slot' },
    action: {
      button: 'Slots',
      sections: sections.map((sec, i) => ({
        ...(sec.title !== undefined && { title: sec.title }),
        rows: Array.from({ length: sec.rows }, (_, j) => ({ id: `r${i}-${j}`, title: `${j}h` })),
      })),
    },
  },
});

for (const backend of backends()) {
  describe(`messaging: send kinds (${backend.name})`, () => {
    test('every free-form kind is delivered with the Cloud API wire object and shown back', async (t) => {
      const s = await messagingSetup(t, backend, { credit: 1000 });
      const hello: Written = await personWrites(s, PERSON);
      const photo = await uploaded(s, png(2000), 'part.png');

      const doc = await sent(s, {
        type: 'document',
        document: {
          link: 'https://example.com/invoice.pdf',
          caption: 'Your invoice',
          filename: 'invoice.pdf',
        },
        context: { messageId: hello.id },
      });
      assert.deepEqual(doc.received.content, {
        link: 'https://example.com/invoice.pdf',
        caption: 'Your invoice',
        filename: 'invoice.pdf',
      });
      assert.equal(doc.received.contextId, hello.wamid);
      assert.deepEqual(doc.shown.document, doc.accepted.document);
      assert.deepEqual(doc.shown.context, { messageId: hello.id });
      assert.equal(doc.shown.type, 'document');
      assert.deepEqual(doc.accepted.price, { amount: 1, currency: 'EUR' }, 'priced as text');

      const image = await sent(s, {
        type: 'image',
        image: { mediaId: photo.mediaId, caption: 'This one?' },
      });
      assert.deepEqual(image.received.content, { id: photo.providerMediaId, caption: 'This one?' });
      assert.deepEqual(image.shown.image, { mediaId: photo.mediaId, caption: 'This one?' });

      for (const kind of ['video', 'audio', 'sticker'] as const) {
        const link = `https://example.com/file.${kind}`;
        const m = await sent(s, { type: kind, [kind]: { link } });
        assert.deepEqual(m.received.content, { link }, kind);
        assert.deepEqual(m.shown[kind], { link }, kind);
      }

      const text = await sent(s, {
        type: 'text',
        text: { body: 'See https://example.com', previewUrl: true },
      });
      assert.equal(text.received.text, 'See https://example.com');

      const where = { latitude: 48.8584, longitude: 2.2945, name: 'Tower', address: 'Paris' };
      const location = await sent(s, { type: 'location', location: where });
      assert.deepEqual(location.received.content, where);
      assert.deepEqual(location.shown.location, where);

      const three = buttons(3);
      const withHeader = {
        ...three,
        interactive: {
          ...three.interactive,
          header: { type: 'image', image: { link: 'https://example.com/a.png' } },
          footer: { text: 'Reply below' },
        },
      };
      const button = await sent(s, withHeader);
      assert.deepEqual(button.received.content, {
        type: 'button',
        header: { type: 'image', image: { link: 'https://example.com/a.png' } },
        body: { text: 'Confirm your visit?' },
        footer: { text: 'Reply below' },
        action: {
          buttons: [0, 1, 2].map((i) => ({
            type: 'reply',
            reply: { id: `b${i}`, title: `Option ${i + 1}` },
          })),
        },
      });
      assert.deepEqual(button.shown.interactive, withHeader.interactive);

      const menu = list([
        { title: 'Morning', rows: 2 },
        { title: 'Afternoon', rows: 1 },
      ]);
      const listed = await sent(s, menu);
      assert.deepEqual(listed.received.content, menu.interactive);

      const cta = await sent(s, {
        type: 'interactive',
        interactive: {
          type: 'cta_url',
          header: { type: 'text', text: 'Your order' },
          body: { text: 'Track it' },
          action: {
            name: 'cta_url',
            parameters: { displayText: 'Track', url: 'https://example.com/t/1' },
          },
        },
      });
      assert.deepEqual(cta.received.content, {
        type: 'cta_url',
        header: { type: 'text', text: 'Your order' },
        body: { text: 'Track it' },
        action: {
          name: 'cta_url',
          parameters: { display_text: 'Track', url: 'https://example.com/t/1' },
        },
      });

      // A reaction to the person's message and to our own sent one; "" removes it.
      const liked = await sent(s, {
        type: 'reaction',
        reaction: { messageId: hello.id, emoji: '👍' },
      });
      assert.deepEqual(liked.received.content, { message_id: hello.wamid, emoji: '👍' });
      const ours = await sent(s, {
        type: 'reaction',
        reaction: { messageId: doc.accepted.id, emoji: '' },
      });
      assert.deepEqual(ours.received.content, {
        message_id: doc.shown.providerMessageId,
        emoji: '',
      });

      // The list shows each message's kind and object.
      const page = await s.app.inject({
        url: `${MESSAGES}?direction=outbound&limit=100`,
        headers: { authorization: s.token },
      });
      const items = page.json().data.items as Record<string, unknown>[];
      const byId = new Map(items.map((m) => [m.id, m]));
      assert.deepEqual(byId.get(listed.accepted.id)?.interactive, menu.interactive);
      assert.deepEqual(byId.get(liked.accepted.id)?.reaction, { messageId: hello.id, emoji: '👍' });
      assert.equal(byId.get(location.accepted.id)?.type, 'location');
    });

    test('a voice message: audio with voice: true on the wire, shown back, read when played', async (t) => {
      // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messages/audio-messages
      const s = await messagingSetup(t, backend, { credit: 1000 });
      await personWrites(s, PERSON);
      const note = { link: 'https://example.com/note.ogg', voice: true };
      const voice = await sent(s, { type: 'audio', audio: note });
      assert.deepEqual(voice.received.content, note);
      assert.deepEqual(voice.shown.audio, note);
      // The sandbox's statuses end with `played`; Portico keeps the message read.
      await eventually(async () => voice.received.status === 'played', 'played');
      await eventually(async () => (await s.message(voice.accepted.id)).status === 'read', 'read');
      assert.deepEqual(
        await refusedFields(s, { type: 'audio', audio: { ...note, voice: 'yes' } }),
        ['body.audio.voice'],
      );
    });

    test('limits: a 400 naming the field, nothing queued', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      await personWrites(s, PERSON);
      assert.deepEqual(await refusedFields(s, buttons(1, 'x'.repeat(21))), [
        'body.interactive.action.buttons.0.reply.title',
      ]);
      assert.deepEqual(await refusedFields(s, buttons(4)), ['body.interactive.action.buttons']);
      const dup = buttons(2);
      dup.interactive.action.buttons[1]!.reply.id = 'b0';
      assert.deepEqual(await refusedFields(s, dup), ['body.interactive.action.buttons']);
      const sameTitle = buttons(2, 'Yes');
      assert.deepEqual(await refusedFields(s, sameTitle), ['body.interactive.action.buttons']);
      assert.deepEqual(
        await refusedFields(
          s,
          list([
            { title: 'a', rows: 6 },
            { title: 'b', rows: 5 },
          ]),
        ),
        ['body.interactive.action.sections'],
      );
      assert.deepEqual(await refusedFields(s, list([{ title: 'a', rows: 1 }, { rows: 1 }])), [
        'body.interactive.action.sections.1.title',
      ]);
      const long = list([{ rows: 1 }]);
      long.interactive.action.sections[0]!.rows[0]!.title = 'x'.repeat(25);
      assert.deepEqual(await refusedFields(s, long), [
        'body.interactive.action.sections.0.rows.0.title',
      ]);
      const footer = buttons(1);
      Object.assign(footer.interactive, {
        footer: { text: 'x'.repeat(61) },
        body: { text: 'x'.repeat(1025) },
      });
      assert.deepEqual(await refusedFields(s, footer), [
        'body.interactive.body.text',
        'body.interactive.footer.text',
      ]);
      assert.deepEqual(
        await refusedFields(s, {
          type: 'image',
          image: { link: 'https://example.com/a.png', mediaId: 'med_abc' },
        }),
        ['body.image'],
      );
      assert.deepEqual(await refusedFields(s, { type: 'image', image: {} }), ['body.image']);
      // A reaction is exactly one emoji grapheme, or empty.
      for (const emoji of ['ok', '👍👍', '1', '👍 ', '#', '❤️x', '\u200d']) {
        const reaction = { type: 'reaction', reaction: { messageId: 'msg_x', emoji } };
        assert.deepEqual(await refusedFields(s, reaction), ['body.reaction.emoji'], emoji);
      }
      assert.deepEqual(
        await refusedFields(s, {
          type: 'audio',
          audio: { link: 'https://example.com/a.ogg', caption: 'no' },
        }),
        ['body.audio.caption'],
      );
      assert.deepEqual(await refusedFields(s, { type: 'poll', poll: {} }), ['body.type']);
      assert.deepEqual(await refusedFields(s, { type: 'image', text: { body: 'x' } }), [
        'body.image',
        'body.text',
      ]);
      assert.equal(await s.services.messaging.waitingJobs(), 0);
    });

    test('outside the window; media, reactions and quotes of what is not in the conversation', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const doc = { type: 'document', document: { link: 'https://example.com/a.pdf' } };
      const outside = await s.send({ to: '+16505554444', from: s.numbers[0], ...doc });
      assert.equal(outside.statusCode, 422, outside.body);
      assert.equal(outside.json().error.code, 'outside_service_window');

      const mine = await personWrites(s, PERSON, { type: 'image', image: {} });
      const photo = await uploaded(s, png(2000), 'mine.png');
      const other = await personWrites(s, '16505555555');
      const refusals: [Record<string, unknown>, number, string][] = [
        [{ type: 'reaction', reaction: { messageId: 'msg_nope', emoji: '👍' } }, 404, 'reaction'],
        [{ type: 'reaction', reaction: { messageId: other.id, emoji: '👍' } }, 404, 'reaction'],
        [{ type: 'text', text: { body: 'hi' }, context: { messageId: other.id } }, 404, 'context'],
        [{ type: 'image', image: { mediaId: 'med_unknown' } }, 404, 'image.mediaId'],
        [{ type: 'document', document: { mediaId: photo.mediaId } }, 400, 'document.mediaId'],
      ];
      for (const [kind, status, field] of refusals) {
        const res = await s.send({ to: TO, from: s.numbers[0], ...kind });
        assert.equal(res.statusCode, status, res.body);
        assert.ok(res.json().error.message.includes(field), res.json().error.message);
      }
      // From the other number: the person's window and messages there are another conversation.
      const elsewhere = await s.send({
        to: TO,
        from: s.numbers[1],
        type: 'reaction',
        reaction: { messageId: mine.id, emoji: '👍' },
      });
      assert.equal(elsewhere.statusCode, 422, elsewhere.body);
      assert.equal(await s.services.messaging.waitingJobs(), 0);
    });

    test("a reaction or quote naming another portal's message (same person and number) is refused", async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      await personWrites(s, PERSON);
      const other = await createPortal(s.services);
      const otherId = await s.services.accounts.portalIdFor(other.portalCode);
      // Messages of the same conversation key (person, business number) held by another portal.
      const theirsIn = await personWrites(s, PERSON);
      const theirsOut = (await s.send(hello(TO, s.numbers[0]!))).json().data.id as string;
      await queryRows(
        s.services.storage,
        sql`update messages set portal_id = ${otherId} where id = ${theirsIn.id}`,
      );
      await queryRows(
        s.services.storage,
        sql`update messages set portal_id = ${otherId}, contact_id = null where id = ${theirsOut}`,
      );
      for (const id of [theirsIn.id, theirsOut]) {
        for (const kind of [
          { type: 'reaction', reaction: { messageId: id, emoji: '👍' } },
          { type: 'text', text: { body: 'hi' }, context: { messageId: id } },
        ]) {
          const res = await s.send({ to: TO, from: s.numbers[0], ...kind });
          assert.equal(res.statusCode, 404, `${kind.type} of ${id}: ${res.body}`);
        }
      }
      assert.equal(await s.services.messaging.waitingJobs(), 1);
    });

    test('a reaction to a message that failed before it was sent is refused', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      await personWrites(s, PERSON);
      const id = (await s.send(hello(TO, s.numbers[0]!))).json().data.id as string;
      assert.equal(await failQueuedMessage(s.services.storage.db, id, INACTIVE_ERROR), true);
      const res = await s.send({
        to: TO,
        from: s.numbers[0],
        type: 'reaction',
        reaction: { messageId: id, emoji: '👍' },
      });
      assert.equal(res.statusCode, 404, res.body);
      assert.match(res.json().error.message, /never sent/);
    });

    test('Idempotency-Key: the replay carries the kind object; another body conflicts', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const hello = await personWrites(s, PERSON);
      const body = { to: TO, from: s.numbers[0], ...buttons(2), context: { messageId: hello.id } };
      const key = { 'idempotency-key': 'kinds-1' };
      const first = await s.send(body, key);
      assert.equal(first.statusCode, 202, first.body);
      const again = await s.send(body, key);
      assert.equal(again.statusCode, 202);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.json(), first.json());
      assert.deepEqual(again.json().data.interactive, body.interactive);
      assert.deepEqual(again.json().data.context, { messageId: hello.id });
      const conflict = await s.send({ ...body, ...buttons(1) }, key);
      assert.equal(conflict.statusCode, 409);
      assert.equal(await s.services.messaging.waitingJobs(), 1);
    });

    test('a reaction to a message still queued waits for its wamid, then carries it', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      await personWrites(s, PERSON);
      const first = await s.send({
        to: TO,
        from: s.numbers[0],
        type: 'text',
        text: { body: 'Hi' },
      });
      assert.equal(first.statusCode, 202, first.body);
      const id = first.json().data.id as string;
      const reaction = await s.send({
        to: TO,
        from: s.numbers[0],
        type: 'reaction',
        reaction: { messageId: id, emoji: '❤️' },
      });
      assert.equal(reaction.statusCode, 202, reaction.body);
      await s.services.messaging.startWorkers();
      const reactionId = reaction.json().data.id as string;
      await eventually(
        async () => (await s.message(reactionId)).providerMessageId !== null,
        'the reaction is sent',
      );
      const target = await s.message(id);
      const sentReaction = await s.message(reactionId);
      const received = s.provider.sandbox.cloud.messages.find(
        (m) => m.wamid === sentReaction.providerMessageId,
      );
      assert.deepEqual(received?.content, { message_id: target.providerMessageId, emoji: '❤️' });
    });

    test('a reaction queued behind its message fails, unsent, when that message fails before it was sent', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      await personWrites(s, PERSON);
      const first = await s.send(hello(TO, s.numbers[0]!));
      assert.equal(first.statusCode, 202, first.body);
      const id = first.json().data.id as string;
      const reaction = await s.send({
        to: TO,
        from: s.numbers[0],
        type: 'reaction',
        reaction: { messageId: id, emoji: '👍' },
      });
      assert.equal(reaction.statusCode, 202, reaction.body);
      const reactionId = reaction.json().data.id as string;
      // The message fails while both wait for the delivery worker.
      assert.equal(await failQueuedMessage(s.services.storage.db, id, INACTIVE_ERROR), true);
      await s.services.messaging.startWorkers();
      await eventually(
        async () => (await s.message(reactionId)).status === 'failed',
        'the reaction fails',
      );
      const failed = await s.message(reactionId);
      assert.equal((failed.error as { code: string }).code, 'context_unavailable');
      assert.equal(s.provider.sandbox.cloud.sendsOf(reactionId), 0, 'nothing sent');
    });
  });
}

test("a text's previewUrl reaches the wire as preview_url", () => {
  const row = { waId: TO, type: 'text' } as MessageRow;
  const ids = { media: new Map<string, string>(), wamids: new Map<string, string>() };
  assert.deepEqual(
    freeFormOutbound(row, { text: { body: 'See https://example.com', previewUrl: true } }, ids),
    { to: TO, type: 'text', text: { body: 'See https://example.com', preview_url: true } },
  );
});
