/**
 * Back-pressure before the pool (docs/decisions/0061-back-pressure.md), on both backends, over
 * real HTTP: a send over the API's admission bounds is answered 503 `unavailable` with
 * `Retry-After` in the error envelope instead of waiting, and writes nothing; a burst of
 * concurrent sends against small bounds gets only 202s and such refusals, and
 * the database holds exactly the accepted messages and their reservations.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { deadline } from '../helpers/deadlines.ts';
import { eventually } from '../helpers/instances.ts';
import { hello, MESSAGES, messagingSetup, type MessagingSetup } from '../helpers/messaging.ts';
import { queryRows } from '../helpers/sql.ts';
import { backends } from '../helpers/storage.ts';

/** POST a send over real HTTP; its status, `Retry-After` and envelope. */
async function send(s: MessagingSetup, i: number) {
  const { port } = s.app.server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}${MESSAGES}`, {
    method: 'POST',
    headers: {
      authorization: s.token,
      'content-type': 'application/json',
      'idempotency-key': `admission-${i}`,
    },
    body: JSON.stringify(hello('+16505551234', s.numbers[0]!)),
    signal: AbortSignal.timeout(deadline(30_000)),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as { data?: { id: string }; error?: { code: string } },
  };
}

async function stored(s: MessagingSetup) {
  const [row] = await queryRows<{ messages: number }>(
    s.services.storage,
    sql`select count(*)::int as messages from messages
        where portal_id = ${s.portalId} and direction = 'outbound'`,
  );
  const { reserved } = await s.services.messaging.credit({ portalId: s.portalId });
  return { messages: row!.messages, reserved };
}

for (const backend of backends()) {
  describe(`external API: admission (${backend.name})`, () => {
    test('over the bounds: 503 with Retry-After at once, nothing written; the admitted one goes on', async (t) => {
      const s = await messagingSetup(t, backend, {
        workers: false,
        env: { API_CONCURRENCY: '1', API_QUEUE: '1', API_QUEUE_TIMEOUT_MS: '100' },
      });
      const admission = s.app.apiAdmission;
      // Hold the messages table: the first send is admitted and stays in flight.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      let locked!: () => void;
      const holding = new Promise<void>((resolve) => (locked = resolve));
      const holder = s.services.storage.db.transaction(async (tx) => {
        await tx.execute(sql`lock table messages in exclusive mode`);
        locked();
        await gate;
      });
      await holding;
      let first!: ReturnType<typeof send>;
      try {
        first = send(s, 1);
        await eventually(() => admission.active === 1, 'the first send holds the one slot');
        // The second waits its turn, then gives up after API_QUEUE_TIMEOUT_MS.
        const second = send(s, 2);
        await eventually(() => admission.waiting === 1, 'the second send waits');
        // The third finds the line full: refused at once.
        const third = await send(s, 3);
        assert.equal(third.status, 503);
        assert.equal(third.retryAfter, '1');
        assert.equal(third.body.error?.code, 'unavailable');
        const waited = await second;
        assert.equal(waited.status, 503);
        assert.equal(waited.retryAfter, '1');
        assert.equal(waited.body.error?.code, 'unavailable');
      } finally {
        // Whatever happened above, the table is let go (no test left hanging on its lock).
        open();
        await holder;
      }
      const accepted = await first;
      assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
      assert.deepEqual(await stored(s), { messages: 1, reserved: 4 });
      await eventually(() => admission.active === 0, 'the slot is given back');
      // A refused send retried with its key, once there is room, is accepted.
      const retried = await send(s, 3);
      assert.equal(retried.status, 202, JSON.stringify(retried.body));
      assert.deepEqual(await stored(s), { messages: 2, reserved: 8 });
    });

    test('a burst against small bounds: 202 or 503 with Retry-After, nothing half-written', async (t) => {
      const s = await messagingSetup(t, backend, {
        workers: false,
        credit: 100_000,
        env: { API_CONCURRENCY: '3', API_QUEUE: '5', API_QUEUE_TIMEOUT_MS: '50' },
      });
      const answers = await Promise.all(Array.from({ length: 150 }, (_, i) => send(s, i)));
      const accepted = answers.filter((a) => a.status === 202);
      const refused = answers.filter((a) => a.status !== 202);
      assert.ok(accepted.length > 0, 'some sends accepted');
      for (const r of refused) {
        assert.equal(r.status, 503, JSON.stringify(r.body));
        assert.equal(r.retryAfter, '1');
        assert.equal(r.body.error?.code, 'unavailable');
      }
      assert.deepEqual(await stored(s), {
        messages: accepted.length,
        reserved: 4 * accepted.length,
      });
      assert.equal(new Set(accepted.map((a) => a.body.data?.id)).size, accepted.length);
      await eventually(
        () => s.app.apiAdmission.active === 0 && s.app.apiAdmission.waiting === 0,
        'every slot is given back',
      );
    });
  });
}
