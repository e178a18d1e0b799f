/**
 * Conversations through the API, on both backends: `GET /messaging/conversations` (preview,
 * unread, window, filters, pages), messages of both directions on `GET /messaging/messages` and
 * `/{id}`; opt-out and opt-in keywords (consent, its history on the contact, `contact.opted_out`,
 * the confirmation reply, the refused template); `conversation.window_closing` once per window;
 * content retention; the erasure of a person's inbound content.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { saveMessagingSettings } from '../../src/messaging/conversations/messaging-settings.ts';
import type { InboundMessageEvent } from '../../src/partner/cloud-api/provider-webhook-events.ts';
import { loadKeyring } from '../../src/platform/keyring.ts';
import { openEventPayload } from '../../src/webhooks/event-payload.ts';
import { GREETING, MESSAGES, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { eventually } from '../helpers/instances.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

const CONVERSATIONS = '/api/v1/external/messaging/conversations';
const CONTACTS = '/api/v1/external/crm/contacts';
const HOUR = 3_600_000;

function text(from: string, body: string, at: Date): InboundMessageEvent {
  return {
    wamid: `wamid.${Math.random().toString(36).slice(2)}`,
    from,
    timestamp: at,
    type: 'text',
    content: { type: 'text', text: { body } },
  };
}

const ago = (ms: number) => new Date(Math.floor(Date.now() / 1000) * 1000 - ms);

function get(s: MessagingSetup, url: string) {
  return s.app.inject({ url, headers: { authorization: s.token } });
}

async function write(s: MessagingSetup, from: string, body: string, at: Date, number = 0) {
  await s.services.messaging.webhookSink.inboundMessages(s.portalId, s.numbers[number]!, [
    text(from, body, at),
  ]);
}

async function subscribe(s: MessagingSetup) {
  await s.services.webhooks.start();
  await s.services.webhooks.addEndpoint(
    s.portalId,
    {
      url: 'http://127.0.0.1:9/hook',
      eventTypes: ['contact.opted_out', 'conversation.window_closing'],
    },
    { actor: CLI_ACTOR },
  );
}

/** The events of `type` as sent (their data is sealed in the rows). */
const events = async (s: MessagingSetup, type: string) => {
  const rows = await queryRows<{ id: string; payload: Record<string, unknown> }>(
    s.services.storage,
    sql`select id, payload from webhook_events where portal_id = ${s.portalId} and type = ${type}
        order by created_at`,
  );
  const keyring = loadKeyring(s.config);
  return rows.map((r) => ({ payload: openEventPayload(keyring, s.portalId, r.id, r.payload) }));
};

for (const backend of backends()) {
  describe(`conversations (${backend.name})`, () => {
    test('conversations and messages of both directions through the API', async (t) => {
      const s = await messagingSetup(t, backend);
      await write(s, '16505550001', 'hello there', ago(2 * HOUR));
      await write(s, '16505550002', 'a very long message '.repeat(10), ago(30 * HOUR));
      const [first] = (await get(s, `${MESSAGES}?direction=inbound`)).json().data.items;
      const reply = await s.send({
        to: '+16505550001',
        from: s.numbers[0],
        type: 'text',
        text: { body: 'hi back' },
      });
      assert.equal(reply.statusCode, 202, reply.body);

      // The conversation names an outbound message once the provider accepted it.
      await eventually(
        async () =>
          (await get(s, CONVERSATIONS)).json().data.items[0].lastMessage.direction === 'outbound',
        'the reply accepted',
      );
      const list = (await get(s, CONVERSATIONS)).json().data;
      assert.equal(list.items.length, 2);
      const [alice, bob] = list.items;
      assert.equal(alice.contact.phone, '+16505550001');
      assert.equal(alice.phoneNumberId, s.numbers[0]);
      assert.equal(alice.lastMessage.direction, 'outbound');
      assert.equal(alice.lastMessage.preview, 'hi back');
      assert.equal(alice.unreadCount, 1);
      assert.ok(Date.parse(alice.windowExpiresAt) > Date.now() + 20 * HOUR);
      assert.equal(bob.windowExpiresAt, null);
      assert.equal(bob.lastMessage.direction, 'inbound');
      assert.equal([...bob.lastMessage.preview].length, 80);
      assert.ok(bob.lastMessage.preview.endsWith('…'));

      const open = (await get(s, `${CONVERSATIONS}?window=open`)).json().data.items;
      assert.deepEqual(
        open.map((c: { id: string }) => c.id),
        [alice.id],
      );
      const unread = (await get(s, `${CONVERSATIONS}?unread=true&limit=1`)).json().data;
      assert.equal(unread.items.length, 1);
      const next = (
        await get(s, `${CONVERSATIONS}?unread=true&limit=1&cursor=${unread.nextCursor}`)
      ).json().data;
      assert.equal(next.items.length, 1);
      assert.equal(next.nextCursor, null);
      assert.notEqual(next.items[0].id, unread.items[0].id);
      const bad = await get(s, `${CONVERSATIONS}?cursor=nope`);
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().error.code, 'invalid_request');

      // Both directions, one order; each filter; either id reads alone.
      const all = (await get(s, MESSAGES)).json().data.items;
      assert.deepEqual(
        all.map((m: { direction: string }) => m.direction),
        ['outbound', 'inbound', 'inbound'],
      );
      const inbound = (
        await get(s, `${MESSAGES}?direction=inbound&contactId=${first.contactId}`)
      ).json().data.items;
      assert.equal(inbound.length, 1);
      assert.deepEqual(inbound[0].text, { body: 'hello there' });
      const byNumber = (await get(s, `${MESSAGES}?phoneNumberId=${s.numbers[0]}&limit=1`)).json()
        .data;
      assert.equal(byNumber.items[0].direction, 'outbound');
      assert.notEqual(byNumber.nextCursor, null);
      const one = (await get(s, `${MESSAGES}/${first.id}`)).json().data;
      assert.equal(one.direction, 'inbound');
      assert.equal((await get(s, `${MESSAGES}/msg_nope`)).statusCode, 404);
    });

    test('STOP opts out (history, event, confirmation), a template is refused, START opts in', async (t) => {
      const s = await messagingSetup(t, backend);
      await subscribe(s);
      await saveMessagingSettings(s.services.storage.db, s.portalId, {
        optOutKeywords: ['STOP', 'ARRET'],
        optInKeywords: ['START'],
        optOutReply: 'You will not hear from us again.',
        optInReply: null,
        autoMarkRead: false,
      });
      await write(s, '16505550001', 'hello', ago(60_000));
      await write(s, '16505550001', 'Stop, please', ago(50_000));
      const [message] = (await get(s, `${MESSAGES}?direction=inbound&limit=1`)).json().data.items;
      let contact = (await get(s, `${CONTACTS}/${message.contactId}`)).json().data;
      assert.equal(contact.consent.whatsapp, 'unknown', 'a sentence is no keyword');

      await write(s, '16505550001', '  arret ', ago(40_000));
      const [stop] = (await get(s, `${MESSAGES}?direction=inbound&limit=1`)).json().data.items;
      contact = (await get(s, `${CONTACTS}/${message.contactId}`)).json().data;
      assert.equal(contact.consent.whatsapp, 'opted_out');
      assert.equal(contact.consent.source, 'keyword');
      assert.deepEqual(
        contact.consentHistory.map((c: Record<string, unknown>) => [
          c.from,
          c.to,
          c.source,
          c.messageId,
        ]),
        [['unknown', 'opted_out', 'keyword', stop.id]],
      );
      const optedOut = await events(s, 'contact.opted_out');
      assert.equal(optedOut.length, 1);
      assert.equal(optedOut[0]!.payload.data.source, 'keyword');
      const replies = (
        await get(s, `${MESSAGES}?direction=outbound&contactId=${contact.id}`)
      ).json().data.items;
      assert.equal(replies.length, 1);
      assert.deepEqual(replies[0].text, { body: 'You will not hear from us again.' });
      // Once: the same keyword again changes nothing and sends nothing.
      await write(s, '16505550001', 'STOP', ago(30_000));
      assert.equal((await events(s, 'contact.opted_out')).length, 1);
      assert.equal(
        (await get(s, `${MESSAGES}?direction=outbound&contactId=${contact.id}`)).json().data.items
          .length,
        1,
      );
      const refused = await s.send({
        to: '+16505550001',
        from: s.numbers[0],
        type: 'template',
        template: { name: GREETING.name, language: 'en_US', parameters: ['Ada'] },
      });
      assert.equal(refused.statusCode, 422);
      assert.equal(refused.json().error.code, 'recipient_opted_out');

      await write(s, '16505550001', 'start', ago(20_000));
      contact = (await get(s, `${CONTACTS}/${message.contactId}`)).json().data;
      assert.equal(contact.consent.whatsapp, 'opted_in');
      assert.deepEqual(
        contact.consentHistory.map((c: Record<string, unknown>) => c.to),
        ['opted_in', 'opted_out'],
      );
    });

    test('window_closing once per window; content expires; erasure removes inbound content', async (t) => {
      const s = await messagingSetup(t, backend);
      await subscribe(s);
      await write(s, '16505550001', 'closing soon', ago(23.5 * HOUR));
      await write(s, '16505550002', 'very old', ago(91 * 24 * HOUR));
      const first = await s.services.conversations.sweep();
      assert.equal(first.windowsClosing, 1);
      assert.equal(first.expired.inbound, 1);
      assert.equal((await s.services.conversations.sweep()).windowsClosing, 0);
      const closing = await events(s, 'conversation.window_closing');
      assert.equal(closing.length, 1);
      const [conversation] = (await get(s, `${CONVERSATIONS}?window=open`)).json().data.items;
      assert.equal(closing[0]!.payload.data.conversationId, conversation.id);
      assert.equal(closing[0]!.payload.data.expiresAt, conversation.windowExpiresAt);

      const items = (await get(s, `${MESSAGES}?direction=inbound`)).json().data.items;
      const old = items.find((m: { from: string }) => m.from === '+16505550002');
      assert.equal(old.contentErased, true);
      assert.equal(old.text, undefined);

      const erased = await s.app.inject({
        method: 'DELETE',
        url: `${CONTACTS}/${conversation.contact.id}`,
        headers: { authorization: s.token },
      });
      assert.equal(erased.statusCode, 200, erased.body);
      assert.equal(erased.json().data.anonymised.inboundMessages, 1);
      const rows = await queryRows<{ from: string; content: unknown }>(
        s.services.storage,
        sql`select wa_id as "from", content from messages
          where portal_id = ${s.portalId} and direction = 'inbound'`,
      );
      assert.deepEqual(
        rows.map((r) => [r.from, r.content]).sort(),
        [
          ['erased', null],
          ['+16505550002', null],
        ].sort(),
      );
    });
  });
}
