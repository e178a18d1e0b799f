/**
 * The verification cache's ordering rules, with a database read we can hold open: a lookup
 * that started before a change must not put the old principal back after the change.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KeyPrincipal as Principal } from '../../src/accounts/principal.ts';
import { createPrincipalCache } from '../../src/accounts/principal-cache.ts';

const principal = (portalId: number, scopes: Principal['scopes'] = []): Principal => ({
  portalId,
  portalCode: String(1000 + portalId),
  userId: portalId,
  isMainAdmin: true,
  scopes,
  keyId: portalId,
  keyName: 'Default',
  expiresAt: null,
  secretValidUntil: null,
  allowedIps: null,
  allowList: null,
  rateLimitPerMinute: null,
});

/** A lookup whose reads are counted and can be held until released. */
function heldLookup(rows: Map<string, Principal>) {
  const pending: (() => void)[] = [];
  let hold = false;
  let reads = 0;
  return {
    get reads() {
      return reads;
    },
    holdNext() {
      hold = true;
    },
    releaseAll() {
      for (const release of pending.splice(0)) release();
    },
    load: async (hash: string): Promise<Principal | null> => {
      reads++;
      const answer = rows.get(hash) ?? null; // read "now", answer later
      if (hold) {
        hold = false;
        await new Promise<void>((resolve) => pending.push(resolve));
      }
      return answer;
    },
  };
}

describe('principal cache', () => {
  test('distrusted (no listener) it reads through every time; trusted it caches', async () => {
    const db = heldLookup(new Map([['h1', principal(1)]]));
    const cache = createPrincipalCache({ maxEntries: 10, ttlMs: 60_000, load: db.load });
    await cache.lookup('h1');
    await cache.lookup('h1');
    assert.equal(db.reads, 2);
    cache.trust();
    await cache.lookup('h1');
    await cache.lookup('h1');
    assert.equal(db.reads, 3);
    assert.equal(cache.stats().hits, 1);
    cache.distrust();
    assert.equal(cache.has('h1'), false);
    await cache.lookup('h1');
    assert.equal(db.reads, 4);
  });

  test('a read that began before an invalidation does not cache what it read', async () => {
    const rows = new Map([['h1', principal(1, ['crm:contacts:read'])]]);
    const db = heldLookup(rows);
    const cache = createPrincipalCache({ maxEntries: 10, ttlMs: 60_000, load: db.load });
    cache.trust();
    db.holdNext();
    const slow = cache.lookup('h1'); // reads the old scopes, answer held back
    // The change commits and its notification is handled while the read is in flight.
    rows.set('h1', principal(1, ['support:tickets:read']));
    cache.invalidatePortal(1);
    db.releaseAll();
    assert.deepEqual((await slow)?.scopes, ['crm:contacts:read']); // that request saw the old state
    assert.equal(cache.has('h1'), false, 'but the old state is not cached');
    assert.deepEqual((await cache.lookup('h1'))?.scopes, ['support:tickets:read']);
  });

  test('a read in flight while the listener drops (or comes back) is not cached', async () => {
    const db = heldLookup(new Map([['h1', principal(1)]]));
    const cache = createPrincipalCache({ maxEntries: 10, ttlMs: 60_000, load: db.load });
    cache.trust();
    db.holdNext();
    const inFlight = cache.lookup('h1');
    cache.distrust();
    cache.trust();
    db.releaseAll();
    await inFlight;
    assert.equal(cache.has('h1'), false);
  });

  test('concurrent misses share one read, but not one that began before a change', async () => {
    const rows = new Map([['h1', principal(1, ['crm:contacts:read'])]]);
    const db = heldLookup(rows);
    const cache = createPrincipalCache({ maxEntries: 10, ttlMs: 60_000, load: db.load });
    cache.trust();
    db.holdNext();
    const first = cache.lookup('h1');
    const second = cache.lookup('h1');
    assert.equal(db.reads, 1);
    rows.set('h1', principal(1, ['support:tickets:read']));
    cache.invalidatePortal(1);
    const third = cache.lookup('h1'); // after the change: a read of its own
    assert.equal(db.reads, 2);
    db.releaseAll();
    assert.deepEqual((await first)?.scopes, ['crm:contacts:read']);
    assert.deepEqual((await second)?.scopes, ['crm:contacts:read']);
    assert.deepEqual((await third)?.scopes, ['support:tickets:read']);
    assert.deepEqual((await cache.lookup('h1'))?.scopes, ['support:tickets:read']);
  });

  test('unknown tokens are never remembered; invalidation drops only that portal', async () => {
    const rows = new Map([
      ['h1', principal(1)],
      ['h2', principal(2)],
    ]);
    const db = heldLookup(rows);
    const cache = createPrincipalCache({ maxEntries: 10, ttlMs: 60_000, load: db.load });
    cache.trust();
    assert.equal(await cache.lookup('h3'), null);
    rows.set('h3', principal(3));
    assert.equal((await cache.lookup('h3'))?.portalId, 3, 'a new token works at once');
    await cache.lookup('h1');
    await cache.lookup('h2');
    cache.invalidatePortal(1);
    assert.equal(cache.has('h1'), false);
    assert.equal(cache.has('h2'), true);
  });

  test('cached principals are frozen; size 0 turns the cache off', async () => {
    const db = heldLookup(new Map([['h1', principal(1, ['crm:contacts:read'])]]));
    const cache = createPrincipalCache({ maxEntries: 10, ttlMs: 60_000, load: db.load });
    cache.trust();
    const first = await cache.lookup('h1');
    assert.ok(first && Object.isFrozen(first) && Object.isFrozen(first.scopes));
    const off = createPrincipalCache({ maxEntries: 0, ttlMs: 60_000, load: db.load });
    off.trust();
    await off.lookup('h1');
    await off.lookup('h1');
    assert.equal(off.stats().size, 0);
    assert.equal(off.stats().enabled, false);
  });
});
