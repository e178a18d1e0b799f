/**
 * Real browser: two members of one portal work `/inbox` at once in headless Chromium. The
 * agent has the conversation open; the administrator assigns it to the agent, marks it pending
 * and labels it with the thread's form, and the agent's open page shows the assignment, the
 * status and the label without a reload (the inbox's server-sent events). The agent's "Mine"
 * view lists it, "Unassigned" does not; opening the thread clears the agent's own unread badge
 * while the administrator's stays. At 1280 and 390 px: no horizontal overflow, no axe-core
 * violation of impact serious or critical, no CSP violation.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq, sql } from 'drizzle-orm';
import { chromium, type Browser, type Page } from 'playwright-core';
import { users } from '../../src/db/schema/users.ts';
import { buildTestApp } from '../helpers/app.ts';
import {
  CHROMIUM_ARGS,
  CHROMIUM_PATH,
  freePort,
  pageProblems,
  VIEWPORTS,
} from '../helpers/browser.ts';
import { deadline } from '../helpers/deadlines.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';
import { portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';
import { personWrites } from '../web/inbox-person.ts';

for (const backend of backends())
  describe(`browser: /inbox worked by a team (${backend.name})`, () => {
    test('an assignment by one member appears live on the other’s screen; mine and unassigned; own unread; 1280 and 390 px', async (t) => {
      const port = await freePort();
      const base = `http://localhost:${port}`;
      const { app, services } = await buildTestApp(t, backend);
      const portal = await portalWithPassword(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const agentEmail = `agent-${Math.random().toString(36).slice(2)}@example.test`;
      const agent = await services.accounts.createUser({
        portalCode: portal.portalCode,
        email: agentEmail,
        mainAdmin: false,
      });
      const [admin] = await services.storage.db
        .select({ hash: users.passwordHash })
        .from(users)
        .where(eq(users.id, portal.userId));
      await services.storage.db
        .update(users)
        .set({ passwordHash: admin!.hash })
        .where(eq(users.id, agent.userId));
      const ada = await personWrites(services, portalId, {
        phone: '+16505551234',
        firstName: 'Ada',
        text: 'hello from Ada',
      });
      await app.listen({ host: '127.0.0.1', port });

      const browser: Browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        args: CHROMIUM_ARGS,
      });
      t.after(() => browser.close());
      const problems: string[] = [];
      const signedIn = async (
        email: string,
        viewport: (typeof VIEWPORTS)[number],
        path: string,
      ): Promise<Page> => {
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        page.setDefaultTimeout(deadline(15_000));
        page.on('console', (m) => {
          if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text()))
            problems.push(m.text());
        });
        page.on('pageerror', (err) => problems.push(err.message));
        await page.goto(`${base}${path}`);
        await page.fill('#email', email);
        await page.fill('#password', TEST_PASSWORD);
        await Promise.all([page.waitForURL(`${base}${path}`), page.click('button[type=submit]')]);
        return page;
      };
      const live = (page: Page) =>
        page.waitForSelector('html[data-inbox-live]', { state: 'attached' });
      const thread = `/inbox/${ada.conversationId}`;

      const agentPage = await signedIn(agentEmail, VIEWPORTS[0], thread);
      await live(agentPage);
      // Opening the thread marks it read for the agent (the page's script posts it).
      await agentPage.waitForFunction(
        () => !document.querySelector('[data-testid^=conversation-] [data-testid=unread]'),
        undefined,
        { timeout: deadline(10_000) },
      );
      assert.equal(await agentPage.isVisible('[data-testid=assignee]'), false);

      const adminPage = await signedIn(portal.email, VIEWPORTS[0], '/inbox');
      const row = adminPage.locator(`[data-testid=conversation-${ada.conversationId}]`);
      assert.match((await row.textContent()) ?? '', /unread/, 'the admin has not read it');
      await Promise.all([adminPage.waitForURL(`${base}${thread}`), row.click()]);
      assert.deepEqual(await pageProblems(adminPage), [], 'the thread with its form at 1280 px');
      await adminPage.selectOption('#work-status', 'pending');
      await adminPage.selectOption('#work-assignee', `usr_${agent.userId}`);
      await adminPage.fill('#work-labels', 'billing, vip');
      await Promise.all([
        adminPage.waitForURL(`${base}${thread}`),
        adminPage.click('[data-testid=work-save]'),
      ]);
      assert.match(
        (await adminPage.textContent('[data-testid=work-badges]')) ?? '',
        new RegExp(`Pending[^]*Assigned: ${agentEmail}[^]*billing[^]*vip`),
      );

      // Live on the agent's screen, without a reload.
      await agentPage.waitForSelector('[data-testid=work-badges] [data-testid=assignee]', {
        timeout: deadline(5_000),
      });
      assert.match(
        (await agentPage.textContent('[data-testid=work-badges]')) ?? '',
        new RegExp(`Pending[^]*Assigned: ${agentEmail}[^]*billing`),
      );
      assert.equal(
        await agentPage.evaluate(() => performance.getEntriesByType('navigation').length),
        1,
        'no reload',
      );
      const audit = await queryRows<{ n: number }>(
        services.storage,
        sql`select count(*)::int as n from audit_events where portal_id = ${portalId}
            and action = 'conversation.assigned'`,
      );
      assert.equal(audit[0]!.n, 1);

      // The agent's views.
      await agentPage.click('[data-testid=view-mine]');
      await agentPage.waitForURL(`${base}/inbox?view=mine`);
      assert.equal(await agentPage.locator('[data-testid^=conversation-cnv_]').count(), 1);
      await agentPage.click('[data-testid=view-unassigned]');
      await agentPage.waitForURL(`${base}/inbox?view=unassigned`);
      assert.ok(await agentPage.isVisible('[data-testid=inbox-empty]'));
      await agentPage.goto(`${base}/inbox?label=vip&status=pending`);
      assert.equal(await agentPage.locator('[data-testid^=conversation-cnv_]').count(), 1);
      assert.deepEqual(await pageProblems(agentPage), [], 'the filtered list at 1280 px');

      // At 390 px: the list with its filters, and the thread with its form.
      const phone = await signedIn(agentEmail, VIEWPORTS[1], '/inbox');
      assert.deepEqual(await pageProblems(phone), [], 'the list at 390 px');
      await phone.goto(`${base}${thread}`);
      assert.ok(await phone.isVisible('[data-testid=work-form]'));
      assert.deepEqual(await pageProblems(phone), [], 'the thread at 390 px');
      assert.deepEqual(problems, []);
    });
  });
