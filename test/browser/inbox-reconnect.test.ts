/**
 * Real browser: headless Chromium on `/inbox`, reaching Portico through a TCP relay the test can
 * cut, as a network drop does. While the relay is down a person writes; once it is back, the
 * page's event stream reconnects by itself and the list shows the new conversation without a
 * reload (the server replays what changed since the last event id, and the page reloads its
 * list on reconnect).
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Socket } from 'node:net';
import { describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { notifyConversationChanges } from '../../src/messaging/store/conversation-changes.ts';
import { buildTestApp } from '../helpers/app.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH, freePort } from '../helpers/browser.ts';
import { backends } from '../helpers/storage.ts';
import { portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';
import { personWrites } from '../web/inbox-person.ts';

/** A TCP relay from `port` to `target` that can drop every connection and refuse new ones. */
async function relay(port: number, target: number) {
  const sockets = new Set<Socket>();
  let up = true;
  const server = createServer((client) => {
    if (!up) {
      client.destroy();
      return;
    }
    const upstream = connect(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    down() {
      up = false;
      for (const s of sockets) s.destroy();
    },
    up() {
      up = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

for (const backend of backends())
  describe(`browser: /inbox after a network drop (${backend.name})`, () => {
    test('the stream reconnects by itself and the list shows what arrived while it was down', async (t) => {
      const port = await freePort();
      const base = `http://localhost:${port}`;
      const { app, services } = await buildTestApp(t, backend, { APP_BASE_URL: base });
      const portal = await portalWithPassword(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const appPort = await freePort();
      await app.listen({ host: '127.0.0.1', port: appPort });
      const network = await relay(port, appPort);
      t.after(() => network.close());

      const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
      t.after(() => browser.close());
      const page = await (await browser.newContext()).newPage();
      page.setDefaultTimeout(30_000);
      await page.goto(`${base}/inbox`);
      await page.fill('#email', portal.email);
      await page.fill('#password', TEST_PASSWORD);
      await Promise.all([page.waitForURL(`${base}/inbox`), page.click('button[type=submit]')]);
      await page.waitForSelector('html[data-inbox-live]', { state: 'attached' });
      assert.ok(await page.isVisible('[data-testid=inbox-empty]'));

      // The network drops; a person writes meanwhile (the notification reaches no stream).
      network.down();
      await page.waitForSelector('html:not([data-inbox-live])', { state: 'attached' });
      const ada = await personWrites(services, portalId, {
        phone: '+16505551234',
        firstName: 'Ada',
        text: 'written while the page was offline',
        agoMs: 0,
      });
      await services.storage.db.transaction((tx) =>
        notifyConversationChanges(tx, [{ portalId, conversationId: ada.conversationId }]),
      );
      network.up();

      // The browser reconnects by itself; the list catches up without a reload.
      await page.waitForSelector('html[data-inbox-reconnected]', { state: 'attached' });
      const entry = await page.waitForSelector(`[data-testid=conversation-${ada.conversationId}]`);
      assert.match((await entry.textContent()) ?? '', /written while the page was offline/);
      assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation').length), 1);
    });
  });
