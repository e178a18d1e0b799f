/**
 * The optional Redis connection (shared rate-limit counters across instances).
 *
 * @see https://github.com/redis/ioredis#connection-events
 * @see docs/how-to/deploy.md
 */
import type { Redis } from 'ioredis';
import { ConfigError } from './errors.ts';
import type { Logger } from './logger.ts';

/**
 * Connect to Redis before serving, so a wrong REDIS_URL stops start-up instead of silently
 * splitting the rate limits per instance. Afterwards commands fail fast while disconnected
 * (no offline queue) and the limits fail open (logged).
 *
 * @throws ConfigError when Redis does not answer; the message never contains the URL.
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
  redis.on('error', (err: Error) => logger.warn({ reason: err.message }, 'Redis error'));
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    // A configuration problem for the operator: one line at start-up (main.ts).
    throw new ConfigError(
      `REDIS_URL: Redis at REDIS_URL did not answer (${err instanceof Error ? err.message : String(err)})`,
      { cause: err },
    );
  }
  return redis;
}
