import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { count, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { idempotencyKeys, supportTickets } from '../../src/db/schema/index.ts';
import type { Services } from '../../src/services.ts';
import { buildTestApp, createPortal } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';

const TICKETS = '/api/v1/external/support/tickets';

function post(app: FastifyInstance, token: string, key: string | undefined, payload: object) {
  return app.inject({
    method: 'POST',
    url: TICKETS,
    headers: { authorization: token, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    payload,
  });
}

async function ticketCount(app: { services: Services }): Promise<number> {
  const [row] = await app.services.storage.db.select({ n: count() }).from(supportTickets);
  return row!.n;
}

for (const backend of backends()) {
  describe(`Idempotency-Key on POST /support/tickets (${backend.name})`, () => {
    test('a replay returns the first response and creates nothing', async (t) => {
      const built = await buildTestApp(t, backend);
      const { app, services } = built;
      const { token } = await createPortal(services);
      const body = { subject: 'Retry me', description: 'Network flaked.', tags: ['a', 'b'] };
      const first = await post(app, token, 'key-1', body);
      assert.equal(first.statusCode, 201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      // Same body with keys in another order and the default spelled out: the same request.
      const again = await post(app, token, 'key-1', {
        tags: ['a', 'b'],
        priority: 'normal',
        description: 'Network flaked.',
        subject: 'Retry me',
      });
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.json(), first.json());
      assert.equal(await ticketCount(built), 1);

      // Without a key, every POST creates.
      await post(app, token, undefined, body);
      await post(app, token, undefined, body);
      assert.equal(await ticketCount(built), 3);
    });

    test('the same key with a different body → 409 idempotency_conflict', async (t) => {
      const built = await buildTestApp(t, backend);
      const { app, services } = built;
      const { token } = await createPortal(services);
      await post(app, token, 'k', { subject: 'One', description: 'first' });
      for (const other of [
        { subject: 'Two', description: 'first' },
        { subject: 'One', description: 'first', priority: 'urgent' },
        { subject: 'One', description: 'first', tags: ['x'] },
      ]) {
        const res = await post(app, token, 'k', other);
        assert.equal(res.statusCode, 409);
        assert.equal(res.json().error.code, 'idempotency_conflict');
      }
      assert.equal(await ticketCount(built), 1);
      // Still replays the original afterwards.
      const replay = await post(app, token, 'k', { subject: 'One', description: 'first' });
      assert.equal(replay.statusCode, 201);
      assert.equal(replay.json().data.subject, 'One');
    });

    test('concurrent requests with one key create one ticket', async (t) => {
      const built = await buildTestApp(t, backend);
      const { app, services } = built;
      const { token } = await createPortal(services);
      const body = { subject: 'Concurrent', description: 'Sent twice at once.' };
      const responses = await Promise.all(
        Array.from({ length: 8 }, () => post(app, token, 'same-key', body)),
      );
      const ids = new Set(responses.map((r) => String(r.json().data.id)));
      assert.deepEqual(
        responses.map((r) => r.statusCode),
        Array(8).fill(201),
      );
      assert.equal(ids.size, 1);
      assert.equal(responses.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 7);
      assert.equal(await ticketCount(built), 1);

      // Concurrent different bodies under one key: one wins, the others conflict.
      const mixed = await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          post(app, token, 'race', { subject: `Body ${i}`, description: 'x' }),
        ),
      );
      assert.deepEqual(mixed.map((r) => r.statusCode).sort(), [201, 409, 409, 409]);
      assert.equal(await ticketCount(built), 2);
    });

    test('keys are scoped per portal; key length 1 and 255 work, 0 and 256 are 400', async (t) => {
      const built = await buildTestApp(t, backend);
      const { app, services } = built;
      const a = await createPortal(services);
      const b = await createPortal(services);
      const body = { subject: 'Same key', description: 'Two portals.' };
      const ra = await post(app, a.token, 'shared', body);
      const rb = await post(app, b.token, 'shared', body);
      assert.equal(ra.statusCode, 201);
      assert.equal(rb.statusCode, 201);
      assert.notEqual(ra.json().data.id, rb.json().data.id);
      assert.equal(rb.json().data.requester.userId, b.userId);

      for (const [key, status] of [
        ['', 400],
        ['k', 201],
        ['k'.repeat(255), 201],
        ['k'.repeat(256), 400],
      ] as const) {
        const res = await post(app, a.token, key, {
          subject: `len ${key.length}`,
          description: 'd',
        });
        assert.equal(res.statusCode, status, `key of ${key.length}`);
        if (status === 400) {
          assert.equal(res.json().error.details[0].field, 'headers.idempotency-key');
        }
      }
    });

    test('after 24 hours a key may be used again for a new request', async (t) => {
      const built = await buildTestApp(t, backend);
      const { app, services } = built;
      const { token } = await createPortal(services);
      const first = await post(app, token, 'old', { subject: 'First', description: 'd' });
      assert.equal(first.statusCode, 201);
      // Age the record past its window (no clock in the test: move the stored expiry).
      await services.storage.db.execute(
        sql`update idempotency_keys set expires_at = now() - interval '1 second'`,
      );
      const reused = await post(app, token, 'old', { subject: 'Second', description: 'd' });
      assert.equal(reused.statusCode, 201);
      assert.equal(reused.headers['idempotent-replayed'], undefined);
      assert.notEqual(reused.json().data.id, first.json().data.id);
      const replay = await post(app, token, 'old', { subject: 'Second', description: 'd' });
      assert.equal(replay.json().data.id, reused.json().data.id);

      // Expired keys are deleted by the `idempotency.expire` background task; live ones stay.
      await post(app, token, 'will-expire', { subject: 'Third', description: 'd' });
      await services.storage.db.execute(
        sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = 'will-expire'`,
      );
      await post(app, token, 'fresh', { subject: 'Fourth', description: 'd' });
      assert.equal(await services.background.runNow('idempotency.expire'), 1);
      const keys = await services.storage.db
        .select({ key: idempotencyKeys.key })
        .from(idempotencyKeys)
        .orderBy(idempotencyKeys.key);
      assert.deepEqual(
        keys.map((k) => k.key),
        ['fresh', 'old'],
      );
    });
  });
}
