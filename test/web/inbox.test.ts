/**
 * `/inbox` over real storage, its conversations stored as messaging stores them (sealed
 * content, the conversation row): signed out, every inbox address sends to sign-in (the event
 * stream and the fragments answer 401); signed in, the list and the thread show the person's
 * words, the window and the unread count, an image through the page's media route; another
 * portal's conversation is a 404 on every route; a reply with a forged CSRF token changes
 * nothing, and one without a connection is refused with the API's words; the event stream
 * names the portal's changed conversations (ids only), never another portal's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { notifyConversationChanges } from '../../src/messaging/store/conversation-changes.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword } from '../helpers/web.ts';
import { readEvents } from './inbox-events.ts';
import { personWrites } from './inbox-person.ts';

for (const backend of backends()) {
  describe(`/inbox (${backend.name})`, () => {
    test('signed out → sign-in; the list, the thread, another portal → 404, replies and the event stream', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const a = await portalWithPassword(services);
      const b = await portalWithPassword(services);
      const aId = await services.accounts.portalIdFor(a.portalCode);
      const bId = await services.accounts.portalIdFor(b.portalCode);
      const ada = await personWrites(services, aId, {
        phone: '+16505551234',
        firstName: 'Ada',
        text: 'hello from Ada',
        image: true,
      });
      const other = await personWrites(services, bId, {
        phone: '+16505550000',
        text: 'a secret of portal B',
      });

      // Signed out.
      const anonymous = new Browser(app);
      for (const url of ['/inbox', `/inbox/${ada.conversationId}`, '/inbox/media/med_x']) {
        const res = await anonymous.get(url);
        assert.equal(res.statusCode, 302, url);
        assert.match(String(res.headers.location), /^\/login\?next=/, url);
      }
      for (const url of [
        '/inbox/events',
        '/inbox/fragments/list',
        `/inbox/${ada.conversationId}/fragments/thread`,
      ])
        assert.equal((await anonymous.get(url)).statusCode, 401, url);

      const browser = new Browser(app);
      await browser.signIn(a.email);
      const list = await browser.get('/inbox');
      assert.equal(list.statusCode, 200);
      assert.match(list.body, /href="\/inbox"[^>]*aria-current="page"/, 'the navigation marks it');
      assert.match(list.body, new RegExp(`data-testid="conversation-${ada.conversationId}"`));
      assert.match(list.body, /Ada/);
      assert.match(list.body, /the parcel/, 'the last message is the preview');
      assert.match(list.body, /2 unread/);
      assert.match(list.body, /Window open · 24 h left/);
      assert.doesNotMatch(list.body, /secret of portal B/);
      assert.match(list.body, /<script src="\/assets\/inbox.js" defer/);

      const thread = await browser.get(`/inbox/${ada.conversationId}`);
      assert.equal(thread.statusCode, 200);
      assert.match(thread.body, /data-testid="bubble-in"[^]*hello from Ada/);
      assert.match(thread.body, /<img src="\/inbox\/media\/med_[0-9A-Za-z]+" alt="the parcel"/);
      assert.match(thread.body, /data-testid="reply-form"/);
      assert.match(thread.body, /name="text"/, 'free text while the window is open');
      const fragment = await browser.get(`/inbox/${ada.conversationId}/fragments/thread`);
      assert.equal(fragment.statusCode, 200);
      assert.doesNotMatch(fragment.body, /<html/);
      assert.match(fragment.body, /hello from Ada/);
      const listFragment = await browser.get('/inbox/fragments/list');
      assert.match(listFragment.body, /hello from Ada|the parcel/);

      // Another portal's conversation, or no conversation at all: 404 everywhere.
      for (const id of [other.conversationId, 'cnv_NoSuchConversation', 'not-an-id']) {
        assert.equal((await browser.get(`/inbox/${id}`)).statusCode, 404, id);
        assert.equal((await browser.get(`/inbox/${id}/fragments/thread`)).statusCode, 404, id);
        const csrf = csrfOf(thread.body);
        const post = await browser.post(`/inbox/${id}/reply`, { csrf, compose: 'text', text: 'x' });
        assert.equal(post.statusCode, 404, id);
      }
      assert.equal((await browser.get('/inbox/media/med_NoSuchMedium')).statusCode, 404);

      // Replies: a forged token changes nothing; without a connection the API's refusal.
      const csrf = csrfOf(thread.body);
      const forged = await browser.post(`/inbox/${ada.conversationId}/reply`, {
        csrf: 'x'.repeat(43),
        compose: 'text',
        text: 'On its way',
      });
      assert.equal(forged.statusCode, 403);
      const blank = await browser.post(`/inbox/${ada.conversationId}/reply`, {
        csrf,
        compose: 'text',
        text: ' ',
      });
      assert.equal(blank.statusCode, 400);
      assert.match(blank.body, /id="r-text-error"[^>]*>Write the text to send/);
      const refused = await browser.post(`/inbox/${ada.conversationId}/reply`, {
        csrf,
        compose: 'text',
        text: 'On its way',
      });
      assert.equal(refused.statusCode, 409);
      assert.match(refused.body, /role="alert"[^]*connect/i);
      assert.match(refused.body, />On its way</, 'the text is kept');

      // The event stream: the portal's changes by id, nothing of another portal, no content.
      const base = await app.listen({ host: '127.0.0.1', port: 0 });
      const cookie = [...browser.jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const stream = await readEvents(
        `${base}/inbox/events`,
        cookie,
        (events) => events.some((e) => e.event === 'change'),
        async () => {
          await services.storage.db.transaction(async (tx) => {
            await notifyConversationChanges(tx, [
              { portalId: bId, conversationId: other.conversationId },
            ]);
          });
          await services.storage.db.transaction(async (tx) => {
            await notifyConversationChanges(tx, [
              { portalId: aId, conversationId: ada.conversationId },
              { portalId: aId, conversationId: ada.conversationId },
            ]);
          });
        },
      );
      assert.equal(stream.status, 200);
      assert.match(stream.type, /^text\/event-stream/);
      const changes = stream.events.filter((e) => e.event === 'change');
      assert.deepEqual(
        changes.map((e) => JSON.parse(e.data) as unknown),
        [{ conversationIds: [ada.conversationId] }],
      );
    });
  });
}
