/**
 * The PostgreSQL pool's bounded queue (`DATABASE_POOL_QUEUE`).
 *
 * @see docs/decisions/0035-process-fault-policy.md
 */
import type pg from 'pg';

/** The default of `DATABASE_POOL_QUEUE`. */
export const DEFAULT_POOL_QUEUE = 40;

/**
 * Back-pressure before the pool: when `queue` requests already wait for a connection, the next
 * is refused at once (code `POOL_QUEUE_FULL`, read as `unavailable`: 503 with `Retry-After`)
 * instead of joining a queue it would wait `DATABASE_CONNECT_TIMEOUT_MS` in and then fail
 * anyway. The refusal takes no time; a request in the queue waits behind at most `queue` others.
 * `pool.query` goes through `connect` too, so this bounds every use of the pool.
 */
export function boundPoolQueue(pool: pg.Pool, queue: number): void {
  const connect = pool.connect.bind(pool) as (
    callback?: (err: Error | undefined, client?: pg.PoolClient, done?: () => void) => void,
  ) => Promise<pg.PoolClient> | undefined;
  const full = (): boolean =>
    pool.waitingCount >= queue && pool.idleCount === 0 && pool.totalCount >= pool.options.max;
  pool.connect = ((callback?: (err: Error | undefined) => void) => {
    if (!full()) return connect(callback);
    const err = Object.assign(
      new Error('the database pool is saturated: too many requests wait for a connection'),
      { code: 'POOL_QUEUE_FULL' },
    );
    if (!callback) return Promise.reject(err);
    process.nextTick(() => callback(err));
    return undefined;
  }) as typeof pool.connect;
}
