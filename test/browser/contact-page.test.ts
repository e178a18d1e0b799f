/**
 * Real browser: headless Chromium (Debian's, driven by playwright-core) on a contact's page,
 * `/contacts/{id}`, of a portal connected through the sandbox provider, on both backends. A
 * person writes in from the sandbox phone (a signed webhook over real HTTP), so a contact and a
 * conversation exist; the administrator opens the contact from the list, sees the conversation
 * with its last message, edits the last name and an attribute, starts a conversation with an
 * approved template (the page's send: it appears in the conversation), opens an unknown
 * contact (the 404 page), and at 390 px erases the contact through its confirmation step.
 * Every page passes pageProblems (no horizontal overflow, no serious or critical axe-core
 * violation) at 1280 and 390 px, with no CSP violation.
 *
 * Screenshots: test-output/screenshots/contact-page-<step>-<width>.png (kept on failure).
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { chromium, type Browser, type Page } from 'playwright-core';
import { users } from '../../src/db/schema/index.ts';
import { hashPassword } from '../../src/platform/passwords.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH, pageProblems, screenshot } from '../helpers/browser.ts';
import { deadline } from '../helpers/deadlines.ts';
import { personWrites } from '../helpers/inbound.ts';
import { messagingSetup } from '../helpers/messaging.ts';
import { backends } from '../helpers/storage.ts';
import { TEST_PASSWORD } from '../helpers/web.ts';

const PERSON = '16505551234';

for (const backend of backends())
  describe(`browser: /contacts/{id} (${backend.name})`, () => {
    test('open from the list → conversation shown → edit a field and an attribute → send a template → 404 → erase with confirmation; 1280 and 390 px', async (t) => {
      const s = await messagingSetup(t, backend);
      const [admin] = await s.services.storage.db
        .select({ id: users.id, email: users.email })
        .from(users)
        .where(eq(users.portalId, s.portalId));
      assert.ok(admin);
      await s.services.storage.db
        .update(users)
        .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
        .where(eq(users.id, admin.id));
      const written = await personWrites(s, PERSON, {
        type: 'text',
        text: { body: 'Hello from Ada' },
      });
      await s.services.contacts.patchContact({ portalId: s.portalId }, written.contactId, {
        firstName: 'Ada',
        attributes: { plan: 'pro' },
      });
      const { port } = s.app.server.address() as { port: number };
      const base = `http://127.0.0.1:${port}`;
      const contactUrl = `${base}/contacts/${written.contactId}`;

      const browser: Browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        args: CHROMIUM_ARGS,
      });
      t.after(() => browser.close());
      const problems: string[] = [];
      const signedIn = async (width: number): Promise<Page> => {
        const context = await browser.newContext({ viewport: { width, height: 900 } });
        const page = await context.newPage();
        page.setDefaultTimeout(deadline(15_000));
        page.on('console', (m) => {
          if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
            problems.push(`${page.url()}: ${m.text()}`);
        });
        page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
        await page.goto(`${base}/contacts`);
        await page.fill('#email', admin.email);
        await page.fill('#password', TEST_PASSWORD);
        await Promise.all([
          page.waitForURL(`${base}/contacts`),
          page.click('main button[type=submit]'),
        ]);
        return page;
      };
      const look = async (page: Page, name: string, width: number) => {
        await screenshot(page, `contact-page-${name}-${width}`);
        assert.deepEqual(await pageProblems(page), [], `${name} at ${width} px`);
      };

      // 1280 px: from the list to the page.
      const page = await signedIn(1280);
      await Promise.all([
        page.waitForURL(contactUrl),
        page.click('[data-testid=contacts] a[data-testid=contact-link]'),
      ]);
      assert.equal(await page.textContent('h1'), 'Ada');
      const conversation = (await page.textContent('[data-testid=conversations]')) ?? '';
      assert.match(conversation, /They wrote · \d\d:\d\d: Hello from Ada/);
      assert.match(conversation, /Window open/);
      assert.equal(await page.inputValue('#a-0'), 'pro');
      await look(page, 'opened', 1280);

      // Edit a field.
      await page.fill('#f-lastName', 'Lovelace');
      await Promise.all([
        page.waitForURL(/done=contact_saved/),
        page.click('[data-testid=details-save]'),
      ]);
      assert.match((await page.textContent('[role=status]')) ?? '', /The details are saved\./);
      assert.equal(await page.textContent('h1'), 'Ada Lovelace');
      assert.equal(await page.inputValue('#f-lastName'), 'Lovelace');

      // Edit an attribute and add one.
      await page.fill('#a-0', 'enterprise');
      await page.fill('#a-new-key', 'region');
      await page.fill('#a-new-value', 'EMEA');
      await Promise.all([
        page.waitForURL(/done=attributes_saved/),
        page.click('[data-testid=attributes-save]'),
      ]);
      assert.match((await page.textContent('[role=status]')) ?? '', /The attributes are saved\./);
      const stored = await s.services.contacts.getContact(
        { portalId: s.portalId },
        written.contactId,
      );
      assert.equal(stored.lastName, 'Lovelace');
      assert.deepEqual(stored.attributes, { plan: 'enterprise', region: 'EMEA' });
      await look(page, 'edited', 1280);

      // Start a conversation with the approved `greeting` template, from the page.
      assert.match(
        (await page.textContent('[data-testid=template-body]')) ?? '',
        /Hello \{\{1\}\}/,
      );
      await page.fill('#c-parameter-1', 'Ada');
      await Promise.all([
        page.waitForURL(/done=contact_message_sent/),
        page.click('[data-testid=start-send]'),
      ]);
      assert.match((await page.textContent('[role=status]')) ?? '', /The template is queued/);
      // The delivery worker sends it; the conversation shows it from then on.
      const until = Date.now() + deadline(15_000);
      for (;;) {
        const text = (await page.textContent('[data-testid=conversations]')) ?? '';
        if (/You sent · \d\d:\d\d: Template greeting/.test(text)) break;
        assert.ok(
          Date.now() < until,
          `the sent template never showed in the conversation: ${text}`,
        );
        await delay(200);
        await page.reload();
      }
      await look(page, 'sent', 1280);

      // An unknown contact: the 404 page.
      const missing = await page.goto(`${base}/contacts/ctc_unknown`);
      assert.equal(missing?.status(), 404);
      assert.match((await page.textContent('main')) ?? '', /No such contact/);
      await look(page, 'not-found', 1280);
      await page.context().close();

      // 390 px: the page, the 404, then the erasure through its confirmation step.
      const phone = await signedIn(390);
      await phone.goto(contactUrl);
      await look(phone, 'opened', 390);
      await phone.goto(`${base}/contacts/ctc_unknown`);
      await look(phone, 'not-found', 390);
      await phone.goto(contactUrl);
      await Promise.all([
        phone.waitForURL(`${contactUrl}/delete`),
        phone.click('[data-testid=erase]'),
      ]);
      await look(phone, 'confirm-erase', 390);
      // Nothing is erased before the confirmation.
      assert.equal(
        (await s.services.contacts.getContact({ portalId: s.portalId }, written.contactId)).id,
        written.contactId,
      );
      await Promise.all([
        phone.waitForURL((u) => u.pathname === '/contacts'),
        phone.click('[data-testid=confirm]'),
      ]);
      assert.match((await phone.textContent('[role=status]')) ?? '', /erased/);
      await assert.rejects(
        s.services.contacts.getContact({ portalId: s.portalId }, written.contactId),
        /No contact/,
      );
      const gone = await phone.goto(contactUrl);
      assert.equal(gone?.status(), 404);
      assert.deepEqual(problems, [], 'no CSP violation or page error');
    });
  });
