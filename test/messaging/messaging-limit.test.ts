/**
 * The business portfolio's messaging limit on both backends, against the sandbox provider over
 * real HTTP: with the portfolio at `TIER_250`, templates to 250 different people outside a
 * service window are queued, the 251st person is refused with 429 `messaging_limit_reached` and
 * `Retry-After`, nothing reserved or queued; a template to a person already counted, or to a
 * person inside their service window, still goes; an unlimited portfolio is not counted.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/messaging-limits
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hello, messagingSetup, MESSAGES } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';

const person = (i: number) => `+1650555${String(1000 + i).padStart(4, '0')}`;

for (const backend of backends()) {
  describe(`messaging limit (${backend.name})`, () => {
    test('250 people pass, the 251st is refused; counted people and open windows pass', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false, credit: 1_000_000 });
      const [number, other] = s.numbers as [string, string];
      const { cloud } = s.provider.sandbox;
      const lowered = await cloud.changeNumber(number, { messaging_limit_tier: 'TIER_250' });
      assert.ok(lowered.ok);
      const numbers = await s.app.inject({
        url: '/api/v1/external/messaging/numbers',
        headers: { authorization: s.token },
      });
      const shown = numbers.json().data.items.find((n: { id: string }) => n.id === number);
      assert.equal(shown.messagingLimitPerDay, 250);

      // 250 different people, from both numbers of the portfolio (they share the limit).
      for (let i = 0; i < 250; i++) {
        const res = await s.send(hello(person(i), i % 2 === 0 ? number : other));
        assert.equal(res.statusCode, 202, `${i}: ${res.body}`);
      }
      const creditBefore = await s.services.messaging.credit({ portalId: s.portalId });
      const countOf = async () =>
        (
          await s.app.inject({
            url: `${MESSAGES}?limit=100&to=${encodeURIComponent(person(250))}`,
            headers: { authorization: s.token },
          })
        ).json<{ data: { items: unknown[] } }>().data.items.length;

      const refused = await s.send(hello(person(250), number));
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(refused.json().error.code, 'messaging_limit_reached');
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(retryAfter > 86_000 && retryAfter <= 86_400, String(retryAfter));
      assert.deepEqual(await s.services.messaging.credit({ portalId: s.portalId }), creditBefore);
      assert.equal(await countOf(), 0);

      // A person already counted: another template goes, from either number.
      const again = await s.send(hello(person(7), other));
      assert.equal(again.statusCode, 202, again.body);

      // A person inside their service window with the sender number: not business-initiated.
      await s.services.messaging.webhookSink.inboundMessages(s.portalId, number, [
        {
          wamid: 'wamid.limit-window',
          from: person(250).slice(1),
          timestamp: new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000),
          type: 'text',
          content: { type: 'text', text: { body: 'hi' } },
        },
      ]);
      const inWindow = await s.send(hello(person(250), number));
      assert.equal(inWindow.statusCode, 202, inWindow.body);
      // … but from the other number their window is closed, and they are still not counted.
      const otherNumber = await s.send(hello(person(250), other));
      assert.equal(otherNumber.statusCode, 429, otherNumber.body);

      // An unlimited portfolio is not counted.
      await cloud.changeNumber(number, { messaging_limit_tier: 'TIER_UNLIMITED' });
      const unlimited = await s.send(hello(person(252), number));
      assert.equal(unlimited.statusCode, 202, unlimited.body);
    });
  });
}
