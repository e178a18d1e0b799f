/**
 * Security invariant 1 (docs/security.md), end to end: run the whole browser side of the flow (success,
 * mismatch, cancel, declined permission, replay, disconnect) with trace logging, then look for
 * the authorization codes, the states, the app secret and the access token in every log line,
 * every response header and body, and every row of every table. Only ciphertext may be stored.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql, type SQL } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import type { Database } from '../../src/db/client.ts';
import { connections } from '../../src/db/schema/index.ts';
import { createKeyring, parseKeySpec } from '../../src/platform/keyring.ts';
import { backends } from '../helpers/storage.ts';
import {
  allow,
  buildFlowApp,
  callbackUrl,
  signedInBrowser,
  startAuthorization,
} from '../helpers/web-flow.ts';
import { csrfOf } from '../helpers/web.ts';

/** Every row of every table of the public schema, as JSON text. */
async function dumpDatabase(db: Database) {
  const rowsOf = async <T>(query: SQL): Promise<T[]> => {
    // node-postgres and PGlite both answer `{ rows }`.
    const result: unknown = await db.execute(query);
    return (result as { rows: T[] }).rows;
  };
  const tables = await rowsOf<{ table_name: string }>(
    sql`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
  );
  const dump: Record<string, unknown[]> = {};
  for (const { table_name } of tables) {
    dump[table_name] = await rowsOf(sql.raw(`select * from "${table_name}"`));
  }
  return JSON.stringify(dump);
}

function responseText(res: LightMyRequestResponse, omitHeaders: string[] = []): string {
  const headers = Object.fromEntries(
    Object.entries(res.headers).filter(([name]) => !omitHeaders.includes(name)),
  );
  return `${JSON.stringify(headers)}\n${res.body}`;
}

for (const backend of backends()) {
  describe(`secret scan of the whole flow (${backend.name})`, () => {
    test('codes, states, the app secret and the access token appear nowhere', async (t) => {
      const flow = await buildFlowApp(t, backend, { env: { LOG_LEVEL: 'trace' } });
      const { browser, portal } = await signedInBrowser(flow);
      const codes: string[] = [];
      const states: string[] = [];
      /** Responses that legitimately carry a state: start's Location and Set-Cookie. */
      const starts = new Set<LightMyRequestResponse>();
      const start = async () => {
        const s = await startAuthorization(browser);
        states.push(s.state);
        starts.add(s.start);
        return s.state;
      };
      const code = () => {
        const c = allow(flow);
        codes.push(c);
        return c;
      };

      // A mismatched state, a cancellation, a declined permission, then success and a replay.
      await start();
      await browser.get(callbackUrl({ code: code(), state: `${states[0]}x` }));
      const cancelled = await start();
      await browser.get(callbackUrl({ error: 'access_denied', state: cancelled }));
      const declined = await start();
      const partial = flow.sandbox.authorize({
        appId: flow.appId,
        redirectUri: 'http://localhost:3999/api/auth/partner/callback',
        permissions: ['business_management'],
      });
      codes.push(partial);
      await browser.get(callbackUrl({ code: partial, state: declined }));
      const good = await start();
      const success = await browser.get(callbackUrl({ code: code(), state: good }));
      assert.equal(success.headers.location, '/authorized');
      await browser.get(callbackUrl({ code: codes.at(-1)!, state: good }));
      await browser.get('/authorized');
      await browser.get('/settings');

      // The access token, as only partner/ would see it, to know what to look for.
      const [row] = await flow.services.storage.db
        .select()
        .from(connections)
        .where(sql`${connections.portalId} = ${portal.portalId}`);
      assert.ok(row?.token);
      const accessToken = createKeyring(parseKeySpec(flow.encryptionKeys)).open(
        row.token,
        portal.portalId,
      );
      assert.ok(accessToken.length >= 16);

      const dbBeforeDisconnect = await dumpDatabase(flow.services.storage.db);
      assert.ok(dbBeforeDisconnect.includes(row.token.ciphertext), 'the ciphertext is stored');

      const settings = await browser.get('/settings');
      await browser.post('/api/auth/partner/disconnect', {
        confirm: 'yes',
        csrf: csrfOf(settings.body),
      });
      const dbAfter = await dumpDatabase(flow.services.storage.db);
      assert.ok(!dbAfter.includes(row.token.ciphertext), 'revocation deletes the ciphertext');

      const secrets: [string, string][] = [
        ...codes.map((c, i) => [`authorization code ${i}`, c] as [string, string]),
        ...states.map((s, i) => [`state ${i}`, s] as [string, string]),
        ['app secret', flow.appSecret],
        ['access token', accessToken],
      ];
      const places: [string, string][] = [
        ['logs', flow.logs.join('\n')],
        ['database (connected)', dbBeforeDisconnect],
        ['database (disconnected)', dbAfter],
        ...browser.responses.map(
          (res, i) =>
            [
              `response ${i}`,
              responseText(res, starts.has(res) ? ['location', 'set-cookie'] : []),
            ] as [string, string],
        ),
      ];
      assert.ok(
        flow.logs.some((l) => l.includes('/api/auth/partner/callback')),
        'logs captured',
      );
      assert.ok(flow.logs.length > 20);
      for (const [what, secret] of secrets) {
        for (const [where, text] of places) {
          assert.ok(!text.includes(secret), `${what} found in ${where}`);
        }
      }
      // Start's Location carries the state only as the `state` parameter, and never the secret.
      for (const res of starts) {
        assert.ok(!String(res.headers.location).includes(flow.appSecret));
      }
    });
  });
}
