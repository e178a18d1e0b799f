/**
 * The inbox's reply box once the service window closed, with a portal connected through the
 * sandbox provider: the thread says "Templates only" and offers the approved templates of the
 * number's WABA (no free text); free text is refused with the API's words above the form and
 * sends nothing; the chosen template with its variable is sent to the conversation's contact
 * from its business number, once for a repeated form.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { users } from '../../src/db/schema/index.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import { GREETING, messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, TEST_PASSWORD } from '../helpers/web.ts';
import { personWrites } from './inbox.test.ts';

for (const backend of backends()) {
  describe(`/inbox reply, window closed (${backend.name})`, () => {
    test('templates only: free text refused, a template sent once to the contact', async (t) => {
      const m = await messagingSetup(t, backend);
      const [user] = await m.services.storage.db
        .update(users)
        .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
        .where(eq(users.portalId, m.portalId))
        .returning({ email: users.email });
      const person = await personWrites(m.services, m.portalId, {
        phone: '+16505551234',
        text: 'are you open tomorrow?',
        phoneNumberId: m.numbers[0]!,
        agoMs: 25 * 3_600_000,
      });
      const browser = new Browser(m.app);
      await browser.signIn(user!.email);
      const url = `/inbox/${person.conversationId}`;
      const page = await browser.get(url);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /data-testid="window"[^>]*>Templates only/);
      assert.doesNotMatch(page.body, /name="text"/, 'no free text once the window closed');
      assert.match(page.body, /<select id="r-compose"/);
      const greeting = new RegExp(`<option value="([^"]+)"[^>]*>${GREETING.name} \\(en_US\\)`);
      const templateId = greeting.exec(page.body)?.[1];
      assert.ok(templateId, 'the WABA approved greeting is offered');

      const csrf = csrfOf(page.body);
      const text = await browser.post(`${url}/reply`, {
        csrf,
        compose: 'text',
        text: 'Yes, from 9',
        key: `web_${'a'.repeat(32)}`,
      });
      assert.equal(text.statusCode, 422);
      assert.match(text.body, /role="alert"[^]*24 hours/);

      const chosen = await browser.get(`${url}?compose=${templateId}`);
      assert.match(chosen.body, /data-testid="template-body">Hello \{\{1\}\}/);
      const form = {
        csrf,
        compose: templateId,
        parameter: 'Ada',
        key: `web_${'b'.repeat(32)}`,
      };
      const sent = await browser.post(`${url}/reply`, form);
      assert.equal(sent.statusCode, 303, sent.body.slice(0, 500));
      assert.match(String(sent.headers.location), new RegExp(`^${url}#m-msg_`));
      const again = await browser.post(`${url}/reply`, form);
      assert.equal(again.headers.location, sent.headers.location, 'a repeated form sends once');

      const log = await m.app.inject({
        url: '/api/v1/external/messaging/messages?direction=outbound',
        headers: { authorization: m.token },
      });
      const items = log.json<{ data: { items: Record<string, unknown>[] } }>().data.items;
      assert.equal(items.length, 1);
      assert.equal(items[0]!.contactId, person.contactId);
      assert.equal(items[0]!.from, m.numbers[0]);
      assert.equal(items[0]!.type, 'template');
    });
  });
}
