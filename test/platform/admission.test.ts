/**
 * The admission of platform/admission.ts on its own: its bounds (running, waiting, the wait's
 * deadline), first come first served, and a slot released once however often `release` is called.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAdmission, type AdmissionRefusal } from '../../src/platform/admission.ts';

/** Ask for a slot; the outcome as a promise. */
function ask(admission: ReturnType<typeof createAdmission>) {
  return new Promise<{ release: () => void } | { refused: AdmissionRefusal }>((resolve) =>
    admission.enter(
      (release) => resolve({ release }),
      (refused) => resolve({ refused }),
    ),
  );
}

const released = (o: { release: () => void } | { refused: AdmissionRefusal }) => {
  assert.ok('release' in o, `admitted, not ${JSON.stringify(o)}`);
  return o.release;
};

describe('admission', () => {
  test('admits up to the concurrency, queues up to the queue, refuses the next at once', async () => {
    const admission = createAdmission({ concurrency: 2, queue: 1, waitMs: 60_000 });
    const a = released(await ask(admission));
    const b = released(await ask(admission));
    let waited: { release: () => void } | { refused: AdmissionRefusal } | undefined;
    const c = ask(admission).then((o) => (waited = o));
    assert.equal(admission.active, 2);
    assert.equal(admission.waiting, 1);
    assert.deepEqual(await ask(admission), { refused: 'queue_full' });
    assert.equal(waited, undefined);
    a();
    const cRelease = released(await c);
    assert.equal(admission.waiting, 0);
    assert.equal(admission.active, 2);
    // Released twice: the second call gives back nothing more.
    a();
    assert.equal(admission.active, 2);
    b();
    cRelease();
    assert.equal(admission.active, 0);
  });

  test('a waiter is refused after the wait; the line goes on with the others, in order', async () => {
    const admission = createAdmission({ concurrency: 1, queue: 3, waitMs: 30 });
    const first = released(await ask(admission));
    const gaveUp = ask(admission);
    assert.deepEqual(await gaveUp, { refused: 'wait_timeout' });
    assert.equal(admission.waiting, 0);
    const order: number[] = [];
    const slow = createAdmission({ concurrency: 1, queue: 3, waitMs: 60_000 });
    const holder = released(await ask(slow));
    const waiters = [1, 2, 3].map((n) =>
      ask(slow).then((o) => {
        order.push(n);
        return released(o);
      }),
    );
    holder();
    (await waiters[0]!)();
    (await waiters[1]!)();
    (await waiters[2]!)();
    assert.deepEqual(order, [1, 2, 3]);
    assert.equal(slow.active, 0);
    first();
    assert.equal(admission.active, 0);
    // A slot freed after a waiter gave up goes to no one: the next asks and gets it at once.
    released(await ask(admission));
  });

  test('refuses bounds that admit nothing', () => {
    assert.throws(() => createAdmission({ concurrency: 0, queue: 1, waitMs: 1 }), RangeError);
    assert.throws(() => createAdmission({ concurrency: 1, queue: -1, waitMs: 1 }), RangeError);
  });
});
