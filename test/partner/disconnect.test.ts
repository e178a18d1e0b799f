import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { listAuditEvents } from '../../src/audit/audit-log.ts';
import { connections } from '../../src/db/schema/index.ts';
import { revocationWords } from '../../src/partner/revocation/revocation.ts';
import { backends } from '../helpers/storage.ts';
import {
  allow,
  buildFlowApp,
  callbackUrl,
  signedInBrowser,
  startAuthorization,
  type FlowApp,
} from '../helpers/web-flow.ts';
import { Browser, csrfOf } from '../helpers/web.ts';

async function connect(flow: FlowApp, browser: Browser) {
  const { state } = await startAuthorization(browser);
  const res = await browser.get(callbackUrl({ code: allow(flow), state }));
  assert.equal(res.headers.location, '/authorized');
}

for (const backend of backends()) {
  describe(`POST /api/auth/partner/disconnect (${backend.name})`, () => {
    test('Disconnect on settings: inactive, ciphertext gone, one audit record by that user, shown newest first', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      await connect(flow, browser);
      assert.match((await browser.get('/settings')).body, /href="\/settings\/disconnect"/);
      // The confirmation page says what stops working and holds the form.
      const settings = await browser.get('/settings/disconnect');
      assert.match(settings.body, /action="\/api\/auth\/partner\/disconnect"/);
      const res = await browser.post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: csrfOf(settings.body),
      });
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/settings?done=disconnected');
      const [row] = await flow.services.storage.db
        .select()
        .from(connections)
        .where(eq(connections.portalId, portal.portalId));
      assert.equal(row?.status, 'inactive');
      assert.equal(row?.token, null);
      const events = await listAuditEvents(flow.services.storage.db, portal.portalId);
      const revocations = events.filter((e) => e.action === 'connection.revoked');
      assert.equal(revocations.length, 1);
      assert.equal(revocations[0]!.actorType, 'user');
      assert.equal(revocations[0]!.actorId, String(portal.userId));
      // The disconnect's words, from its reason code (the webhook carries the code).
      assert.equal(revocations[0]!.reason, revocationWords('disconnect'));
      assert.equal(revocations[0]!.reason, 'disconnected by a user in Portico');
      assert.equal(events[0]!.action, 'connection.revoked', 'newest first');

      const after = await browser.get('/settings?done=disconnected');
      assert.match(after.body, /Your provider account is disconnected/);
      assert.match(after.body, /data-testid="connection-status">Not connected/);
      const audit = after.body.slice(after.body.indexOf('id="audit"'));
      assert.ok(
        audit.indexOf('Provider account disconnected') <
          audit.indexOf('Provider account connected'),
        'newest first on the page',
      );

      // Again: idempotent, no second record.
      const again = await browser.post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: csrfOf(after.body),
      });
      assert.equal(again.headers.location, '/settings?done=not-connected');
      const events2 = await listAuditEvents(flow.services.storage.db, portal.portalId);
      assert.equal(events2.filter((e) => e.action === 'connection.revoked').length, 1);
    });

    test('without the CSRF token nothing changes; without a session → /login', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      await connect(flow, browser);
      for (const csrf of [undefined, '', 'forged']) {
        const res = await browser.post('/api/auth/partner/disconnect', { confirm: 'yes', csrf });
        assert.equal(res.statusCode, 403);
      }
      const anon = await new Browser(flow.app).post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: 'x',
      });
      assert.equal(anon.statusCode, 303);
      assert.equal(anon.headers.location, '/login?next=%2Fsettings');
      const summary = await flow.services.partner.connectionSummary(portal.portalId);
      assert.equal(summary.status, 'active');
    });

    test('a user disconnects only their own portal', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const a = await signedInBrowser(flow);
      const b = await signedInBrowser(flow);
      await connect(flow, a.browser);
      await connect(flow, b.browser);
      const page = await b.browser.get('/settings');
      await b.browser.post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: csrfOf(page.body),
      });
      assert.equal(
        (await flow.services.partner.connectionSummary(a.portal.portalId)).status,
        'active',
      );
      assert.equal(
        (await flow.services.partner.connectionSummary(b.portal.portalId)).status,
        'inactive',
      );
    });
  });
}
