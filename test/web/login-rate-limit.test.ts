/**
 * `POST /login` is rate-limited per account and address, per address, and per account, on
 * failures only, before any password hashing. Counters shared through Redis
 * when REDIS_URL is configured.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { buildTestApp } from '../helpers/app.ts';
import { backends } from '../helpers/storage.ts';
import { csrfOf, portalWithPassword, setCookies, TEST_PASSWORD } from '../helpers/web.ts';

/** One sign-in attempt from `address`, with a fresh sign-in form. */
async function attempt(
  app: FastifyInstance,
  input: { email: string; password: string; address: string },
): Promise<LightMyRequestResponse> {
  const page = await app.inject({ url: '/login', remoteAddress: input.address });
  const cookie = setCookies(page).find((c) => c.name === 'portico_login_csrf');
  assert.ok(cookie);
  return app.inject({
    method: 'POST',
    url: '/login',
    remoteAddress: input.address,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: `portico_login_csrf=${cookie.value}`,
    },
    payload: new URLSearchParams({
      email: input.email,
      password: input.password,
      csrf: csrfOf(page.body),
    }).toString(),
  });
}

function assertLimited(res: LightMyRequestResponse, maxWaitSeconds: number) {
  assert.equal(res.statusCode, 429, res.body);
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(retryAfter >= 1 && retryAfter <= maxWaitSeconds, `Retry-After ${retryAfter}`);
  assert.match(res.body, /Too many failed sign-in attempts\. Please wait \d+ (second|minute)/);
  assert.match(String(res.headers['content-type']), /text\/html/);
}

for (const backend of backends()) {
  describe(`sign-in rate limits (${backend.name})`, () => {
    test('40 wrong passwords from one address: 429 after 5, the owner elsewhere still signs in', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const victim = await portalWithPassword(services);
      const attacker = '198.51.100.7';
      const statuses: number[] = [];
      let last: LightMyRequestResponse | undefined;
      for (let i = 0; i < 40; i++) {
        last = await attempt(app, {
          email: victim.email,
          password: `wrong ${i}`,
          address: attacker,
        });
        statuses.push(last.statusCode);
      }
      assert.deepEqual(statuses.slice(0, 5), [401, 401, 401, 401, 401]);
      assert.ok(
        statuses.slice(5).every((s) => s === 429),
        statuses.join(','),
      );
      assertLimited(last!, 60);
      // Even the right password is refused from that address until the window ends ...
      const guessed = await attempt(app, {
        email: victim.email,
        password: TEST_PASSWORD,
        address: attacker,
      });
      assertLimited(guessed, 60);
      // ... while the owner, from their own address, signs in at once.
      const owner = await attempt(app, {
        email: victim.email,
        password: TEST_PASSWORD,
        address: '203.0.113.20',
      });
      assert.equal(owner.statusCode, 303, owner.body);
    });

    test('per address: many accounts tried from one address are limited too', async (t) => {
      const { app } = await buildTestApp(t, backend);
      const address = '198.51.100.8';
      for (let i = 0; i < 10; i++) {
        const res = await attempt(app, {
          email: `nobody${i}@example.test`,
          password: 'x',
          address,
        });
        assert.equal(res.statusCode, 401, `attempt ${i}`);
      }
      assertLimited(
        await attempt(app, { email: 'another@example.test', password: 'x', address }),
        60,
      );
    });

    test('per account across addresses: a short window only', async (t) => {
      const { app, services } = await buildTestApp(t, backend);
      const victim = await portalWithPassword(services);
      for (let a = 0; a < 5; a++) {
        for (let i = 0; i < 4; i++) {
          const res = await attempt(app, {
            email: victim.email,
            password: 'wrong',
            address: `192.0.2.${10 + a}`,
          });
          assert.equal(res.statusCode, 401);
        }
      }
      const res = await attempt(app, {
        email: victim.email.toUpperCase(),
        password: TEST_PASSWORD,
        address: '192.0.2.99',
      });
      assertLimited(res, 60);
    });

    test('the delay grows for an address that keeps failing on an account (second tier)', async (t) => {
      t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
      const { app, services } = await buildTestApp(t, backend);
      const victim = await portalWithPassword(services);
      const address = '198.51.100.9';
      for (let round = 0; round < 3; round++) {
        for (let i = 0; i < 5; i++) {
          const res = await attempt(app, { email: victim.email, password: 'wrong', address });
          assert.equal(res.statusCode, 401, `round ${round}, attempt ${i}`);
        }
        const limited = await attempt(app, { email: victim.email, password: 'wrong', address });
        if (round < 2) assertLimited(limited, 60);
        else {
          assertLimited(limited, 15 * 60);
          assert.ok(Number(limited.headers['retry-after']) > 60, 'longer than a minute now');
          assert.match(limited.body, /Please wait \d+ minutes/);
        }
        t.mock.timers.tick(61_000);
      }
    });

    test('Redis: two app instances share the counts', async (t) => {
      const redisUrl = process.env.TEST_REDIS_URL;
      if (!redisUrl) {
        t.diagnostic('TEST_REDIS_URL is not set: the shared (Redis) case did not run.');
        return;
      }
      const first = await buildTestApp(t, backend, {
        REDIS_URL: redisUrl,
        REDIS_KEY_PREFIX: `portico-test:${randomUUID()}:`,
      });
      const second = await buildApp({
        services: first.services,
        logger: createLogger('silent', new Writable({ write: (_c, _e, done) => done() })),
      });
      t.after(() => second.close());
      const victim = await portalWithPassword(first.services);
      const address = '198.51.100.10';
      for (const app of [first.app, second, first.app, second, first.app]) {
        const res = await attempt(app, { email: victim.email, password: 'wrong', address });
        assert.equal(res.statusCode, 401);
      }
      assertLimited(await attempt(second, { email: victim.email, password: 'x', address }), 60);
    });
  });
}
