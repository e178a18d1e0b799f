/**
 * The composer of `/messages` without a provider connection, over real storage: the card says
 * to connect and links to `/connect`; a send is refused (409, the page again) and queues
 * nothing; a form with another CSRF token changes nothing; the sent flash takes neither words
 * nor a link target from the URL.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';

for (const backend of backends()) {
  describe(`/messages composer (${backend.name})`, () => {
    test('not connected: the way to connect, a refused send queues nothing, forged forms and crafted flashes do nothing', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const b = new Browser(app);
      await b.signIn(portal.email);
      const page = await b.get('/messages');
      assert.equal(page.statusCode, 200);
      assert.match(
        page.body,
        /data-testid="composer-not-connected"[^]*?<a class="button" href="\/connect">/,
      );
      const csrf = csrfOf(page.body);
      const form = { compose: 'text', to: '+16505551234', text: 'Your parcel is here.' };

      const forged = await b.post('/messages/send', { ...form, csrf: 'x'.repeat(43) });
      assert.equal(forged.statusCode, 403);
      const refused = await b.post('/messages/send', { ...form, csrf });
      assert.equal(refused.statusCode, 409);
      assert.match(refused.body, /data-testid="composer-not-connected"/);
      const anonymous = await app.inject({
        method: 'POST',
        url: '/messages/send',
        payload: new URLSearchParams({ ...form, csrf }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(anonymous.statusCode, 303);
      assert.match(String(anonymous.headers.location), /^\/login/);
      const log = await app.inject({
        url: '/api/v1/external/messaging/messages',
        headers: { authorization: portal.token },
      });
      assert.deepEqual(log.json().data.items, [], 'nothing queued');

      const crafted = await b.get('/messages?done=message_sent&message=msg_NotAMessage1');
      assert.match(crafted.body, /data-testid="notice"/);
      assert.doesNotMatch(crafted.body, /notice-link|msg_NotAMessage1/);
      const elsewhere = await b.get('/messages?done=removed');
      assert.doesNotMatch(elsewhere.body, /data-testid="notice"/);
    });
  });
}
