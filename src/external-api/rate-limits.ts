/**
 * Rate limits of the external API, on fixed-window counters counted in this process and
 * synchronised with Redis when one is given, so every instance shares the counts
 * (`platform/window-counter.ts`: at most `RATE_LIMIT_SYNC_MS` between synchronisations; the
 * bound on overshoot is in docs/decisions/0004-rate-limits.md):
 *
 * - per API key: `perMinute` requests per minute, or the key's own `rateLimitPerMinute` when
 *   lower, keyed by the key's id (so a rotated key's two secrets share one budget; a secret is
 *   never a key);
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
  /** Requests per minute per API key (a key's own limit applies when lower). */
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
   * Count one request against the key; set the headers; refuse (429) over the limit.
   * Returns a promise only when the count had to be synchronised first.
   *
   * @param keyLimit the key's own requests per minute (null: `perMinute`; never above it).
   * @throws AppError `rate_limited` (429) once the key is over its limit for the window.
   */
  countKeyRequest(
    reply: FastifyReply,
    keyId: number,
    keyLimit: number | null,
  ): void | Promise<void>;
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
  const perKey = counter('key', settings.perMinute);
  /** Counters of keys with a lower limit of their own, by that limit (same Redis keys). */
  const perKeyOwn = new Map<number, WindowCounter>();
  const perIpFailures = counter('auth-failures', settings.failuresPerMinute);

  const counterFor = (keyLimit: number | null): WindowCounter => {
    if (keyLimit === null || keyLimit >= settings.perMinute) return perKey;
    let own = perKeyOwn.get(keyLimit);
    if (!own) {
      own = counter('key', keyLimit);
      perKeyOwn.set(keyLimit, own);
    }
    return own;
  };

  const decideKey = (
    reply: FastifyReply,
    limit: number,
    result: { allowed: boolean; remaining: number; resetSeconds: number },
  ): void => {
    if (!result.allowed) {
      throw rateLimited(
        `Too many requests for this API key; retry in ${result.resetSeconds} seconds.`,
        limit,
        result.resetSeconds,
      );
    }
    reply.header('x-ratelimit-limit', String(limit));
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

    countKeyRequest(reply, keyId, keyLimit) {
      const counter = counterFor(keyLimit);
      const result = counter.hit(String(keyId));
      // The common case needs no promise: the count was synchronised less than syncMs ago.
      if (!(result instanceof Promise)) return decideKey(reply, counter.limit, result);
      return result.then((synced) => decideKey(reply, counter.limit, synced));
    },

    async close() {
      await Promise.all([
        perKey.close(),
        perIpFailures.close(),
        ...[...perKeyOwn.values()].map((c) => c.close()),
      ]);
    },
  };
}
