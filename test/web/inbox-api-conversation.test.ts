/**
 * The API and the inbox show one conversation read model, on both backends: for conversations
 * whose last message is a reaction (its preview), whose window closes within the hour, and whose
 * window closed, `GET /messaging/conversations` and the inbox's list (page and fragment) and
 * thread show the same last message, unread count and service window.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Conversation } from '../../src/messaging/conversations/conversations-schemas.ts';
import { shortTime, windowWords } from '../../src/web/inbox/inbox-view.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, portalWithPassword } from '../helpers/web.ts';
import { personWrites } from './inbox-person.ts';

const CONVERSATIONS = '/api/v1/external/messaging/conversations';
const HOUR = 3_600_000;

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The markup of one conversation's row in the list. */
function rowOf(html: string, id: string): string {
  const start = html.indexOf(`data-testid="conversation-${id}"`);
  assert.ok(start >= 0, `the list shows ${id}`);
  const next = html.indexOf('data-testid="conversation-', start + 1);
  return html.slice(start, next < 0 ? undefined : next);
}

for (const backend of backends()) {
  describe(`one conversation read model: API and inbox (${backend.name})`, () => {
    test('the same last message, unread count and window in the API and on the inbox', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const reacted = await personWrites(services, portalId, {
        phone: '+16505551001',
        firstName: 'Ada',
        text: 'is it shipped?',
        reaction: '👍',
      });
      // Written 23.5 h ago: the window closes within the hour.
      const closing = await personWrites(services, portalId, {
        phone: '+16505551002',
        text: 'thanks',
        agoMs: 23.5 * HOUR,
      });
      // Written 30 h ago: the window is closed.
      const closed = await personWrites(services, portalId, {
        phone: '+16505551003',
        text: 'hello?',
        agoMs: 30 * HOUR,
      });

      const res = await app.inject({
        url: CONVERSATIONS,
        headers: { authorization: portal.token },
      });
      assert.equal(res.statusCode, 200, res.body);
      const items = res.json<{ data: { items: Conversation[] } }>().data.items;
      const api = new Map(items.map((c) => [c.id, c]));
      assert.equal(api.size, 3);
      assert.equal(api.get(reacted.conversationId)!.lastMessage.type, 'reaction');
      assert.equal(api.get(reacted.conversationId)!.lastMessage.preview, '👍');
      assert.ok(api.get(closing.conversationId)!.windowExpiresAt, 'open for under an hour');
      assert.equal(api.get(closed.conversationId)!.windowExpiresAt, null, 'closed');

      const browser = new Browser(app);
      await browser.signIn(portal.email);
      const now = new Date();
      for (const url of ['/inbox', '/inbox/fragments/list']) {
        const page = await browser.get(url);
        assert.equal(page.statusCode, 200, url);
        for (const c of items) {
          const row = rowOf(page.body, c.id);
          const label = `${url} ${c.id}`;
          assert.ok(
            row.includes(`<span class="conv-preview">${escapeHtml(c.lastMessage.preview!)}</span>`),
            `${label}: the preview`,
          );
          assert.match(row, new RegExp(`>${c.unreadCount} unread<`), `${label}: unread`);
          assert.ok(
            row.includes(escapeHtml(windowWords(c.windowExpiresAt, now).words)),
            `${label}: window`,
          );
          assert.ok(row.includes(shortTime(c.lastMessage.at, now).iso), `${label}: the time`);
        }
      }
      assert.match(
        rowOf((await browser.get('/inbox')).body, closing.conversationId),
        /&lt; 1 h left/,
      );

      // The thread offers free text exactly while the API's window is open.
      for (const c of items) {
        const thread = await browser.get(`/inbox/${c.id}`);
        assert.equal(thread.statusCode, 200);
        assert.equal(/name="text"/.test(thread.body), c.windowExpiresAt !== null, c.id);
      }
    });
  });
}
