/**
 * The optional Redis connection (shared rate-limit counters across instances).
 *
 * @see https://github.com/redis/ioredis#connection-events
 * @see docs/how-to/deploy.md
 */
import type { Redis } from 'ioredis';
import { dependencyFaults } from './fault-summary.ts';
import type { Logger } from './logger.ts';

/**
 * Connect to Redis. Redis is optional at run time (the limits fail open while it is down), so
 * an instance whose Redis does not answer at start-up starts anyway, degraded: `/readyz` says
 * so (`isDegraded`), the rate limits are counted per instance, and ioredis keeps reconnecting
 * in the background. Commands fail fast while disconnected (no offline queue). Its errors are
 * dependency faults: one summary line per interval, never one per reconnection attempt.
 *
 * Never throws for a Redis that does not answer; the URL never reaches a log line.
 */
export async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  // Loaded only when Redis is configured: about 45 ms of every start otherwise.
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
  });
  let down = false;
  redis.on('error', (err: NodeJS.ErrnoException) => {
    down = true;
    dependencyFaults.note('redis', err.code, logger);
  });
  redis.on('ready', () => {
    if (down) logger.info('Redis answers again');
    down = false;
  });
  try {
    await redis.connect();
  } catch (err) {
    logger.warn(
      { reason: err instanceof Error ? err.message : String(err) },
      'Redis does not answer: serving degraded (rate limits counted per instance) until it does',
    );
  }
  return redis;
}

/** Whether `redis` is not connected now (`/readyz` reports the instance degraded). */
export function isDegraded(redis: Pick<Redis, 'status'>): boolean {
  return redis.status !== 'ready';
}
