/**
 * One stored row never turns a read into a 500 (docs/decisions/0033-input-validation.md): a message stored with a
 * time the lists cannot show (year 9999), or with content that no longer fits its kind's schema
 * (a location without its longitude), is logged and shown degraded; the pages around it answer.
 * And the entries refuse such values now: a webhook's timestamp far from now is skipped.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { sealContent } from '../../src/messaging/store/message-content.ts';
import { parseProviderWebhook } from '../../src/partner/cloud-api/provider-webhook-payload.ts';
import { loadKeyring } from '../../src/platform/keyring.ts';
import { MESSAGES, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { personWrites } from '../helpers/inbound.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, TEST_PASSWORD } from '../helpers/web.ts';
import { hashPassword } from '../../src/platform/passwords.ts';

const CONVERSATIONS = '/api/v1/external/messaging/conversations';
const LAST_SECOND = 253_402_300_799; // 9999-12-31T23:59:59Z

function get(s: MessagingSetup, url: string) {
  return s.app.inject({ url, headers: { authorization: s.token } });
}

/** The error lines logged so far (for a failure's message). */
const errorsOf = (s: MessagingSetup) => s.logs.filter((l) => l.includes('"level":50')).join('\n');

for (const backend of backends()) {
  describe(`stored rows that no longer fit (${backend.name})`, () => {
    test('an inbound text stamped in year 9999: the lists answer 200', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      await s.services.messaging.webhookSink.inboundMessages(s.portalId, s.numbers[0]!, [
        {
          wamid: 'wamid.future',
          from: '16505550123',
          timestamp: new Date(LAST_SECOND * 1000),
          type: 'text',
          content: { type: 'text', text: { body: 'from the future' } },
        },
      ]);
      await personWrites(s, '16505550124');
      const conversations = await get(s, CONVERSATIONS);
      assert.equal(conversations.statusCode, 200, `${conversations.body} ${errorsOf(s)}`);
      assert.equal(conversations.json().data.items.length, 2);
      const messages = await get(s, MESSAGES);
      assert.equal(messages.statusCode, 200, `${messages.body} ${errorsOf(s)}`);
      assert.equal(messages.json().data.items.length, 2);
      const inbox = await get(s, `${CONVERSATIONS}?window=open`);
      assert.equal(inbox.statusCode, 200, `${inbox.body} ${errorsOf(s)}`);
    });

    test('an outbound location stored without its longitude: shown without it, logged', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const hello = await personWrites(s, '16505550125');
      const sent = await s.send({
        to: '+16505550125',
        from: s.numbers[0],
        type: 'location',
        location: { latitude: 51.5, longitude: -0.12, name: 'Here' },
      });
      assert.equal(sent.statusCode, 202, sent.body);
      const id: string = sent.json().data.id;
      // The row as an older version stored it: `-1e999` parsed to -Infinity, kept as null.
      const sealed = sealContent(loadKeyring(s.config), s.portalId, id, {
        location: { latitude: 51.5, longitude: null as unknown as number, name: 'Here' },
      });
      await queryRows(
        s.services.storage,
        sql`update messages set content = ${JSON.stringify(sealed)}::jsonb where id = ${id}`,
      );
      const before = s.logs.length;
      const list = await get(s, MESSAGES);
      assert.equal(list.statusCode, 200, `${list.body} ${errorsOf(s)}`);
      const shown = (list.json().data.items as { id: string }[]).map((m) => m.id);
      assert.deepEqual(shown.sort(), [hello.id, id].sort());
      const one = await get(s, `${MESSAGES}/${id}`);
      assert.equal(one.statusCode, 200, `${one.body} ${errorsOf(s)}`);
      assert.equal(one.json().data.type, 'location');
      assert.equal(
        one.json().data.location,
        undefined,
        'the content that does not fit is left out',
      );
      const warned = s.logs.slice(before).filter((l) => l.includes('does not fit'));
      assert.ok(warned.length > 0, 'the row is logged');
      assert.ok(!warned.some((l) => l.includes('51.5') || l.includes('Here')), 'ids only');
      const conversations = await get(s, CONVERSATIONS);
      assert.equal(conversations.statusCode, 200, `${conversations.body} ${errorsOf(s)}`);
    });

    test('the web inbox with both bad rows: the list and each thread answer 200, the rest shown', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      // The row stamped in year 9999, as the first test makes it.
      await s.services.messaging.webhookSink.inboundMessages(s.portalId, s.numbers[0]!, [
        {
          wamid: 'wamid.future',
          from: '16505550123',
          timestamp: new Date(LAST_SECOND * 1000),
          type: 'text',
          content: { type: 'text', text: { body: 'from the future' } },
        },
      ]);
      // The location without its longitude, as the second test makes it, after a readable hello.
      const ada = await personWrites(s, '16505550125', {
        type: 'text',
        text: { body: 'hello from Ada' },
      });
      const sent = await s.send({
        to: '+16505550125',
        from: s.numbers[0],
        type: 'location',
        location: { latitude: 51.5, longitude: -0.12, name: 'Here' },
      });
      assert.equal(sent.statusCode, 202, sent.body);
      const id: string = sent.json().data.id;
      const sealed = sealContent(loadKeyring(s.config), s.portalId, id, {
        location: { latitude: 51.5, longitude: null as unknown as number, name: 'Here' },
      });
      await queryRows(
        s.services.storage,
        sql`update messages set content = ${JSON.stringify(sealed)}::jsonb where id = ${id}`,
      );
      // A third person whose rows are all sound.
      await personWrites(s, '16505550126', { type: 'text', text: { body: 'a sound message' } });

      const [admin] = await queryRows<{ email: string }>(
        s.services.storage,
        sql`select email from users where portal_id = ${s.portalId}`,
      );
      await queryRows(
        s.services.storage,
        sql`update users set password_hash = ${await hashPassword(TEST_PASSWORD)}
          where portal_id = ${s.portalId}`,
      );
      const browser = new Browser(s.app);
      await browser.signIn(admin!.email);
      const list = await browser.get('/inbox');
      assert.equal(list.statusCode, 200, `${list.body} ${errorsOf(s)}`);
      const items = (await get(s, CONVERSATIONS)).json().data.items as {
        id: string;
        contact: { id: string };
      }[];
      assert.equal(items.length, 3);
      for (const c of items)
        assert.match(list.body, new RegExp(`data-testid="conversation-${c.id}"`), c.id);
      assert.match(list.body, /a sound message/, 'a sound conversation keeps its preview');
      assert.doesNotMatch(list.body, /51\.5|-0\.12/, 'no half of the broken location');

      const threads = new Map<string, string>();
      for (const c of items) {
        const thread = await browser.get(`/inbox/${c.id}`);
        assert.equal(thread.statusCode, 200, `${c.id}: ${thread.body} ${errorsOf(s)}`);
        const fragment = await browser.get(`/inbox/${c.id}/fragments/thread`);
        assert.equal(fragment.statusCode, 200, `${c.id}: ${fragment.body} ${errorsOf(s)}`);
        threads.set(c.contact.id, fragment.body);
      }
      // The thread holding the broken location: the readable message, and the location's bubble
      // without its half content.
      const adaThread = threads.get(ada.contactId)!;
      assert.match(adaThread, /data-testid="bubble-in"[^]*hello from Ada/);
      assert.match(adaThread, new RegExp(`id="m-${id}"`), 'the broken message keeps its bubble');
      assert.doesNotMatch(adaThread, /51\.5|-0\.12/, 'no half of the broken location');
      assert.ok([...threads.values()].some((b) => b.includes('a sound message')));
      assert.ok([...threads.values()].some((b) => b.includes('from the future')));
      assert.equal(errorsOf(s), '', 'nothing logged as an error');
    });
  });
}

describe('webhook timestamps far from now are refused at the entry', () => {
  const body = (timestamp: string) => ({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102000000101',
        changes: [
          {
            field: 'messages',
            value: {
              metadata: { phone_number_id: '1234567890' },
              messages: [
                {
                  id: 'wamid.x',
                  from: '16505550123',
                  timestamp,
                  type: 'text',
                  text: { body: 'x' },
                },
              ],
              statuses: [{ id: 'wamid.y', status: 'sent', timestamp, recipient_id: '16505550123' }],
            },
          },
        ],
      },
    ],
  });

  test('year 9999 and a day ahead are skipped; now and last week are kept', () => {
    const now = Math.floor(Date.now() / 1000);
    for (const t of [String(LAST_SECOND), String(now + 2 * 86_400)]) {
      const parsed = parseProviderWebhook(body(t));
      assert.ok(parsed.ok);
      assert.equal(parsed.skipped, 2, t);
      assert.deepEqual(parsed.skippedIds, ['wamid.y', 'wamid.x']);
    }
    for (const t of [String(now), String(now - 7 * 86_400), String(now + 60)]) {
      const parsed = parseProviderWebhook(body(t));
      assert.ok(parsed.ok);
      assert.equal(parsed.skipped, 0, t);
    }
  });
});
