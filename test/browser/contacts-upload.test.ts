/**
 * Real browser: headless Chromium (Debian's, driven by playwright-core) on the contacts page of
 * Portico listening on localhost: sign in, upload a CSV, read the preview of its failures,
 * import, search, and erase a contact through the confirmation step. Screenshots land in
 * test-output/screenshots/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { SCREENSHOTS } from '../helpers/browser.ts';
import { backends } from '../helpers/storage.ts';
import { portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'];

const CSV =
  'phone,firstName,lastName,email,tags,plan\n' +
  '+1 650 555 1234,Ada,Lovelace,ada@example.test,vip;beta,pro\n' +
  '06 12 34 56 78,No,Country,,,\n' +
  '+44 20 7946 0958,Bob,Builder,,uk,\n' +
  '+33 6 12 34 56 78,Zoé,,not-an-email,,\n';

describe('browser: contacts CSV upload', () => {
  test('sign in → upload → preview of failures → import → search → erase', async (t) => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const { app, services } = await buildTestApp(t, backends()[0]!);
    const portal = await portalWithPassword(services);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const base = `http://localhost:${port}`;
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: CHROMIUM_ARGS,
    });
    t.after(() => browser.close());
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const problems: string[] = [];
    // A Content-Security-Policy violation shows up as a console error ("Refused to …").
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) {
        problems.push(m.text());
      }
    });
    page.on('pageerror', (err) => problems.push(err.message));

    await page.goto(`${base}/contacts`);
    assert.equal(new URL(page.url()).pathname, '/login');
    await page.fill('#email', portal.email);
    await page.fill('#password', TEST_PASSWORD);
    await Promise.all([page.waitForURL(`${base}/contacts`), page.click('button[type=submit]')]);
    assert.ok(await page.isVisible('[data-testid=no-contacts]'));

    await page.setInputFiles('input[type=file]', {
      name: 'contacts.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(CSV),
    });
    await Promise.all([
      page.waitForURL(`${base}/contacts/import`),
      page.click('text=Check the file'),
    ]);
    const summary = (await page.textContent('[data-testid=preview-summary]')) ?? '';
    assert.match(summary, /4 row\(s\), 2 ready to import, 2 will not be imported/);
    const failures = (await page.textContent('[data-testid=preview-failures]')) ?? '';
    assert.match(failures, /3phoneneeds a country code/);
    assert.match(failures, /5emailmust be an email address/);
    await page.screenshot({
      path: join(SCREENSHOTS, 'contacts-01-import-preview.png'),
      fullPage: true,
    });
    // Nothing is written before the confirmation.
    assert.deepEqual((await services.contacts.listContacts(portal, { limit: 10 })).items, []);

    await Promise.all([
      page.waitForURL((u) => u.pathname === '/contacts'),
      page.click('text=Import 2 contact(s)'),
    ]);
    assert.match(
      (await page.textContent('[role=status]')) ?? '',
      /2 created, 0 updated, 0 unchanged, 2 not imported/,
    );
    const rows = await page.$$eval('[data-testid=contacts] tbody tr', (trs) =>
      trs.map((tr) => tr.textContent ?? ''),
    );
    assert.equal(rows.length, 2);
    assert.ok(rows.some((r) => r.includes('+16505551234') && r.includes('Ada Lovelace')));
    await page.screenshot({ path: join(SCREENSHOTS, 'contacts-02-imported.png'), fullPage: true });

    await page.fill('#q', 'bob');
    await Promise.all([page.waitForURL(/q=bob/), page.click('button:has-text("Search")')]);
    const found = await page.$$eval('[data-testid=contacts] tbody tr', (trs) =>
      trs.map((tr) => tr.textContent ?? ''),
    );
    assert.equal(found.length, 1);
    assert.match(found[0]!, /\+442079460958/);

    await Promise.all([page.waitForURL(/\/delete$/), page.click('td a:has-text("Delete")')]);
    await page.screenshot({
      path: join(SCREENSHOTS, 'contacts-03-confirm-erase.png'),
      fullPage: true,
    });
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/contacts'),
      page.click('text=Delete for good'),
    ]);
    assert.match((await page.textContent('[role=status]')) ?? '', /erased/);
    const left = (await services.contacts.listContacts(portal, { limit: 10 })).items;
    assert.deepEqual(
      left.map((c) => c.phone),
      ['+16505551234'],
    );
    assert.deepEqual(problems, [], 'no CSP violation or page error');
  });
});
