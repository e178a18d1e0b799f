/**
 * The team in real headless Chromium at 1280 px and 390 px, against Portico started as
 * `npm start` would (its storage as the environment gives it: PGlite, or PostgreSQL when
 * TEST_DATABASE_URL is set): the administrator invites an agent from `/settings/team`, the agent
 * opens the one-time link in a browser of their own, sets a password and lands signed in on the
 * inbox; the agent gets the 403 page on `/settings/webhooks` and `/settings/keys`, sets
 * themselves away; the administrator disables them (a confirmation first) and the agent's next
 * page is the sign-in page. The CLI's `user invite` and `user list --json` work on the same
 * portal. Every page passes pageProblems (no horizontal overflow, no serious or critical axe-core
 * violation).
 *
 * Screenshots: test-output/screenshots/team-<step>-<width>.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  cli,
  developmentSetup,
  pageProblems,
  portalWithAdmin,
  screenshot,
  startPortico,
} from '../helpers/browser.ts';
import { suiteCleanup } from '../helpers/spawn.ts';

const PASSWORD = 'correct horse battery staple';
const AGENT_PASSWORD = 'an agent passphrase of length';
const WIDTHS = [1280, 390] as const;

describe('browser: /settings/team at 1280 px and 390 px', () => {
  let browser: Browser;
  let appUrl: string;
  let env: NodeJS.ProcessEnv;
  const suite = suiteCleanup();
  const adminAt = (width: number) => `team-admin${width}@acme.test`;
  const agentAt = (width: number) => `team-agent${width}@acme.test`;
  const codeAt = (width: number) => (width === 1280 ? '5771' : '5772');

  before(async () => {
    const setup = await developmentSetup(suite, { name: 'Portico (team)' });
    appUrl = setup.appUrl;
    env = setup.env;
    for (const width of WIDTHS)
      await portalWithAdmin(suite, setup.env, {
        email: adminAt(width),
        code: codeAt(width),
        password: PASSWORD,
      });
    await startPortico(suite, setup.env);
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await suite.run();
  });

  async function look(page: Page, name: string, width: number) {
    await screenshot(page, `team-${name}-${width}`);
    assert.deepEqual(await pageProblems(page), [], `${name} at ${width} px`);
  }

  for (const width of WIDTHS) {
    test(`invite an agent, the agent joins and is refused the settings, disable signs them out at ${width} px`, async () => {
      const adminContext = await browser.newContext({ viewport: { width, height: 900 } });
      const admin = await adminContext.newPage();
      await admin.goto(`${appUrl}/login`);
      await admin.fill('#email', adminAt(width));
      await admin.fill('#password', PASSWORD);
      await Promise.all([
        admin.waitForURL(`${appUrl}/settings`),
        admin.click('main button[type=submit]'),
      ]);
      await admin.goto(`${appUrl}/settings/team`);
      await look(admin, 'list', width);

      await admin.fill('#f-email', agentAt(width));
      await admin.selectOption('#f-role', 'agent');
      await Promise.all([
        admin.waitForURL(/\/settings\/team\?done=member_invited/),
        admin.click('[data-testid=invite]'),
      ]);
      const link = await admin.locator('[data-testid=invitation-link]').inputValue();
      assert.match(link, new RegExp(`^${appUrl}/invite/[A-Za-z0-9_-]{43}$`));
      await look(admin, 'invited', width);
      await admin.reload();
      assert.equal(await admin.locator('[data-testid=invitation-link]').count(), 0, 'once');

      // The agent, in a browser of their own.
      const agentContext = await browser.newContext({ viewport: { width, height: 900 } });
      const agent = await agentContext.newPage();
      await agent.goto(link);
      await look(agent, 'accept', width);
      await agent.fill('#password', AGENT_PASSWORD);
      await agent.fill('#password2', AGENT_PASSWORD);
      await Promise.all([agent.waitForURL(`${appUrl}/inbox`), agent.click('[data-testid=accept]')]);
      assert.match(await agent.locator('.who').first().innerText(), new RegExp(agentAt(width)));

      for (const path of ['/settings/webhooks', '/settings/keys']) {
        const res = await agent.goto(`${appUrl}${path}`);
        assert.equal(res?.status(), 403, path);
        assert.match(await agent.locator('main').innerText(), /Only an administrator/);
      }
      await look(agent, 'refused', width);

      await agent.goto(`${appUrl}/settings/team`);
      await Promise.all([
        agent.waitForURL(/done=availability/),
        agent.click('[data-testid=toggle-availability]'),
      ]);
      assert.equal(await agent.locator('[data-testid=my-availability]').innerText(), 'away');
      await look(agent, 'agent-team', width);

      // The link worked once.
      const again = await (await browser.newContext()).newPage();
      const reopened = await again.goto(link);
      assert.equal(reopened?.status(), 404);

      // Disable, after its confirmation step.
      await admin.goto(`${appUrl}/settings/team`);
      const row = admin.locator('[data-testid=members] tr', { hasText: agentAt(width) });
      assert.match(await row.innerText(), /away/);
      await Promise.all([
        admin.waitForURL(/\/settings\/team\/\d+\/disable$/),
        row.locator('a', { hasText: 'Disable' }).click(),
      ]);
      await look(admin, 'disable-confirm', width);
      await Promise.all([
        admin.waitForURL(/done=member_disabled/),
        admin.click('[data-testid=confirm]'),
      ]);
      assert.match(await row.innerText(), /disabled/);

      await agent.goto(`${appUrl}/inbox`);
      assert.match(agent.url(), /\/login\?next=%2Finbox$/, 'the agent is signed out');

      // The CLI sees the same team.
      const listed = JSON.parse(
        await cli(suite, env, ['user', 'list', '--portal', codeAt(width), '--json']),
      ) as { userId: number; email: string; role: string; status: string }[];
      assert.deepEqual(
        listed.map((m) => [m.email, m.role, m.status]),
        [
          [adminAt(width), 'admin', 'active'],
          [agentAt(width), 'agent', 'disabled'],
        ],
      );
      await adminContext.close();
      await agentContext.close();
    });
  }

  test('user invite prints a one-time link that a browser accepts; bad input is refused', async () => {
    const code = codeAt(1280);
    const printed = await cli(suite, env, [
      'user',
      'invite',
      '--portal',
      code,
      '--email',
      'cli-admin@acme.test',
      '--role',
      'admin',
    ]);
    const link = /(http:\/\/\S+\/invite\/[A-Za-z0-9_-]{43})/.exec(printed)?.[1];
    assert.ok(link, printed);
    const page = await (await browser.newContext()).newPage();
    await page.goto(link);
    assert.match(await page.locator('main').innerText(), /invited as an administrator/);
    await page.fill('#password', AGENT_PASSWORD);
    await page.fill('#password2', AGENT_PASSWORD);
    await Promise.all([page.waitForURL(`${appUrl}/inbox`), page.click('[data-testid=accept]')]);
    const res = await page.goto(`${appUrl}/settings/keys`);
    assert.equal(res?.status(), 200, 'an admin may');

    await assert.rejects(
      cli(suite, env, [
        'user',
        'invite',
        '--portal',
        code,
        '--email',
        'x@acme.test',
        '--role',
        'boss',
      ]),
      /Choose a role: admin or agent/,
    );
    await assert.rejects(
      cli(suite, env, [
        'user',
        'invite',
        '--portal',
        code,
        '--email',
        'cli-admin@acme.test',
        '--role',
        'agent',
      ]),
      /already exists/,
    );
  });
});
