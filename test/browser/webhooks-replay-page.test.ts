/**
 * `/settings/webhooks` in real headless Chromium at 1280 px and 390 px, as the main administrator
 * clicks it: an endpoint added on the page (a real receiver on this machine), 55 tickets made
 * through the API (55 `ticket.created` deliveries), the history paged beyond the newest 50
 * ("Older deliveries", then back) and filtered by status; "Replay since…" beside the endpoint
 * queues the events again and the Replays card shows its progress until finished (the receiver
 * gets every event a second time, same `webhook-id`); failed-only then queues none. Removing the
 * endpoint confirms first. Every page passes pageProblems (no horizontal overflow, no serious or
 * critical axe-core violation).
 *
 * Screenshots: test-output/screenshots/webhooks-<step>-<width>.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  developmentSetup,
  pageProblems,
  portalWithAdmin,
  screenshot,
  startPortico,
} from '../helpers/browser.ts';
import { deadline } from '../helpers/deadlines.ts';
import { suiteCleanup } from '../helpers/spawn.ts';
import { startReceiver, type Receiver } from '../webhooks/receiver.ts';

const PASSWORD = 'correct horse battery staple';
const WIDTHS = [1280, 390] as const;
const TICKETS = 55;

describe('browser: replay and delivery history on /settings/webhooks at 1280 px and 390 px', () => {
  let browser: Browser;
  let appUrl: string;
  let apiUrl: string;
  const tokens = new Map<number, string>();
  const receivers = new Map<number, Receiver>();
  const suite = suiteCleanup();
  const emailAt = (width: number) => `hooks${width}@acme.test`;
  const codeAt = (width: number) => (width === 1280 ? '5861' : '5862');

  before(async () => {
    const setup = await developmentSetup(suite, { name: 'Portico (webhooks)' });
    appUrl = setup.appUrl;
    apiUrl = `http://127.0.0.1:${setup.port}/api/v1/external`;
    for (const width of WIDTHS) {
      const created = await portalWithAdmin(suite, setup.env, {
        email: emailAt(width),
        code: codeAt(width),
        password: PASSWORD,
      });
      tokens.set(width, (JSON.parse(created) as { token: string }).token);
      const receiver = await startReceiver(() => 204);
      suite.after(() => receiver.close());
      receivers.set(width, receiver);
    }
    await startPortico(suite, setup.env);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await suite.run();
  });

  async function look(page: Page, name: string, width: number) {
    await screenshot(page, `webhooks-${name}-${width}`);
    assert.deepEqual(await pageProblems(page), [], `${name} at ${width} px`);
  }

  /** Reload the page (at `path`) until `done` holds, within a deadline. */
  async function until(page: Page, path: string, what: string, done: () => Promise<boolean>) {
    const end = Date.now() + deadline(60_000);
    await page.goto(`${appUrl}${path}`);
    for (;;) {
      if (await done()) return;
      if (Date.now() >= end) {
        await screenshot(page, `webhooks-timeout`);
        assert.fail(`${what}: not seen in time`);
      }
      await new Promise((r) => setTimeout(r, 1000));
      // A reload: going to the same address with a #fragment would not load it again.
      await page.reload();
    }
  }

  for (const width of WIDTHS) {
    test(`replay since a time, its progress, and the paged history at ${width} px`, async () => {
      const receiver = receivers.get(width)!;
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${appUrl}/login`);
      await page.fill('#email', emailAt(width));
      await page.fill('#password', PASSWORD);
      await Promise.all([
        page.waitForURL(`${appUrl}/settings`),
        page.click('main button[type=submit]'),
      ]);
      await page.goto(`${appUrl}/settings/webhooks`);
      await page.fill('#f-url', receiver.url);
      await page.check('input[name=events][value="ticket.created"]');
      await Promise.all([
        page.waitForURL(/done=webhook_added/),
        page.click('form#add button[type=submit]'),
      ]);
      receiver.secrets.push(await page.locator('[data-testid=new-secret]').innerText());
      const sinceIso = new Date(Date.now() - 60_000).toISOString().slice(0, 16);

      for (let i = 0; i < TICKETS; i++) {
        const res = await fetch(`${apiUrl}/support/tickets`, {
          method: 'POST',
          headers: { authorization: tokens.get(width)!, 'content-type': 'application/json' },
          body: JSON.stringify({ subject: `Ticket ${i}`, description: 'A question.' }),
        });
        assert.equal(res.status, 201, await res.text());
      }
      await receiver.waitFor(TICKETS, deadline(60_000));
      assert.ok(
        receiver.received.every((r) => r.event !== null),
        'every delivery verifies',
      );

      // The history: 50 a page, newest first; the older ones on the next page.
      const rows = page.locator('[data-testid=deliveries] tbody tr');
      await until(page, '/settings/webhooks', 'deliveries succeeded', async () => {
        const text = await page.locator('[data-testid=deliveries]').innerText();
        return !/pending/.test(text) && (await rows.count()) === 50;
      });
      await look(page, 'history', width);
      await Promise.all([page.waitForURL(/after=/), page.click('[data-testid=older-deliveries]')]);
      assert.equal(await rows.count(), TICKETS - 50);
      assert.equal(await page.locator('[data-testid=older-deliveries]').count(), 0);
      await Promise.all([
        page.waitForURL((u) => !u.search.includes('after=')),
        page.click('[data-testid=newest-deliveries]'),
      ]);
      assert.equal(await rows.count(), 50);

      // The status filter.
      await page.selectOption('#f-status', 'failed');
      await Promise.all([
        page.waitForURL(/status=failed/),
        page.click('[data-testid=filter-deliveries]'),
      ]);
      assert.equal(await rows.count(), 0);
      await page.waitForSelector('text=No failed deliveries.');
      await page.selectOption('#f-status', 'succeeded');
      await Promise.all([
        page.waitForURL(/status=succeeded/),
        page.click('[data-testid=filter-deliveries]'),
      ]);
      assert.equal(await rows.count(), 50);
      await look(page, 'filtered', width);

      // "Replay since…" beside the endpoint, then its progress until finished.
      await page.goto(`${appUrl}/settings/webhooks`);
      const replay = page.locator('[data-testid^=replay-ep_]');
      await replay.locator('summary').click();
      await replay.locator('input[name=since]').fill(sinceIso);
      await look(page, 'replay-form', width);
      await Promise.all([
        page.waitForURL(/done=replay_started/),
        replay.locator('button[type=submit]').click(),
      ]);
      await page.waitForSelector(`text=The replay is queued: ${TICKETS} event(s).`);
      const progress = page.locator('[data-testid=replays] tbody tr').first();
      await until(page, '/settings/webhooks#replays', 'replay finished', async () =>
        /finished/.test(await progress.innerText()),
      );
      assert.match(
        await progress.locator('[data-testid=replay-progress]').innerText(),
        new RegExp(`${TICKETS} of ${TICKETS} done: ${TICKETS} delivered, 0 failed, 0 pending`),
      );
      await look(page, 'replay-finished', width);
      await receiver.waitFor(2 * TICKETS, deadline(30_000));
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      assert.equal(new Set(ids).size, TICKETS, 'the replay sent the same webhook-ids again');

      // Failed only: every event reached the endpoint, so none is queued.
      await replay.locator('summary').click();
      await replay.locator('input[name=since]').fill(sinceIso);
      await replay.locator('input[name=failedOnly]').check();
      await Promise.all([
        page.waitForURL(/done=replay_started/),
        replay.locator('button[type=submit]').click(),
      ]);
      await page.waitForSelector('text=The replay is queued: 0 event(s).');

      // Removing the endpoint confirms first; cancel keeps it.
      await Promise.all([
        page.waitForURL(/\/remove$/),
        page.click('[data-testid=endpoints] a:has-text("Remove")'),
      ]);
      await look(page, 'remove-confirm', width);
      await Promise.all([
        page.waitForURL(`${appUrl}/settings/webhooks`),
        page.click('a:has-text("Cancel")'),
      ]);
      assert.equal(await page.locator('[data-testid=endpoints] tbody tr').count(), 1);
      await context.close();
    });
  }
});
