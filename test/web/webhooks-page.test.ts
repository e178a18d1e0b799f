/**
 * `/settings/webhooks`: the main administrator adds an endpoint (secret shown once),
 * sends a test event, sees the delivery and resends it; bad input and other users change
 * nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { Browser, csrfOf, portalWithPassword, TEST_PASSWORD } from '../helpers/web.ts';
import { eventually, startReceiver } from '../webhooks/receiver.ts';

const FAST = {
  retryScheduleMs: [0, 50],
  attemptTimeoutMs: 2_000,
  addressPolicy: 'development-any-address' as const,
};

for (const backend of backends()) {
  describe(`/settings/webhooks (${backend.name})`, () => {
    test('add, test, see the delivery, resend; refusals change nothing', async (t) => {
      const { app, services } = await buildTestApp(t, backend, {}, {}, { webhooks: FAST });
      await services.webhooks.start();
      await services.webhooks.startWorker();
      const receiver = await startReceiver();
      t.after(() => receiver.close());
      const admin = await portalWithPassword(services);
      const portalId = await services.accounts.portalIdFor(admin.portalCode);
      const browser = new Browser(app);
      await browser.signIn(admin.email);

      const page = await browser.get('/settings/webhooks');
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /No endpoints yet/);

      const refused = await browser.post('/settings/webhooks', {
        csrf: csrfOf(page.body),
        url: 'ftp://example.com/',
        events: 'ticket.created',
      });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /must use https:/);
      // The error sits beside the field it concerns, and what was typed is kept.
      assert.match(refused.body, /id="f-url"[^>]*aria-invalid="true"/);
      assert.match(refused.body, /value="ftp:\/\/example.com\/"/);
      assert.match(refused.body, /value="ticket.created" checked/);
      assert.deepEqual(await services.webhooks.listEndpoints(portalId), []);

      const added = await browser.post('/settings/webhooks', {
        csrf: csrfOf(page.body),
        url: receiver.url,
        events: 'ticket.created',
      });
      // POST → 303 → GET: a reload of the page is a GET, never a re-posted form.
      assert.equal(added.statusCode, 303);
      assert.equal(added.headers.location, '/settings/webhooks?done=webhook_added');
      const shown = await browser.get(String(added.headers.location));
      const secret = /data-testid="new-secret">(whsec_[^<]+)</.exec(shown.body)?.[1];
      assert.ok(secret, 'the secret is shown once');
      assert.match(shown.body, /allowed because Portico runs in development/);
      const reloaded = await browser.get(String(added.headers.location));
      assert.equal(reloaded.statusCode, 200);
      assert.ok(!reloaded.body.includes(secret), 'a reload does not show it again');
      receiver.secrets.push(secret);
      const again = await browser.get('/settings/webhooks');
      assert.ok(!again.body.includes(secret), 'and never again');
      const [endpoint] = await services.webhooks.listEndpoints(portalId);

      const sent = await browser.post(`/settings/webhooks/${endpoint!.id}/test`, {
        csrf: csrfOf(again.body),
      });
      assert.equal(sent.statusCode, 303);
      const [first] = await receiver.waitFor(1);
      assert.equal(first!.event?.type, 'webhook.test');
      const [delivery] = await eventually(async () => {
        const d = await services.webhooks.recentDeliveries(portalId);
        return d[0]?.status === 'succeeded' && d;
      });
      const listed = await browser.get('/settings/webhooks');
      assert.match(listed.body, /data-testid="deliveries"/);
      assert.match(listed.body, new RegExp(`/settings/webhooks/deliveries/${delivery!.id}/resend`));

      const resent = await browser.post(`/settings/webhooks/deliveries/${delivery!.id}/resend`, {
        csrf: csrfOf(listed.body),
      });
      assert.equal(resent.statusCode, 303);
      const [, second] = await receiver.waitFor(2);
      assert.equal(second!.headers['webhook-id'], first!.headers['webhook-id']);

      const forged = await browser.post(`/settings/webhooks/${endpoint!.id}/remove`, {
        csrf: 'wrong',
      });
      assert.equal(forged.statusCode, 403);
      assert.equal((await services.webhooks.listEndpoints(portalId)).length, 1);

      // An ordinary user of the portal sees nothing and changes nothing.
      const email = `agent-${Math.random().toString(36).slice(2)}@example.test`;
      await services.accounts.createUser({ portalCode: admin.portalCode, email, mainAdmin: false });
      await services.accounts.setPassword({
        portalCode: admin.portalCode,
        email,
        password: TEST_PASSWORD,
      });
      const agent = new Browser(app);
      await agent.signIn(email);
      const agentPage = await agent.get('/settings/webhooks');
      assert.equal(agentPage.statusCode, 403);
      const settings = await agent.get('/settings');
      const agentRemove = await agent.post(`/settings/webhooks/${endpoint!.id}/remove`, {
        csrf: csrfOf(settings.body),
      });
      assert.equal(agentRemove.statusCode, 403);
      assert.equal((await services.webhooks.listEndpoints(portalId)).length, 1);

      // Remove goes through its confirmation step: unconfirmed, the form goes back there.
      const unconfirmed = await browser.post(`/settings/webhooks/${endpoint!.id}/remove`, {
        csrf: csrfOf(listed.body),
      });
      assert.equal(unconfirmed.statusCode, 303);
      assert.equal(unconfirmed.headers.location, `/settings/webhooks/${endpoint!.id}/remove`);
      assert.equal((await services.webhooks.listEndpoints(portalId)).length, 1);
      const confirmPage = await browser.get(`/settings/webhooks/${endpoint!.id}/remove`);
      assert.match(confirmPage.body, /delivery history is deleted/);
      const removed = await browser.post(`/settings/webhooks/${endpoint!.id}/remove`, {
        csrf: csrfOf(confirmPage.body),
        confirm: 'yes',
      });
      assert.equal(removed.statusCode, 303);
      assert.deepEqual(await services.webhooks.listEndpoints(portalId), []);
    });
  });
}
