/**
 * Read receipts over real storage and the sandbox provider over real HTTP: `POST
 * /messaging/messages/{id}/read` marks the message and the thread's earlier ones read at the
 * provider (the sandbox phone shows them read) and in Portico (`read_at`, the conversation's
 * unread count, never below 0); repeating it changes nothing; an outbound message's id or another
 * portal's is 404; the inbox's `markReadOnOpen` follows the portal's `auto_mark_read`.
 * `POST /messaging/messages/{id}/typing` shows the person the typing indicator (the sandbox
 * phone shows "typing…") and marks the message read the same way; repeated, it is sent again.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { createPortal } from '../helpers/app.ts';
import { personWrites, readState } from '../helpers/inbound.ts';
import { hello, MESSAGES, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const markRead = (s: MessagingSetup, id: string, token = s.token) =>
  s.app.inject({
    method: 'POST',
    url: `${MESSAGES}/${id}/read`,
    headers: { authorization: token },
  });

/** When the sandbox phone shows the person's message read (undefined: not read). */
const readAtProvider = (s: MessagingSetup, wamid: string) =>
  s.provider.sandbox.cloud.messages.find((m) => m.wamid === wamid)?.readAt;

/**
 * The read receipts the sandbox was sent: its log's `POST /{phone-number-id}/messages` (the
 * tests' delivery workers are off: no send reaches it).
 */
const receiptsSent = (s: MessagingSetup) =>
  s.provider.sandbox.calls.filter(
    (c) => c.method === 'POST' && /^\/v[0-9.]+\/[0-9]+\/messages$/.test(c.url),
  ).length;

for (const backend of backends()) {
  describe(`read receipts (${backend.name})`, () => {
    test('marks the message and the earlier ones read, at the provider and here; idempotent', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const first = await personWrites(s, '16505550201');
      const second = await personWrites(s, '16505550201', {
        type: 'text',
        text: { body: 'anyone there?' },
      });
      const third = await personWrites(s, '16505550201', { type: 'text', text: { body: 'hi' } });
      assert.equal((await readState(s, first)).unread, 3);

      const res = await markRead(s, second.id);
      assert.equal(res.statusCode, 200, res.body);
      const { data } = res.json<{ data: { id: string; readAt: string } }>();
      assert.equal(data.id, second.id);
      assert.ok(Date.parse(data.readAt) > 0);
      // The provider marked it and the earlier one read; the later one stays unread.
      assert.ok(readAtProvider(s, first.wamid) !== undefined);
      assert.ok(readAtProvider(s, second.wamid) !== undefined);
      assert.equal(readAtProvider(s, third.wamid), undefined);
      const after = await readState(s, first);
      assert.equal(after.unread, 1);
      assert.deepEqual(
        after.messages.map((m) => m.read_at !== null),
        [true, true, false],
      );

      // Again, and the earlier one: nothing changes, the first time stands.
      const again = await markRead(s, second.id);
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().data.readAt, data.readAt);
      assert.equal((await markRead(s, first.id)).statusCode, 200);
      assert.equal((await readState(s, first)).unread, 1);

      // The count never goes below 0, whatever it was.
      await queryRows(
        s.services.storage,
        sql`update conversations set unread_count = 0 where portal_id = ${s.portalId}`,
      );
      assert.equal((await markRead(s, third.id)).statusCode, 200);
      assert.equal((await readState(s, first)).unread, 0);
      // One receipt per mark that changed something; the repeats called no one.
      assert.equal(receiptsSent(s), 2);
    });

    test('an outbound message, another portal’s or an unknown id → 404, nothing sent', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const inbound = await personWrites(s, '16505550202');
      const sent = await s.send(hello('+16505550202', s.numbers[0]!));
      assert.equal(sent.statusCode, 202, sent.body);
      const outbound = await markRead(s, sent.json().data.id);
      assert.equal(outbound.statusCode, 404);
      assert.equal(outbound.json().error.code, 'not_found');
      const other = await createPortal(s.services);
      assert.equal((await markRead(s, inbound.id, other.token)).statusCode, 404);
      assert.equal((await markRead(s, 'msg_nothing')).statusCode, 404);
      assert.equal(readAtProvider(s, inbound.wamid), undefined);
      assert.equal(receiptsSent(s), 0);
      assert.equal((await readState(s, inbound)).unread, 1);
    });

    test('the typing indicator: shown to the person, the message read; again on a repeat', async (t) => {
      // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
      const s = await messagingSetup(t, backend, { workers: false });
      const person = '16505550204';
      const first = await personWrites(s, person);
      const second = await personWrites(s, person, { type: 'text', text: { body: 'hello?' } });
      const typing = (id: string, token = s.token) =>
        s.app.inject({
          method: 'POST',
          url: `${MESSAGES}/${id}/typing`,
          headers: { authorization: token },
        });
      const sandbox = s.provider.sandbox;
      assert.equal(sandbox.cloud.isTyping(s.numbers[0]!, person), false);

      const res = await typing(second.id);
      assert.equal(res.statusCode, 200, res.body);
      const { data } = res.json<{ data: { id: string; readAt: string; typingUntil: string } }>();
      assert.equal(data.id, second.id);
      const shownFor = Date.parse(data.typingUntil) - Date.parse(data.readAt);
      assert.ok(shownFor > 24_000 && shownFor <= 25_000 + 1_000, `${shownFor} ms`);
      assert.equal(sandbox.cloud.isTyping(s.numbers[0]!, person), true);
      assert.ok(readAtProvider(s, first.wamid) !== undefined, 'the thread is read with it');
      assert.equal((await readState(s, first)).unread, 0);

      // Once the indicator is gone, asking again shows it again (the read time stays).
      sandbox.advanceTime(25_001);
      assert.equal(sandbox.cloud.isTyping(s.numbers[0]!, person), false);
      const again = await typing(second.id);
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.json().data.readAt, data.readAt);
      assert.equal(sandbox.cloud.isTyping(s.numbers[0]!, person), true);
      assert.equal(receiptsSent(s), 2);

      // Not an inbound message of this portal: 404, nothing sent.
      const sent = await s.send(hello(`+${person}`, s.numbers[0]!));
      assert.equal((await typing(sent.json().data.id)).statusCode, 404);
      const other = await createPortal(s.services);
      assert.equal((await typing(second.id, other.token)).statusCode, 404);
      assert.equal(receiptsSent(s), 2);

      // The inbox's call: the conversation's newest message.
      sandbox.advanceTime(25_001);
      const shown = await s.services.readReceipts.showTypingInConversation(s.portalId, {
        contactId: second.contactId,
        phoneNumberId: s.numbers[0]!,
      });
      assert.equal(shown?.id, second.id);
      assert.equal(sandbox.cloud.isTyping(s.numbers[0]!, person), true);
    });

    test('on opening: only with auto_mark_read (off without a settings row)', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const older = await personWrites(s, '16505550203');
      const newest = await personWrites(s, '16505550203', { type: 'text', text: { body: '?' } });
      const conversation = { contactId: newest.contactId, phoneNumberId: s.numbers[0]! };
      const { readReceipts } = s.services;
      assert.equal(await readReceipts.markReadOnOpen(s.portalId, conversation), null);
      assert.equal(readAtProvider(s, newest.wamid), undefined);
      assert.equal((await readState(s, newest)).unread, 2);

      await queryRows(
        s.services.storage,
        sql`insert into messaging_settings (portal_id, opt_out_keywords, opt_in_keywords,
            auto_mark_read)
          values (${s.portalId}, array['STOP'], array['START'], true)`,
      );
      const marked = await readReceipts.markReadOnOpen(s.portalId, conversation);
      assert.equal(marked?.id, newest.id);
      assert.ok(readAtProvider(s, older.wamid) !== undefined);
      assert.equal((await readState(s, newest)).unread, 0);
      // Nothing left unread: opening again calls no one.
      assert.equal(await readReceipts.markReadOnOpen(s.portalId, conversation), null);
      assert.equal(receiptsSent(s), 1);
    });
  });
}
