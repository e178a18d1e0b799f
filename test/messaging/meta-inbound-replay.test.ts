/**
 * Meta's documented inbound-message payloads (test/fixtures/meta-webhooks/messages, each with
 * the reference page it comes from), replayed signed through Portico's provider-webhook route
 * over real storage: a text from a click-to-WhatsApp ad keeps its `referral`, a frequently
 * forwarded text says so, a voice message is an `audio` with `voice: true`, and Meta's
 * `unsupported` keeps what the person sent and its error code — each in the `message.received`
 * event, in `GET /messaging/messages/{id}` and on the inbox's thread.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { users } from '../../src/db/schema/users.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import { MESSAGES, messagingSetup } from '../helpers/messaging.ts';
import { replaySigned } from '../helpers/provider-webhook.ts';
import { ROOT } from '../helpers/root.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, TEST_PASSWORD } from '../helpers/web.ts';
import { inbound } from '../sandbox-provider/sandbox-cloud.ts';
import { startReceiver } from '../webhooks/receiver.ts';

// From the repository root: the suite runs this file bundled into test-output/suite.
const FIXTURES = pathToFileURL(join(ROOT, 'test', 'fixtures', 'meta-webhooks', 'messages') + '/');
const PAGES =
  'https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/';

interface Fixture {
  source: string;
  body: {
    entry: {
      id: string;
      changes: {
        field: string;
        value: { metadata: Record<string, string> } & Record<string, unknown>;
      }[];
    }[];
  };
}

function fixture(name: string): Fixture {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Fixture;
}

/** The fixture addressed to the test's WABA and business number. */
function replayBody(name: string, wabaId: string, phoneNumberId: string): string {
  const body = structuredClone(fixture(name).body);
  body.entry[0]!.id = wabaId;
  body.entry[0]!.changes[0]!.value.metadata.phone_number_id = phoneNumberId;
  return JSON.stringify(body);
}

test('every inbound fixture names the Meta reference page of its type', () => {
  const names = readdirSync(FIXTURES).filter((n) => n.endsWith('.json'));
  assert.ok(names.length >= 4);
  for (const name of names) {
    const f = fixture(name.replace(/\.json$/, ''));
    const change = f.body.entry[0]!.changes[0]!;
    assert.equal(change.field, 'messages', name);
    const [message] = change.value.messages as { type: string }[];
    assert.equal(f.source, `${PAGES}${message!.type}`, name);
  }
});

for (const backend of backends()) {
  describe(`Meta's documented inbound payloads, replayed (${backend.name})`, () => {
    test('referral, forwarded many times, voice, unsupported: event, API and inbox', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      await s.services.webhooks.start();
      await s.services.webhooks.startWorker();
      const { secret } = await s.services.webhooks.addEndpoint(
        s.portalId,
        { url: receiver.url, eventTypes: ['message.received'] },
        { actor: CLI_ACTOR },
      );
      receiver.secrets.push(secret);
      const wabaId = (await s.services.partner.wabaIdsOf(s.portalId))[0]!;
      const number = s.numbers.find((n) => n.startsWith(wabaId))!;

      for (const name of [
        'text-referral',
        'text-frequently-forwarded',
        'audio-voice',
        'unsupported',
      ])
        await replaySigned(s, replayBody(name, wabaId, number));
      const got = await receiver.waitFor(4);
      const byType = new Map<string, Record<string, unknown>>();
      for (const r of got) {
        assert.equal(r.event?.type, 'message.received');
        const data = r.event.data;
        const key =
          data.type === 'text' ? (data.referral ? 'referral' : 'forwarded') : String(data.type);
        byType.set(key, data);
      }

      // The ad the person tapped, as Meta's referral names it.
      const fromAd = byType.get('referral')!;
      assert.deepEqual(fromAd.referral, {
        sourceUrl: 'https://fb.me/3cr4Wqqkv',
        sourceId: '120226305854810726',
        sourceType: 'ad',
        body: 'Summer sale: 20% off every order this week.',
        headline: 'Chat with us',
        mediaType: 'image',
        imageUrl: 'https://scontent.xx.fbcdn.net/v/t45.1600-4/summer-sale.png',
        ctwaClid: 'Afc3nYt4TTydumlFFsatFz8bR3yvpRSmX5cEyD2XLiR0Mq3U4EhqU0gnQxrKG',
        welcomeMessage: { text: 'Hi! How can we help?' },
      });
      assert.equal(fromAd.context, null);
      const forwarded = byType.get('forwarded')!;
      assert.deepEqual(forwarded.context, {
        messageId: null,
        providerMessageId: null,
        forwarded: true,
        frequentlyForwarded: true,
      });
      assert.equal(forwarded.referral, undefined);
      const voice = byType.get('audio')!;
      assert.equal((voice.media as { voice?: boolean }).voice, true);
      assert.equal((voice.media as { mimeType: string }).mimeType, 'audio/ogg; codecs=opus');
      const unsupported = byType.get('unsupported')!;
      assert.deepEqual(unsupported.unsupported, {
        providerType: 'edit',
        errors: [{ code: 131051, title: 'Unsupported message type' }],
      });

      // The API's message view says the same.
      for (const data of byType.values()) {
        const res = await s.app.inject({
          url: `${MESSAGES}/${String(data.id)}`,
          headers: { authorization: s.token },
        });
        assert.equal(res.statusCode, 200, res.body);
        const view = res.json<{ data: Record<string, unknown> }>().data;
        for (const field of ['referral', 'context', 'media', 'unsupported'])
          assert.deepEqual(view[field], data[field], `${String(data.type)}: ${field}`);
      }

      // The inbox's thread shows the ad, the forwards and the voice message.
      const [admin] = await s.services.storage.db
        .update(users)
        .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
        .where(eq(users.portalId, s.portalId))
        .returning({ email: users.email });
      const browser = new Browser(s.app);
      await browser.signIn(admin!.email);
      const conversations = await s.app.inject({
        url: '/api/v1/external/messaging/conversations',
        headers: { authorization: s.token },
      });
      const [conversation] = conversations.json<{ data: { items: { id: string }[] } }>().data.items;
      const thread = await browser.get(`/inbox/${conversation!.id}`);
      assert.equal(thread.statusCode, 200);
      assert.match(
        thread.body,
        /data-testid="referral"[^>]*>From an ad: <a href="https:\/\/fb\.me\/3cr4Wqqkv"[^>]*>Chat with us<\/a>/,
      );
      assert.match(thread.body, /data-testid="forwarded"[^>]*>↪ Forwarded many times/);
      assert.match(thread.body, /data-testid="voice"[^>]*>🎤 Voice message/);
      assert.match(thread.body, /Unsupported message \(edit\)/);
    });

    test('written in through the sandbox: the ad, the forwards and the voice message are kept', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const wabaId = (await s.services.partner.wabaIdsOf(s.portalId))[0]!;
      const number = s.numbers.find((n) => n.startsWith(wabaId))!;
      const who = { phoneNumberId: number, from: '16505551234' };
      const referral = { source_url: 'https://fb.me/abc', source_type: 'ad', headline: 'Sale' };
      const wamids = [
        await inbound(s.provider, {
          ...who,
          message: { type: 'text', text: { body: 'From the ad' }, referral },
        }),
        await inbound(s.provider, {
          ...who,
          message: { type: 'text', text: { body: 'Fwd' }, context: { forwarded: true } },
        }),
        await inbound(s.provider, { ...who, message: { type: 'audio', audio: { voice: true } } }),
      ];
      const res = await s.app.inject({
        url: `${MESSAGES}?direction=inbound`,
        headers: { authorization: s.token },
      });
      assert.equal(res.statusCode, 200, res.body);
      const items = res.json<{ data: { items: Record<string, any>[] } }>().data.items; // eslint-disable-line @typescript-eslint/no-explicit-any -- API JSON
      const byWamid = new Map(items.map((m) => [m.providerMessageId as string, m]));
      assert.deepEqual(byWamid.get(wamids[0]!)?.referral, {
        sourceUrl: 'https://fb.me/abc',
        sourceType: 'ad',
        headline: 'Sale',
      });
      assert.deepEqual(
        [
          byWamid.get(wamids[1]!)?.context.forwarded,
          byWamid.get(wamids[1]!)?.context.frequentlyForwarded,
        ],
        [true, false],
      );
      assert.equal(byWamid.get(wamids[2]!)?.media.voice, true);
    });
  });
}
