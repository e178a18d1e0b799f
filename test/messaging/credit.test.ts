/**
 * The credit ledger and the queue's set-up on both backends: top-ups, the credit routes, a send
 * refused without a connection (nothing queued or reserved), concurrent reservations that never
 * overdraw.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { readCredit, reserve } from '../../src/messaging/credit/credit-ledger.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const API = '/api/v1/external/messaging';

for (const backend of backends()) {
  describe(`messaging credit (${backend.name})`, () => {
    test('top-ups show in /credit and /credit/transactions; audited without secrets', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      const empty = await app.inject({
        url: `${API}/credit`,
        headers: { authorization: portal.token },
      });
      assert.equal(empty.statusCode, 200);
      assert.deepEqual(empty.json().data, { balance: 0, reserved: 0, currency: 'EUR' });

      await services.messaging.addCredit({
        portalId,
        amount: 500,
        note: 'first',
        actor: CLI_ACTOR,
      });
      const second = await services.messaging.addCredit({
        portalId,
        amount: 250,
        note: 'second',
        actor: CLI_ACTOR,
      });
      assert.equal(second.balance, 750);

      const credit = await app.inject({
        url: `${API}/credit`,
        headers: { authorization: portal.token },
      });
      assert.deepEqual(credit.json().data, { balance: 750, reserved: 0, currency: 'EUR' });
      const page1 = await app.inject({
        url: `${API}/credit/transactions?limit=1`,
        headers: { authorization: portal.token },
      });
      const body1 = page1.json().data;
      assert.equal(body1.items.length, 1);
      assert.ok(body1.nextCursor);
      const page2 = await app.inject({
        url: `${API}/credit/transactions?limit=1&cursor=${body1.nextCursor}`,
        headers: { authorization: portal.token },
      });
      const notes = [body1.items[0].note, page2.json().data.items[0].note].sort();
      assert.deepEqual(notes, ['first', 'second']);
      assert.equal(page2.json().data.nextCursor, null);

      await assert.rejects(
        services.messaging.addCredit({ portalId, amount: 0, note: 'x', actor: CLI_ACTOR }),
        /positive/,
      );
    });

    test('a send without a connection is 409 not_connected: nothing queued or reserved', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      await services.messaging.start();
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.messaging.addCredit({ portalId, amount: 100, note: 'n', actor: CLI_ACTOR });
      const res = await app.inject({
        method: 'POST',
        url: `${API}/messages`,
        headers: { authorization: portal.token },
        payload: {
          to: '+16505551234',
          type: 'template',
          template: { name: 'hello', language: 'en_US' },
        },
      });
      assert.equal(res.statusCode, 409, res.body);
      assert.equal(res.json().error.code, 'not_connected');
      assert.equal(await services.messaging.waitingJobs(), 0);
      const list = await app.inject({
        url: `${API}/messages`,
        headers: { authorization: portal.token },
      });
      assert.equal(list.json().data.items.length, 0);
      assert.deepEqual(await services.messaging.credit({ portalId }), {
        balance: 100,
        reserved: 0,
        currency: 'EUR',
      });
    });

    test('20 concurrent reservations with credit for 5: exactly 5 succeed', async (t) => {
      const { services } = await buildTestApp(t, backend);
      const portal = await createPortal(services);
      const portalId = await services.accounts.portalIdFor(portal.portalCode);
      await services.messaging.addCredit({ portalId, amount: 50, note: 'n', actor: CLI_ACTOR });
      const db = services.storage.db;
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          db.transaction((tx) =>
            reserve(tx, {
              portalId,
              amount: 10,
              currency: 'EUR',
              messageId: `msg_${i}`,
              actor: 'api',
            }),
          ),
        ),
      );
      assert.equal(results.filter(Boolean).length, 5);
      assert.deepEqual(await readCredit(db, portalId, 'EUR'), {
        balance: 50,
        reserved: 50,
        currency: 'EUR',
      });
    });
  });
}
