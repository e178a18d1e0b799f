import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test, type TestContext } from 'node:test';
import { Redis } from 'ioredis';
import { createWindowCounter, type HitResult } from '../../src/platform/window-counter.ts';
import { deadline } from '../helpers/deadlines.ts';

const WINDOW_MS = 60_000;
const SYNC_MS = 100;

/** A clock the test moves. */
function clock() {
  let at = 1_700_000_000_000;
  return { now: () => at, advance: (ms: number) => void (at += ms) };
}

async function redisFor(t: TestContext): Promise<Redis | undefined> {
  const url = process.env.TEST_REDIS_URL;
  if (!url) {
    t.diagnostic('TEST_REDIS_URL is not set: the shared counter case did not run.');
    return undefined;
  }
  const redis = new Redis(url, { lazyConnect: true });
  await redis.connect();
  t.after(() => redis.quit());
  return redis;
}

const counts = (results: HitResult[]) => results.map((r) => (r.allowed ? r.remaining : 'refused'));

describe('window counter', () => {
  test('alone: exact counts, a window per key from its first hit, then a new one from zero', async () => {
    const time = clock();
    const counter = createWindowCounter({
      limit: 3,
      windowMs: WINDOW_MS,
      syncMs: SYNC_MS,
      namespace: 'x:',
      maxKeys: 100,
      now: time.now,
    });
    const hits = [];
    for (let i = 0; i < 5; i++) hits.push(await counter.hit('a'));
    assert.deepEqual(counts(hits), [2, 1, 0, 'refused', 'refused']);
    assert.equal(hits[4]!.resetSeconds, 60);
    time.advance(30_000);
    assert.deepEqual(counts([await counter.hit('b')]), [2]);
    assert.equal((await counter.hit('a')).resetSeconds, 30);
    // The window is a's own: 60 s from its first hit, while b's runs on.
    time.advance(30_000);
    assert.equal((await counter.hit('b')).remaining, 1);
    assert.deepEqual(counts([await counter.hit('a')]), [2]);
    await counter.close();
  });

  test('Redis: two instances share the count, each at most one interval behind', async (t) => {
    const redis = await redisFor(t);
    if (!redis) return;
    const time = clock();
    const namespace = `portico-test:${randomUUID()}:`;
    // Long enough that the background timer (real time) stays out of the test's way.
    const syncMs = 10_000;
    const make = () =>
      createWindowCounter({
        limit: 5,
        windowMs: WINDOW_MS,
        syncMs,
        redis,
        namespace,
        maxKeys: 100,
        now: time.now,
      });
    const a = make();
    const b = make();
    t.after(() => Promise.all([a.close(), b.close()]));
    // A's first hit reads the shared count (1); its next two are counted locally.
    assert.deepEqual(counts([await a.hit('k'), await a.hit('k'), await a.hit('k')]), [4, 3, 2]);
    // B has never seen the key: it synchronises, but A has not pushed its two local hits yet.
    assert.deepEqual(counts([await b.hit('k')]), [3]);
    // One interval later each decision rests on a fresh total: 3 (A) + 1 (B) + this hit.
    time.advance(syncMs);
    assert.deepEqual(counts([await a.hit('k')]), [0]);
    time.advance(syncMs);
    assert.deepEqual(counts([await b.hit('k')]), ['refused']);
    assert.equal(Number(await redis.get(`${namespace}k`)), 6);
    const ttl = await redis.pttl(`${namespace}k`);
    assert.ok(ttl > 0 && ttl <= WINDOW_MS, `ttl ${ttl}`);
  });

  test('Redis: pending hits of a quiet key are pushed by the timer', async (t) => {
    const redis = await redisFor(t);
    if (!redis) return;
    const namespace = `portico-test:${randomUUID()}:`;
    const counter = createWindowCounter({
      limit: 100,
      windowMs: WINDOW_MS,
      syncMs: 20,
      redis,
      namespace,
      maxKeys: 100,
    });
    t.after(() => counter.close());
    await counter.hit('q');
    for (let i = 0; i < 4; i++) await counter.hit('q');
    const key = `${namespace}q`;
    const giveUp = Date.now() + deadline(5_000);
    while (Number(await redis.get(key)) !== 5 && Date.now() < giveUp) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(Number(await redis.get(key)), 5);
  });

  test('Redis down: fails open on the local count, which still enforces the limit', async (t) => {
    const redis = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    redis.on('error', () => {});
    t.after(() => redis.disconnect());
    const counter = createWindowCounter({
      limit: 2,
      windowMs: WINDOW_MS,
      syncMs: SYNC_MS,
      redis,
      namespace: 'x:',
      maxKeys: 100,
    });
    const hits = [await counter.hit('a'), await counter.hit('a'), await counter.hit('a')];
    assert.deepEqual(counts(hits), [1, 0, 'refused']);
    await counter.close();
  });
});
