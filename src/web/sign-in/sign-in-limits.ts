/**
 * Rate limits of `POST /login`, on `@fastify/rate-limit`'s counters (the library the external
 * API uses; in Redis when REDIS_URL is configured, so every instance shares the counts). Only
 * failed sign-ins are counted; a refused attempt is answered before any password is hashed, so
 * a flood costs no scrypt work and cannot slow a real sign-in down.
 *
 * Three keys, each with short windows and a longer second tier (the delay grows for whoever
 * keeps failing):
 *
 * | key                          | tier 1             | tier 2               |
 * | ---------------------------- | ------------------ | -------------------- |
 * | account and address          | 5 failures / 1 min | 15 failures / 15 min |
 * | address (any account)        | 10 failures / 1 min| 50 failures / 15 min |
 * | account (any address)        | 20 failures / 1 min| —                    |
 *
 * The account-wide counter is the only one an attacker elsewhere can push for a real user, so
 * it has one short window: at worst the user waits out one minute, and only after 20 failures
 * from at least four addresses. Accounts are keyed by the SHA-256 of the normalised email
 * (never the email itself), addresses by `normalizeIP`.
 *
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Authentication_Cheat_Sheet.html#protect-against-automated-attacks
 * @see https://www.rfc-editor.org/rfc/rfc6585#section-4 (429 Too Many Requests)
 * @see docs/decisions/0008-sign-in-and-sessions.md
 */
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { sha256Hex } from '../../platform/crypto.ts';

/** Where the counters live. */
export interface SignInLimitSettings {
  /** Shared counters; in-process counters when absent. */
  redis?: Redis | undefined;
  /** Prefix of every Redis key (e.g. `portico:`). */
  keyPrefix: string;
}

interface Tier {
  name: string;
  /** Failures allowed in the window. */
  max: number;
  /** Window length in milliseconds. */
  windowMs: number;
  key: (k: { account: string; address: string }) => string;
}

const MINUTE_MS = 60_000;

/** The tiers of the table above. */
export const SIGN_IN_TIERS: readonly Tier[] = [
  { name: 'account-address', max: 5, windowMs: MINUTE_MS, key: (k) => `${k.account}:${k.address}` },
  {
    name: 'account-address-long',
    max: 15,
    windowMs: 15 * MINUTE_MS,
    key: (k) => `${k.account}:${k.address}`,
  },
  { name: 'address', max: 10, windowMs: MINUTE_MS, key: (k) => k.address },
  { name: 'address-long', max: 50, windowMs: 15 * MINUTE_MS, key: (k) => k.address },
  { name: 'account', max: 20, windowMs: MINUTE_MS, key: (k) => k.account },
];

export interface SignInLimits {
  /**
   * Whether this attempt must be refused, and for how long (seconds, ≥ 1). Counts nothing.
   * When several counters refuse, the longest wait wins.
   */
  refusal(request: FastifyRequest, email: string): Promise<{ retryAfterSeconds: number } | null>;
  /** Count one failed sign-in against every counter. */
  countFailure(request: FastifyRequest, email: string): Promise<void>;
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

/** The key parts of an attempt, kept per request for the limiters' key generators. */
const attempts = new WeakMap<FastifyRequest, { account: string; address: string }>();

/**
 * Install the counters in `app` (each tier from its own registration of the plugin in a private
 * child context, with its own key namespace `{prefix}sign-in:{tier}:`).
 */
export async function installSignInLimits(
  app: FastifyInstance,
  settings: SignInLimitSettings,
): Promise<SignInLimits> {
  const limiters: Limiter[] = [];
  for (const tier of SIGN_IN_TIERS) {
    await app.register(async (scope) => {
      await scope.register(rateLimit, {
        global: false,
        max: tier.max,
        timeWindow: tier.windowMs,
        keyGenerator: (request) => {
          const parts = attempts.get(request);
          return parts ? tier.key(parts) : '';
        },
        cache: 10_000,
        // If Redis stops answering, serve rather than refuse every sign-in (ioredis logs it).
        skipOnError: true,
        nameSpace: `${settings.keyPrefix}sign-in:${tier.name}:`,
        ...(settings.redis ? { redis: settings.redis } : {}),
      });
      limiters.push(scope.createRateLimit());
    });
  }

  function remember(request: FastifyRequest, email: string): void {
    attempts.set(request, {
      account: sha256Hex(email.trim().toLowerCase()),
      address: normalizeIP(request.ip),
    });
  }

  return {
    async refusal(request, email) {
      remember(request, email);
      let wait = 0;
      for (const limiter of limiters) {
        const state = await limiter(request, { increment: false });
        if (!state.isAllowed && state.remaining === 0 && state.ttl > 0)
          wait = Math.max(wait, state.ttlInSeconds);
      }
      return wait > 0 ? { retryAfterSeconds: Math.max(1, wait) } : null;
    },
    async countFailure(request, email) {
      remember(request, email);
      for (const limiter of limiters) await limiter(request);
    },
  };
}
