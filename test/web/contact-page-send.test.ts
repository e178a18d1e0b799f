/**
 * `/contacts/{id}`'s "Start a conversation" through `app.inject`, on both backends, with a
 * portal connected through the sandbox provider: the account's approved templates are offered;
 * a missing variable or a template the account does not offer comes back with its error and
 * sends nothing; a person who opted out is offered no form and a forged post is refused by the
 * messaging service's own check; a complete form queues the template to the contact (its
 * delivery, and the conversation it opens, are test/browser/contact-page.test.ts's).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { users } from '../../src/db/schema/index.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import { MESSAGES, messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, TEST_PASSWORD } from '../helpers/web.ts';

for (const backend of backends()) {
  describe(`/contacts/{id}: start a conversation (${backend.name})`, () => {
    test('a template to the contact, through the composer’s send and its checks', async (t) => {
      const s = await messagingSetup(t, backend, { workers: false });
      const [admin] = await s.services.storage.db
        .select({ id: users.id, email: users.email })
        .from(users)
        .where(eq(users.portalId, s.portalId));
      assert.ok(admin);
      await s.services.storage.db
        .update(users)
        .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
        .where(eq(users.id, admin.id));
      const principal = { portalId: s.portalId };
      const create = async (phone: string, whatsapp: 'opted_in' | 'opted_out') =>
        (
          await s.services.contacts.createContact({
            principal,
            input: { phone, firstName: 'Ada', consent: { whatsapp } },
          })
        ).body.data.id;
      const ada = await create('+16505551234', 'opted_in');
      const gone = await create('+16505550000', 'opted_out');
      const sentTo = async (contactId: string) => {
        const res = await s.app.inject({
          url: `${MESSAGES}?contactId=${contactId}`,
          headers: { authorization: s.token },
        });
        assert.equal(res.statusCode, 200, res.body);
        return res.json<{ data: { items: unknown[] } }>().data.items.length;
      };

      const browser = new Browser(s.app);
      await browser.signIn(admin.email);
      const page = await browser.get(`/contacts/${ada}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /data-testid="start-form"/);
      assert.match(page.body, /Hello \{\{1\}\}, thank you for your order\./);
      const compose = /name="compose" value="([^"]+)"/.exec(page.body)?.[1];
      assert.ok(compose, 'the form names its template');
      const from = /<option value="(\d+)"/.exec(page.body.split('id="s-from"')[1] ?? '')?.[1];
      assert.ok(from, 'a sender number is offered');
      const csrf = csrfOf(page.body);

      const missing = await browser.post(`/contacts/${ada}/send`, { csrf, compose, from });
      assert.equal(missing.statusCode, 400);
      assert.match(missing.body, /Fill in \{\{1\}\}\./);
      const unknown = await browser.post(`/contacts/${ada}/send`, {
        csrf,
        compose: 'no-such-template',
        from,
        parameter: 'Ada',
      });
      assert.equal(unknown.statusCode, 422);
      assert.match(unknown.body, /no longer approved/);
      assert.equal(await sentTo(ada), 0, 'nothing sent');

      const optedOut = await browser.get(`/contacts/${gone}`);
      assert.match(optedOut.body, /opted out of WhatsApp messages/);
      assert.doesNotMatch(optedOut.body, /data-testid="start-form"/);
      const forged = await browser.post(`/contacts/${gone}/send`, {
        csrf,
        compose,
        from,
        parameter: 'Ada',
      });
      assert.equal(forged.statusCode, 422);
      assert.match(forged.body, /opted out of WhatsApp messages/);
      assert.equal(await sentTo(gone), 0, 'nothing sent to the person who opted out');

      const sent = await browser.post(`/contacts/${ada}/send`, {
        csrf,
        compose,
        from,
        parameter: 'Ada',
      });
      assert.equal(sent.statusCode, 303, sent.body);
      assert.equal(
        sent.headers.location,
        `/contacts/${ada}?done=contact_message_sent#conversations`,
      );
      assert.equal(await sentTo(ada), 1);
      const after = await browser.get(sent.headers.location);
      assert.match(after.body, /The template is queued/);
      // Queued, not yet sent (no worker runs here): the conversation comes with its delivery.
      assert.match(after.body, /No conversation yet\./);
    });
  });
}
