/**
 * The callback's hardening: the state is bound to the session that started the flow
 * (item 5), and every failure of the callback ends on `/auth-error`, a storage failure included
 * (item 6).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { databaseFailureKind } from '../../src/platform/database-errors.ts';
import { backends } from '../helpers/storage.ts';
import {
  allow,
  buildFlowApp,
  callbackUrl,
  exchangeCalls,
  signedInBrowser,
  startAuthorization,
} from '../helpers/web-flow.ts';
import { csrfOf, isDeletion, portalWithPassword, setCookies } from '../helpers/web.ts';

const STATE_COOKIE = 'portico_oauth_state';

function assertRedirect(res: LightMyRequestResponse, location: string) {
  assert.equal(res.statusCode, 302, res.body);
  assert.equal(res.headers.location, location);
}

function stateCookieCleared(res: LightMyRequestResponse): boolean {
  return setCookies(res).some((c) => c.name === STATE_COOKIE && isDeletion(c));
}

for (const backend of backends()) {
  describe(`the state is bound to the session that started the flow (${backend.name})`, () => {
    test('A starts, B signs in on the same browser, A’s consent does not land in B’s portal', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const a = await signedInBrowser(flow);
      const b = await portalWithPassword(flow.services);
      const { state } = await startAuthorization(a.browser);
      // A's session cookie goes (it expired, or A signed out in another tab) while the state
      // cookie stays in the browser; then B signs in on the same browser.
      a.browser.jar.delete('portico_session');
      await a.browser.signIn(b.email);
      assert.equal(a.browser.jar.get(STATE_COOKIE), state, 'the browser still holds A’s state');
      const res = await a.browser.get(callbackUrl({ code: allow(flow), state }));
      assertRedirect(res, '/auth-error?reason=state');
      assert.ok(stateCookieCleared(res));
      assert.equal(exchangeCalls(flow).length, 0, 'no exchange');
      for (const portalId of [a.portal.portalId, b.portalId]) {
        const summary = await flow.services.partner.connectionSummary(portalId);
        assert.equal(summary.status, 'inactive', 'nothing connected anywhere');
      }
    });

    test('sign-out clears the state cookie; a kept copy still fails in the next session', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const a = await signedInBrowser(flow);
      const b = await portalWithPassword(flow.services);
      const { state } = await startAuthorization(a.browser);
      const settings = await a.browser.get('/settings');
      const out = await a.browser.post('/logout', { csrf: csrfOf(settings.body) });
      assert.ok(stateCookieCleared(out), 'sign-out deletes the state cookie');
      await a.browser.signIn(b.email);
      a.browser.jar.set(STATE_COOKIE, state); // a copy kept (another tab, a restored cookie)
      const res = await a.browser.get(callbackUrl({ code: allow(flow), state }));
      assertRedirect(res, '/auth-error?reason=state');
      assert.equal(exchangeCalls(flow).length, 0);
      assert.equal((await flow.services.partner.connectionSummary(b.portalId)).status, 'inactive');
    });

    test('the same session still completes, once; a newer start supersedes an older state', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser, portal } = await signedInBrowser(flow);
      const first = await startAuthorization(browser);
      const second = await startAuthorization(browser);
      browser.jar.set(STATE_COOKIE, first.state);
      const stale = await browser.get(callbackUrl({ code: allow(flow), state: first.state }));
      assertRedirect(stale, '/auth-error?reason=state');
      const again = await startAuthorization(browser);
      assert.notEqual(again.state, second.state);
      const ok = await browser.get(callbackUrl({ code: allow(flow), state: again.state }));
      assertRedirect(ok, '/authorized');
      assert.equal(
        (await flow.services.partner.connectionSummary(portal.portalId)).status,
        'active',
      );
    });
  });

  describe(`callback failures end on /auth-error (${backend.name})`, () => {
    test('storage gone before the session is read → /auth-error?reason=storage, not JSON 500', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      const code = allow(flow);
      await flow.services.storage.close();
      const res = await browser.get(callbackUrl({ code, state }));
      assertRedirect(res, '/auth-error?reason=storage');
      assert.ok(stateCookieCleared(res), 'the state cookie is cleared on this path too');
      assert.equal(exchangeCalls(flow).length, 0, 'no exchange without a session');
      const page = await browser.get('/auth-error?reason=storage');
      assert.equal(page.statusCode, 200, 'the landing page needs no storage');
    });

    test('a failing session read (not a lost connection) → storage as well', async (t) => {
      const flow = await buildFlowApp(t, backend);
      const { browser } = await signedInBrowser(flow);
      const { state } = await startAuthorization(browser);
      await flow.services.storage.db.execute(sql`alter table sessions rename to sessions_gone`);
      t.after(() =>
        flow.services.storage.db
          .execute(sql`alter table sessions_gone rename to sessions`)
          .catch(() => {}),
      );
      const res = await browser.get(callbackUrl({ code: allow(flow), state }));
      assertRedirect(res, '/auth-error?reason=storage');
      assert.ok(!res.body.includes('"error"'));
    });

    test('SQLSTATE 55000 (object not in prerequisite state) is unavailable, not a bug', async (t) => {
      const flow = await buildFlowApp(t, backend);
      // A real 55000 from the database: currval before any nextval in this session.
      const err = await flow.services.storage.db
        .execute(sql`select currval('portals_id_seq')`)
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(err, 'the database refused');
      assert.equal(databaseFailureKind(err), 'unavailable');
      assert.equal(databaseFailureKind({ code: '53300' }), 'unavailable', 'too many connections');
      assert.equal(databaseFailureKind({ code: '57P03' }), 'unavailable', 'cannot connect now');
      assert.equal(databaseFailureKind({ code: '42P01' }), null, 'a missing table is a bug');
    });
  });
}
