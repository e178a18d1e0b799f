/**
 * The support round in real headless Chromium at 1280 px and 390 px, as new users make it: a
 * customer opens a ticket with the API; an agent created with the CLI signs in on
 * `/agent/login`, finds it in the queue, assigns it to themself, adds an internal note, replies
 * and sets it `pending`; the customer answers on `/support` (which reopens it); the agent solves
 * it; the customer closes it. Every page passes the tour's checks (pageProblems: no overflow,
 * no word broken in a table cell, no serious or critical axe-core violation) at both widths.
 *
 * Screenshots: test-output/screenshots/support-<page>-<width>.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  CHROMIUM_ARGS,
  developmentSetup,
  portalWithAdmin,
  CHROMIUM_PATH,
  cli,
  pageProblems,
  screenshot,
  startPortico,
} from '../helpers/browser.ts';
import { suiteCleanup } from '../helpers/spawn.ts';

const PASSWORD = 'correct horse battery staple';
const WIDTHS = [1280, 390] as const;
const NOTE = 'NOTE-MARKER-browser';

describe('browser: /support and the agent console at 1280 px and 390 px', () => {
  let browser: Browser;
  let appUrl: string;
  let token: string;
  const suite = suiteCleanup();
  const email = 'help@acme.test';
  const agentEmail = 'ada@operator.test';
  const problems: string[] = [];

  before(async () => {
    const setup = await developmentSetup(suite, { name: 'Portico (support)' });
    ({ appUrl } = setup);
    const { env } = setup;
    const created = await portalWithAdmin(suite, env, {
      email,
      code: '5454',
      password: PASSWORD,
    });
    token = (JSON.parse(created) as { token: string }).token;
    await cli(
      suite,
      env,
      ['agent', 'create', '--email', agentEmail, '--name', 'Ada'],
      `${PASSWORD}\n`,
    );
    await startPortico(suite, env);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await suite.run();
  });

  async function pageAt(width: number): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
        problems.push(`${page.url()}: ${m.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`${page.url()}: ${err.message}`));
    return page;
  }

  /** Screenshot, then every check of {@link pageProblems} and no form wider than its box. */
  async function look(page: Page, name: string, width: number) {
    await screenshot(page, `support-${name}-${width}`);
    const wideForms = await page.evaluate(() =>
      Array.from(document.querySelectorAll('form'))
        .filter((box) => box.scrollWidth > box.clientWidth + 1)
        .map((box) => `form ${box.scrollWidth}px > ${box.clientWidth}px`),
    );
    assert.deepEqual([...(await pageProblems(page)), ...wideForms], [], `${name} at ${width} px`);
  }

  async function api(path: string, init: RequestInit = {}) {
    const res = await fetch(`${appUrl}/api/v1/external${path}`, {
      ...init,
      headers: { authorization: token, 'content-type': 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, body: (await res.json()) as { data: Record<string, unknown> } };
  }

  for (const width of WIDTHS) {
    test(`the round at ${width} px`, async () => {
      const opened = await api('/support/tickets', {
        method: 'POST',
        body: JSON.stringify({ subject: `Sends fail (${width})`, description: 'Since 9:00.' }),
      });
      assert.equal(opened.status, 201);
      const id = opened.body.data.id as string;

      const agent = await pageAt(width);
      await agent.goto(`${appUrl}/agent/login`);
      await look(agent, 'agent-login', width);
      await agent.fill('#email', agentEmail);
      await agent.fill('#password', PASSWORD);
      await Promise.all([
        agent.waitForURL(`${appUrl}/agent`),
        agent.click('main button[type=submit]'),
      ]);
      await agent.goto(`${appUrl}/agent?assigned=none`);
      await look(agent, 'agent-queue', width);
      await Promise.all([
        agent.waitForURL(`${appUrl}/agent/tickets/${id}`),
        agent.click(`a[href="/agent/tickets/${id}"]`),
      ]);
      await agent.click('button:has-text("Assign to me")');
      await agent.waitForSelector('[data-testid=assignee]:has-text("Ada")');
      await agent.fill('#note', `${NOTE} check the sender`);
      await agent.click('button:has-text("Add note")');
      await agent.waitForSelector(`[data-kind=note]:has-text("${NOTE}")`);
      await agent.fill('#reply', 'Which number sends?');
      await agent.selectOption('#reply-status', 'pending');
      await agent.click('button:has-text("Send reply")');
      await agent.waitForSelector('[data-testid=status]:has-text("pending")');
      await look(agent, 'agent-ticket', width);

      // The customer reads the reply through the API, then answers on /support.
      const thread = await api(`/support/tickets/${id}/comments`);
      const items = thread.body.data.items as { body: string; author: { name: string } }[];
      assert.deepEqual(
        items.map((c) => [c.author.name, c.body]),
        [['Ada', 'Which number sends?']],
      );
      const customer = await pageAt(width);
      await customer.goto(`${appUrl}/login`);
      await customer.fill('#email', email);
      await customer.fill('#password', PASSWORD);
      await Promise.all([
        customer.waitForURL(`${appUrl}/settings`),
        customer.click('main button[type=submit]'),
      ]);
      await customer.goto(`${appUrl}/support`);
      await look(customer, 'list', width);
      await customer.click(`a[href="/support/tickets/${id}"]`);
      await customer.waitForSelector('[data-testid=status]:has-text("pending")');
      await customer.fill('#reply', 'The one ending 42.');
      await customer.click('button:has-text("Send reply")');
      await customer.waitForSelector('[data-testid=status]:has-text("open")');
      await look(customer, 'ticket', width);
      assert.ok(!(await customer.content()).includes(NOTE));

      await agent.reload();
      await agent.selectOption('#set-status', 'solved');
      await agent.click('button:has-text("Set status")');
      await agent.waitForSelector('[data-testid=status]:has-text("solved")');

      await customer.reload();
      await customer.click('button:has-text("Close ticket")');
      await customer.waitForSelector('[data-testid=confirm]');
      await look(customer, 'close-confirm', width);
      await customer.click('[data-testid=confirm]');
      await customer.waitForSelector('[data-testid=status]:has-text("closed")');
      await look(customer, 'closed', width);
      const final = await api(`/support/tickets/${id}`);
      assert.equal(final.body.data.status, 'closed');
      assert.ok(!JSON.stringify(final.body).includes(NOTE));
      await agent.context().close();
      await customer.context().close();
      assert.deepEqual(problems, []);
    });
  }
});
