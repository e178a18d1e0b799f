/**
 * Rate limits of the external API, on `@fastify/rate-limit`'s counters (in memory, or in Redis
 * when one is given, so every instance shares the counts):
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
 * Both windows are fixed, 60 seconds. A 429 carries `Retry-After` (seconds) and the
 * `X-RateLimit-*` headers; successful requests carry `X-RateLimit-Limit`, `-Remaining` and
 * `-Reset` (seconds until the window ends) of the token's limit.
 *
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4 (429 Too Many Requests)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3 (Retry-After)
 */
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '../platform/errors.ts';

const WINDOW_MS = 60_000;

export interface RateLimitSettings {
  /** Requests per minute per API token. */
  perMinute: number;
  /** Failed authentications per minute per client IP. */
  failuresPerMinute: number;
  /** Shared counters; in-process counters when absent. */
  redis?: Redis | undefined;
  /** Prefix of every Redis key (e.g. `portico:`). */
  keyPrefix: string;
}

export interface ApiRateLimits {
  /**
   * Count one failed authentication against the client's IP.
   *
   * @throws AppError `rate_limited` (429) once the address is over its budget for the window.
   */
  countFailure(request: FastifyRequest): Promise<void>;
  /** Count one request against the token; set the headers; refuse (429) over the limit. */
  countTokenRequest(request: FastifyRequest, reply: FastifyReply, tokenHash: string): Promise<void>;
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

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

/**
 * One counter family (its own Redis key namespace, `{prefix}rate-limit:{name}:{key}`), from
 * its own registration of the plugin in a private child context.
 */
async function limiter(
  api: FastifyInstance,
  settings: RateLimitSettings,
  name: string,
  max: number,
  keyGenerator: (request: FastifyRequest) => string,
): Promise<Limiter> {
  let created: Limiter | undefined;
  await api.register(async (scope) => {
    await scope.register(rateLimit, {
      global: false,
      max,
      timeWindow: WINDOW_MS,
      keyGenerator,
      cache: 10_000,
      // If Redis stops answering, serve rather than fail every request (ioredis logs it).
      skipOnError: true,
      nameSpace: `${settings.keyPrefix}rate-limit:${name}:`,
      ...(settings.redis ? { redis: settings.redis } : {}),
    });
    created = scope.createRateLimit();
  });
  return created!;
}

/**
 * Install the counters in `api` (the external API's context) and return the three steps the
 * authentication hook calls.
 */
export async function installRateLimits(
  api: FastifyInstance,
  settings: RateLimitSettings,
): Promise<ApiRateLimits> {
  const tokenHashes = new WeakMap<FastifyRequest, string>();
  const perToken = await limiter(
    api,
    settings,
    'token',
    settings.perMinute,
    (request) => tokenHashes.get(request) ?? '',
  );
  const perIpFailures = await limiter(
    api,
    settings,
    'auth-failures',
    settings.failuresPerMinute,
    (request) => normalizeIP(request.ip),
  );

  return {
    async countFailure(request) {
      const state = await perIpFailures(request);
      if (!state.isAllowed && state.isExceeded) {
        throw rateLimited(
          `Too many failed authentications from this address; retry in ${state.ttlInSeconds} seconds.`,
          state.max,
          state.ttlInSeconds,
        );
      }
    },

    async countTokenRequest(request, reply, tokenHash) {
      tokenHashes.set(request, tokenHash);
      const state = await perToken(request);
      if (state.isAllowed) return;
      if (state.isExceeded) {
        throw rateLimited(
          `Too many requests for this API token; retry in ${state.ttlInSeconds} seconds.`,
          state.max,
          state.ttlInSeconds,
        );
      }
      reply.headers({
        'x-ratelimit-limit': String(state.max),
        'x-ratelimit-remaining': String(state.remaining),
        'x-ratelimit-reset': String(Math.max(1, state.ttlInSeconds)),
      });
    },
  };
}
