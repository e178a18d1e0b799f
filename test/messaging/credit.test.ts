/**
 * The credit ledger and the queue's set-up on both backends: top-ups, the credit routes, a send
 * refused without a connection (nothing queued or reserved); and the escrow blocks sends reserve
 * from (docs/decisions/0026-credit-escrow.md), with two instances over one database: concurrent
 * sends never overdraw and a refusal means the credit as a whole does not cover the price, a
 * block's unused part reads as available, a stopped instance gives its blocks back, a block
 * held by an instance that died is settled by another, and the dead one's later send finds its
 * block gone.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { messagingInstances as twoInstances } from '../helpers/messaging.ts';
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

    test('20 concurrent sends on two instances with credit for 5: exactly 5 queued, the rest reserve nothing', async (t) => {
      const s = await twoInstances(t, backend, 20);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.send(i % 2 === 0 ? s.a : s.b)),
      );
      const statuses = answers.map((r) => r.statusCode);
      assert.equal(statuses.filter((c) => c === 202).length, 5, statuses.join(','));
      for (const r of answers.filter((x) => x.statusCode !== 202)) {
        assert.equal(r.statusCode, 402, r.body);
        assert.equal(r.json().error.code, 'insufficient_credit');
      }
      for (const instance of [s.a, s.b])
        assert.deepEqual(await s.credit(instance), { balance: 20, reserved: 20, currency: 'EUR' });
      assert.equal(await s.count('messages'), 5);
      assert.equal(await s.count('reserves'), 5);
      assert.equal(await s.a.services.messaging.waitingJobs(), 5);
    });

    test("a block's unused part reads as available; a stopped instance gives its blocks back", async (t) => {
      const s = await twoInstances(t, backend, 100);
      for (let i = 0; i < 2; i++) assert.equal((await s.send(s.a)).statusCode, 202);
      // A holds one block (half of the 100: 50) and has reserved 8 of it.
      assert.equal(await s.count('leases'), 1);
      assert.deepEqual(await s.accountRow(), { balance: 100, reserved: 50 });
      for (const instance of [s.a, s.b])
        assert.deepEqual(await s.credit(instance), { balance: 100, reserved: 8, currency: 'EUR' });
      await s.a.services.messaging.stop();
      assert.equal(await s.count('leases'), 0);
      assert.deepEqual(await s.accountRow(), { balance: 100, reserved: 8 });
      assert.deepEqual(await s.credit(s.b), { balance: 100, reserved: 8, currency: 'EUR' });
    });

    test('a block held by an instance that died is settled by another; its later send finds it gone', async (t) => {
      const s = await twoInstances(t, backend, 40);
      assert.equal((await s.send(s.a)).statusCode, 202);
      // A "dies" holding a block of 20 with 16 unused: it never sends or stops again (below).
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await s.send(s.b)).statusCode);
      // B gets the 36 left, A's unused 16 included (it settles A's block when short), no more.
      assert.deepEqual(statuses, [...Array<number>(9).fill(202), 402]);
      assert.deepEqual(await s.credit(s.b), { balance: 40, reserved: 40, currency: 'EUR' });
      // A's block is gone: A's next send may not reserve from the 16 A still counts in memory.
      const late = await s.send(s.a);
      assert.equal(late.statusCode, 402, late.body);
      assert.equal(await s.count('reserves'), 10);
      assert.equal(await s.count('messages'), 10);
      assert.deepEqual(await s.credit(s.a), { balance: 40, reserved: 40, currency: 'EUR' });
    });
  });
}
