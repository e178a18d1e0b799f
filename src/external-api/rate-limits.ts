/**
 * Rate limits of the external API, on fixed-window counters counted in this process and
 * synchronised with Redis when one is given, so every instance shares the counts
 * (`platform/window-counter.ts`: at most `RATE_LIMIT_SYNC_MS` between synchronisations; the
 * bound on overshoot is in docs/decisions/0004-rate-limits.md):
 *
 * - per API token: `perMinute` requests per minute, keyed by the token's SHA-256 (the token
 *   itself is never a key);
 * - per client IP, for failed authentication only: after `failuresPerMinute` 401s in a minute,
 *   further failures from that address get 429 instead of 401 until the window ends. A valid
 *   token is never refused by its address's failure budget: behind a load balancer (or a NAT)
 *   many clients share one address, and one client's bad tokens must not lock out the others.
 *   The client's address is Fastify's `request.ip`, so behind proxies it is only as good as
 *   `TRUST_PROXY` (a hop count or the proxies' addresses, never "trust everything").
 *
 * Both windows are fixed, 60 seconds from a key's first hit. A 429 carries `Retry-After` (seconds) and the
 * `X-RateLimit-*` headers; successful requests carry `X-RateLimit-Limit`, `-Remaining` and
 * `-Reset` (seconds until the window ends) of the token's limit.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4 (429 Too Many Requests)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3 (Retry-After)
 */
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '../platform/errors.ts';
import { createWindowCounter, type WindowCounter } from '../platform/window-counter.ts';

const WINDOW_MS = 60_000;
/** Keys remembered per counter family (the earliest first hit of the window dropped first). */
const MAX_KEYS = 10_000;

export interface RateLimitSettings {
  /** Requests per minute per API token. */
  perMinute: number;
  /** Failed authentications per minute per client IP. */
  failuresPerMinute: number;
  /** Shared counters; in-process counters when absent. */
  redis?: Redis | undefined;
  /** Prefix of every Redis key (e.g. `portico:`). */
  keyPrefix: string;
  /** Longest a decision rests on an unsynchronised shared count, in milliseconds (100). */
  syncMs?: number | undefined;
}

export interface ApiRateLimits {
  /**
   * Count one failed authentication against the client's IP.
   *
   * @throws AppError `rate_limited` (429) once the address is over its budget for the window.
   */
  countFailure(request: FastifyRequest): Promise<void>;
  /**
   * Count one request against the token; set the headers; refuse (429) over the limit.
   * Returns a promise only when the count had to be synchronised first.
   *
   * @throws AppError `rate_limited` (429) once the token is over its limit for the window.
   */
  countTokenRequest(reply: FastifyReply, tokenHash: string): void | Promise<void>;
  /** Push the pending counts to Redis and stop the timers (the app's close). */
  close(): Promise<void>;
}

function rateLimited(message: string, limit: number, resetSeconds: number): AppError {
  const reset = String(Math.max(1, resetSeconds));
  return new AppError('rate_limited', message, {
    headers: {
      'retry-after': reset,
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': reset,
    },
  });
}

/**
 * The two counter families (Redis keys `{prefix}rate-limit:{name}:{key}`) and the
 * steps the authentication hook calls.
 */
export function createApiRateLimits(settings: RateLimitSettings): ApiRateLimits {
  const counter = (name: string, limit: number): WindowCounter =>
    createWindowCounter({
      limit,
      windowMs: WINDOW_MS,
      syncMs: settings.syncMs ?? 100,
      redis: settings.redis,
      namespace: `${settings.keyPrefix}rate-limit:${name}:`,
      maxKeys: MAX_KEYS,
    });
  const perToken = counter('token', settings.perMinute);
  const perIpFailures = counter('auth-failures', settings.failuresPerMinute);
  const limitHeader = String(settings.perMinute);

  const decideToken = (
    reply: FastifyReply,
    result: { allowed: boolean; remaining: number; resetSeconds: number },
  ): void => {
    if (!result.allowed) {
      throw rateLimited(
        `Too many requests for this API token; retry in ${result.resetSeconds} seconds.`,
        perToken.limit,
        result.resetSeconds,
      );
    }
    reply.header('x-ratelimit-limit', limitHeader);
    reply.header('x-ratelimit-remaining', String(result.remaining));
    reply.header('x-ratelimit-reset', String(result.resetSeconds));
  };

  return {
    async countFailure(request) {
      const result = await perIpFailures.hit(normalizeIP(request.ip));
      if (!result.allowed) {
        throw rateLimited(
          `Too many failed authentications from this address; retry in ${result.resetSeconds} seconds.`,
          perIpFailures.limit,
          result.resetSeconds,
        );
      }
    },

    countTokenRequest(reply, tokenHash) {
      const result = perToken.hit(tokenHash);
      // The common case needs no promise: the count was synchronised less than syncMs ago.
      if (!(result instanceof Promise)) return decideToken(reply, result);
      return result.then((synced) => decideToken(reply, synced));
    },

    async close() {
      await Promise.all([perToken.close(), perIpFailures.close()]);
    },
  };
}
