/**
 * The sandbox phone page's username people, over real HTTP: a person writes in with a username
 * and no number (`POST /sandbox/phone/reply` with `username`), the app's webhook carries their
 * BSUID and username and no phone; the page lists them without a number, and their thread's
 * forms (keyed by the BSUID) write in again as the same person, still without a phone.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { recordAppWebhooks, startTestProvider } from '../helpers/provider.ts';
import { changesOf, granted, type Item } from './sandbox-cloud.ts';

test('a username person writes from the phone page, without a visible number', async (t) => {
  const p = await startTestProvider(t);
  const hooks = await recordAppWebhooks(t, p);
  const { numbers } = await granted(p, '6802');
  const values = () => changesOf(hooks, 'messages').map((c) => c.value as Item);
  const post = (body: Record<string, string>) =>
    fetch(`${p.sandbox.url}/sandbox/phone/reply`, {
      method: 'POST',
      body: new URLSearchParams({ phone_number_id: numbers[0], ...body }),
    });

  const first = await post({ username: 'ada.lovelace', name: 'Ada', text: 'hello' });
  assert.equal(first.status, 200, await first.text());
  const [value] = values();
  const [message] = value!.messages as Item[];
  const [contact] = value!.contacts as Item[];
  assert.equal(message!.from, undefined, 'no phone in the message');
  assert.equal(contact!.wa_id, undefined, 'no phone in the contact');
  const userId = String(message!.from_user_id);
  assert.match(userId, /^US\.[0-9]{20}$/);
  assert.equal(contact!.user_id, userId);
  assert.deepEqual(contact!.profile, { name: 'Ada', username: 'ada.lovelace' });

  const page = await (await fetch(`${p.sandbox.url}/sandbox/phone`)).text();
  assert.match(page, /Write with a username/);
  assert.ok(
    page.includes(`A person with a username, no visible number (${userId})`),
    'listed without a number',
  );
  assert.ok(page.includes(`name="from" value="${userId}"`), 'their thread writes as them');

  // Their thread's forms send the BSUID as `from`: the same person, still without a phone.
  const again = await post({ from: userId, text: 'me again' });
  assert.equal(again.status, 200, await again.text());
  const [, second] = values();
  const [next] = second!.messages as Item[];
  assert.equal(next!.from, undefined);
  assert.equal(next!.from_user_id, userId);

  // Neither a number nor a username: refused, nothing sent.
  const neither = await post({ text: 'who am I' });
  assert.equal(neither.status, 400);
  assert.equal(values().length, 2);
});
