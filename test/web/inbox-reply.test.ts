/**
 * The inbox's reply box once the service window closed, with a portal connected through the
 * sandbox provider: the thread says "Templates only" and offers the approved templates of the
 * number's WABA (no free text); free text is refused with the API's words above the form and
 * sends nothing; the chosen template with its variable is sent to the conversation's contact
 * from its business number, once for a repeated form.
 *
 * With the window open, the rich forms: buttons and a list refused in the page's words next to
 * their fields (no title, a title over the Cloud API's limit, duplicates, no list label), a
 * reaction not offered, a quote of a message that is none, and a file form with a forged CSRF
 * token: each sends nothing. Then buttons sent, a reaction, a quoted reply, each through the
 * API's send (the API reads back the kind object and `context`), and `/messages` shows the kinds.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { and, eq } from 'drizzle-orm';
import { conversations } from '../../src/db/schema/conversations.ts';
import { users } from '../../src/db/schema/index.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import { personWrites as personWritesIn } from '../helpers/inbound.ts';
import { GREETING, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, TEST_PASSWORD } from '../helpers/web.ts';
import { personWrites } from './inbox-person.ts';

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

/** The portal's user signed in on `m`'s app; a person writes from the sandbox phone now. */
async function openConversation(m: MessagingSetup) {
  const [user] = await m.services.storage.db
    .update(users)
    .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
    .where(eq(users.portalId, m.portalId))
    .returning({ email: users.email });
  const written = await personWritesIn(m, '16505551234', {
    type: 'text',
    text: { body: 'can I change my slot?' },
  });
  const [conversation] = await m.services.storage.db
    .select({ id: conversations.id })
    .from(conversations)
    .where(
      and(eq(conversations.portalId, m.portalId), eq(conversations.contactId, written.contactId)),
    );
  assert.ok(conversation, 'the conversation is stored');
  const browser = new Browser(m.app);
  await browser.signIn(user!.email);
  return { browser, url: `/inbox/${conversation.id}` };
}

async function outboundOf(m: MessagingSetup) {
  const log = await m.app.inject({
    url: '/api/v1/external/messaging/messages?direction=outbound',
    headers: { authorization: m.token },
  });
  return log.json<{ data: { items: Record<string, unknown>[] } }>().data.items;
}

const key = (c: string) => `web_${c.repeat(32)}`;

for (const backend of backends()) {
  describe(`/inbox rich replies, window open (${backend.name})`, () => {
    test('bad buttons, list, reaction, quote and file forms: a clear message, nothing sent', async (t) => {
      const m = await messagingSetup(t, backend);
      const { browser, url } = await openConversation(m);
      const page = await browser.get(url);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /data-testid="mode-buttons"/);
      assert.match(page.body, /data-testid="mode-list"/);
      const csrf = csrfOf(page.body);
      const inbound = /id="m-(msg_[0-9A-Za-z]+)"/.exec(page.body)?.[1];
      assert.ok(inbound, "the person's message is in the thread");
      assert.match(page.body, new RegExp(`href="${url}\\?quote=${inbound}#reply"`));

      const buttons = await browser.get(`${url}?compose=buttons`);
      assert.equal((buttons.body.match(/name="choice"/g) ?? []).length, 3);
      const refusals: [Record<string, string | string[]>, RegExp][] = [
        [
          { compose: 'buttons', text: 'Pick one', choice: ['', '', ''] },
          /id="r-button-1-error"[^>]*>Give at least one button a title/,
        ],
        [
          { compose: 'buttons', text: 'Pick one', choice: ['Yes', 'A title far over twenty'] },
          /id="r-button-2-error"[^>]*>At most 20 characters/,
        ],
        [
          { compose: 'buttons', text: 'Pick one', choice: ['Yes', 'Yes'] },
          /id="r-button-1-error"[^>]*>Give each button a different title/,
        ],
        [
          { compose: 'buttons', text: ' ', choice: ['Yes'] },
          /id="r-text-error"[^>]*>Write the message the buttons go with/,
        ],
        [
          { compose: 'list', text: 'Times', listButton: '', row: ['9:00'] },
          /id="r-list-button-error"[^>]*>Write the label/,
        ],
        [
          { compose: 'list', text: 'Times', listButton: 'See', row: ['', ''] },
          /id="r-row-1-error"[^>]*>Give the list at least one row/,
        ],
        [
          { compose: 'text', text: 'hi', context: 'not-a-message' },
          /role="alert"[^]*The quoted message is not one of this conversation/,
        ],
      ];
      for (const [form, words] of refusals) {
        const res = await browser.post(`${url}/reply`, { csrf, key: key('c'), ...form });
        assert.equal(res.statusCode, 400, JSON.stringify(form));
        assert.match(res.body, words, JSON.stringify(form));
      }
      // The values typed come back.
      const kept = await browser.post(`${url}/reply`, {
        csrf,
        compose: 'list',
        text: 'Which time suits you?',
        listButton: '',
        row: ['9:00', '14:00'],
      });
      assert.match(kept.body, /Which time suits you\?<\/textarea>/);
      assert.match(kept.body, /id="r-row-2"[^>]*value="14:00"|value="14:00"[^>]*id="r-row-2"/);

      const react = await browser.post(`${url}/react`, { csrf, messageId: inbound, emoji: '🦄' });
      assert.equal(react.statusCode, 400);
      assert.match(react.body, /role="alert"[^]*Choose one of the reactions offered/);
      const forged = await browser.post(`${url}/react`, {
        csrf: 'forged',
        messageId: inbound,
        emoji: '👍',
      });
      assert.equal(forged.statusCode, 403);

      const file = new FormData();
      file.append('csrf', 'forged');
      file.append('file', new File(['%PDF-1.4'], 'invoice.pdf'));
      const attach = await browser.postMultipart(`${url}/attach`, file);
      assert.equal(attach.statusCode, 403);

      const plain = await browser.post(`${url}/attach`, { csrf, caption: 'no file' });
      assert.equal(plain.statusCode, 415);
      assert.match(plain.body, /role="alert"[^]*Send the form with its file/);

      assert.deepEqual(await outboundOf(m), [], 'nothing was sent');
    });

    test('buttons, a reaction and a quoted reply are sent as the API sends them', async (t) => {
      const m = await messagingSetup(t, backend);
      const { browser, url } = await openConversation(m);
      const page = await browser.get(url);
      const csrf = csrfOf(page.body);
      const inbound = /id="m-(msg_[0-9A-Za-z]+)"/.exec(page.body)![1]!;

      const sent = await browser.post(`${url}/reply`, {
        csrf,
        key: key('d'),
        compose: 'buttons',
        text: 'Keep the slot?',
        choice: ['Confirm', 'Reschedule', ''],
      });
      assert.equal(
        sent.statusCode,
        303,
        /(role="alert"|field-error)[^]{0,400}/.exec(sent.body)?.[0],
      );
      const react = await browser.post(`${url}/react`, { csrf, messageId: inbound, emoji: '👍' });
      assert.equal(react.statusCode, 303, /role="alert"[^]{0,400}/.exec(react.body)?.[0]);
      assert.equal(react.headers.location, `${url}#m-${inbound}`);
      const quoting = await browser.get(`${url}?quote=${inbound}`);
      assert.match(quoting.body, /data-testid="quoting"[^]*can I change my slot\?/);
      assert.match(quoting.body, new RegExp(`name="context" value="${inbound}"`));
      const quoted = await browser.post(`${url}/reply`, {
        csrf,
        key: key('e'),
        compose: 'text',
        text: 'Yes, any time',
        context: inbound,
      });
      assert.equal(quoted.statusCode, 303, /role="alert"[^]{0,400}/.exec(quoted.body)?.[0]);

      const items = await outboundOf(m);
      const byType = (type: string) => items.filter((i) => i.type === type);
      assert.deepEqual(byType('interactive')[0]!.interactive, {
        type: 'button',
        body: { text: 'Keep the slot?' },
        action: {
          buttons: [
            { type: 'reply', reply: { id: 'button-1', title: 'Confirm' } },
            { type: 'reply', reply: { id: 'button-2', title: 'Reschedule' } },
          ],
        },
      });
      assert.deepEqual(byType('reaction')[0]!.reaction, { messageId: inbound, emoji: '👍' });
      assert.deepEqual(byType('text')[0]!.context, { messageId: inbound });

      const thread = await browser.get(url);
      assert.match(thread.body, /<button type="button" disabled>Reschedule<\/button>/);
      assert.match(thread.body, /class="reactions"[^]*👍[^]*from you/);
      const log = await browser.get('/messages');
      assert.match(log.body, /data-testid="kind-interactive"[^>]*>Buttons</);
      assert.match(log.body, /data-testid="kind-reaction"[^>]*>Reaction</);
    });

    test('a file: refused by its content with the reason, a PDF sent as a document', async (t) => {
      const m = await messagingSetup(t, backend);
      const { browser, url } = await openConversation(m);
      const page = await browser.get(`${url}?compose=file`);
      assert.match(page.body, /data-testid="attach-form"/);
      const csrf = csrfOf(page.body);
      const form = (caption: string, bytes: Buffer, name: string) => {
        const f = new FormData();
        f.append('csrf', csrf);
        f.append('key', key('f'));
        f.append('caption', caption);
        f.append('file', new File([new Uint8Array(bytes)], name));
        return f;
      };
      const exe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(510, 1)]);
      const refused = await browser.postMultipart(`${url}/attach`, form('Invoice', exe, 'x.pdf'));
      assert.equal(refused.statusCode, 415, refused.body.slice(0, 500));
      assert.match(refused.body, /id="r-file-error"/);
      assert.match(refused.body, /Invoice<\/textarea>/, 'the caption is kept');
      assert.deepEqual(await outboundOf(m), [], 'nothing was sent');

      const pdf = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
      const sent = await browser.postMultipart(
        `${url}/attach`,
        form('Your invoice', pdf, 'invoice-42.pdf'),
      );
      assert.equal(
        sent.statusCode,
        303,
        /(role="alert"|field-error)[^]{0,400}/.exec(sent.body)?.[0],
      );
      const [message] = await outboundOf(m);
      assert.equal(message!.type, 'document');
      const document = message!.document as Record<string, string>;
      assert.match(document.mediaId!, /^med_/);
      assert.equal(document.caption, 'Your invoice');
      assert.equal(document.filename, 'invoice-42.pdf');
      const thread = await browser.get(url);
      assert.match(
        thread.body,
        new RegExp(`href="/inbox/media/${document.mediaId}" download[^>]*>invoice-42.pdf<`),
      );
      const bytes = await browser.get(`/inbox/media/${document.mediaId}`);
      assert.equal(bytes.statusCode, 200);
      assert.equal(bytes.rawPayload.toString(), pdf.toString(), 'the page serves what was sent');
    });
  });
}
