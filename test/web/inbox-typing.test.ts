/**
 * The inbox's typing indicator, on both backends, through the sandbox over real HTTP: an open
 * conversation's reply box carries the hidden typing form; posting it (as the page's script does
 * when the agent starts typing) shows the person the business typing and marks their messages
 * read; a forged CSRF token or an unknown conversation sends nothing.
 *
 * @see https://developers.facebook.com/documentation/business-messaging/whatsapp/typing-indicators
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { users } from '../../src/db/schema/users.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import { personWrites, readState } from '../helpers/inbound.ts';
import { messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, TEST_PASSWORD } from '../helpers/web.ts';

const CONVERSATIONS = '/api/v1/external/messaging/conversations';

for (const backend of backends()) {
  describe(`/inbox typing indicator (${backend.name})`, () => {
    test('typing in the reply box shows the person the business typing', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const [admin] = await s.services.storage.db
        .update(users)
        .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
        .where(eq(users.portalId, s.portalId))
        .returning({ email: users.email });
      const person = '16505550301';
      const written = await personWrites(s, person);
      const listed = await s.app.inject({
        url: CONVERSATIONS,
        headers: { authorization: s.token },
      });
      const [conversation] = listed.json<{ data: { items: { id: string }[] } }>().data.items;
      const browser = new Browser(s.app);
      await browser.signIn(admin!.email);
      const url = `/inbox/${conversation!.id}`;
      const page = await browser.get(url);
      assert.equal(page.statusCode, 200);
      assert.match(
        page.body,
        new RegExp(`<form method="post" action="${url}/typing" data-typing="true" hidden>`),
      );
      const csrf = csrfOf(page.body);
      const sandbox = s.provider.sandbox.cloud;
      assert.equal(sandbox.isTyping(s.numbers[0]!, person), false);

      const forged = await browser.post(`${url}/typing`, { csrf: 'forged' });
      assert.notEqual(forged.statusCode, 204);
      const unknown = await browser.post('/inbox/cnv_nothing0000000000/typing', { csrf });
      assert.equal(unknown.statusCode, 404);
      assert.equal(sandbox.isTyping(s.numbers[0]!, person), false, 'nothing sent');

      const typed = await browser.post(`${url}/typing`, { csrf });
      assert.equal(typed.statusCode, 204, typed.body);
      assert.equal(sandbox.isTyping(s.numbers[0]!, person), true);
      assert.equal((await readState(s, written)).unread, 0, 'read with it, as the provider does');
    });
  });
}
