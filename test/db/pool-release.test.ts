/**
 * A transaction whose BEGIN meets a connection the server has just ended gives its client back:
 * the pool does not count it for ever, and the pool still closes. On a private PostgreSQL
 * (test/helpers/private-postgres.ts), restarted under idle pooled connections.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { openStorage } from '../../src/db/client.ts';
import { privatePostgresSkip, startPrivatePostgres } from '../helpers/private-postgres.ts';
import { deadline } from '../helpers/deadlines.ts';

test(
  'a transaction begun on a connection the server ended releases its client',
  { skip: privatePostgresSkip() },
  async (t) => {
    const server = await startPrivatePostgres(t);
    const storage = await openStorage({ kind: 'postgres', url: server.url, poolSize: 4 });
    let closed = false;
    t.after(async () => {
      if (!closed) await storage.close();
    });
    const pool = storage.pool!;
    // Four idle pooled connections.
    await Promise.all(
      Array.from({ length: 4 }, () =>
        storage.db.transaction(async (tx) => {
          await tx.execute(sql`select pg_sleep(0.05)`);
        }),
      ),
    );
    assert.equal(pool.idleCount, 4);
    // The restart runs synchronously: the pool learns that its connections ended only after
    // these transactions have checked them out and sent BEGIN.
    await server.restart();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 4 }, () =>
        storage.db.transaction(async (tx) => {
          await tx.execute(sql`select 1`);
        }),
      ),
    );
    assert.ok(
      outcomes.some((o) => o.status === 'rejected'),
      'a BEGIN met an ended connection',
    );
    await delay(50);
    assert.equal(pool.totalCount - pool.idleCount, 0, 'no client is still checked out');
    // The pool serves again and closes.
    await storage.db.transaction(async (tx) => {
      await tx.execute(sql`select 1`);
    });
    const ms = deadline(10_000);
    const timer = delay(ms, 'timeout', { ref: false });
    assert.equal(await Promise.race([storage.close().then(() => 'closed'), timer]), 'closed');
    closed = true;
  },
);
