/**
 * Several instances on one database: a token change made through one instance reaches the
 * verification caches of the others (PostgreSQL LISTEN/NOTIFY; PGlite in-process), and an
 * instance whose listening connection dies stops trusting its cache.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { hashApiToken } from '../../src/accounts/api-token.ts';
import { CLI_ACTOR } from '../../src/audit/audit-log.ts';
import { createPortal } from '../helpers/app.ts';
import { eventually, openInstances, type Instance } from '../helpers/instances.ts';
import { backends } from '../helpers/storage.ts';

const VERIFY = '/api/v1/external/auth/verify';

async function verify(instance: Instance, token: string) {
  const res = await instance.app.inject({ url: VERIFY, headers: { authorization: token } });
  return { status: res.statusCode, body: res.json() };
}

/** Verify twice on `instance` and check the principal is now served from its cache. */
async function warm(instance: Instance, token: string): Promise<void> {
  assert.equal((await verify(instance, token)).status, 200);
  assert.equal((await verify(instance, token)).status, 200);
  assert.ok(
    instance.services.tokenVerification.cache.has(hashApiToken(token)),
    'the principal should be cached on this instance before the change',
  );
}

for (const backend of backends()) {
  describe(`verification cache across instances (${backend.name})`, () => {
    test('a token regenerated on A is refused on A at once and on B after the notification', async (t) => {
      const [a, b] = await openInstances(t, backend, 2);
      const portal = await createPortal(a!.services);
      await warm(a!, portal.token);
      await warm(b!, portal.token);

      const { token: fresh } = await a!.services.accounts.regenerateToken({
        portalCode: portal.portalCode,
        actor: CLI_ACTOR,
      });

      // The instance that regenerated: the very next request.
      assert.equal((await verify(a!, portal.token)).status, 401);
      assert.equal((await verify(a!, fresh)).status, 200);
      // The other instance: as soon as it has handled the notification.
      await eventually(
        async () => (await verify(b!, portal.token)).status === 401,
        'B refuses the old token',
      );
      assert.equal(b!.services.tokenVerification.cache.has(hashApiToken(portal.token)), false);
      assert.equal((await verify(b!, fresh)).status, 200);
      assert.equal((await verify(b!, portal.token)).body.error.code, 'invalid_token');
    });

    test('a token re-scoped on A shows its new scopes on B', async (t) => {
      const [a, b] = await openInstances(t, backend, 2);
      const portal = await createPortal(a!.services);
      await warm(b!, portal.token);

      await a!.services.accounts.setTokenScopes({
        portalCode: portal.portalCode,
        scopes: ['support:tickets:read'],
        actor: CLI_ACTOR,
      });

      assert.deepEqual((await verify(a!, portal.token)).body.data.scopes, ['support:tickets:read']);
      await eventually(async () => {
        const { body } = await verify(b!, portal.token);
        return body.data.scopes.length === 1;
      }, 'B shows the new scopes');
      assert.deepEqual((await verify(b!, portal.token)).body.data.scopes, ['support:tickets:read']);
    });

    test('a change made without any app (as the admin CLI does) reaches both instances', async (t) => {
      const [a, b, cli] = await openInstances(t, backend, 3);
      const portal = await createPortal(cli!.services);
      await warm(a!, portal.token);
      await warm(b!, portal.token);
      // The third instance's services stand for the CLI process: same service, same storage.
      await cli!.services.accounts.regenerateToken({
        portalCode: portal.portalCode,
        actor: CLI_ACTOR,
      });
      for (const instance of [a!, b!]) {
        await eventually(
          async () => (await verify(instance, portal.token)).status === 401,
          'the old token is refused',
        );
      }
    });

    test('with TOKEN_CACHE_SIZE=0 nothing is cached and changes still apply at once', async (t) => {
      const [a, b] = await openInstances(t, backend, 2, { TOKEN_CACHE_SIZE: '0' });
      const portal = await createPortal(a!.services);
      assert.equal((await verify(b!, portal.token)).status, 200);
      assert.equal(b!.services.tokenVerification.cache.stats().size, 0);
      await a!.services.accounts.regenerateToken({
        portalCode: portal.portalCode,
        actor: CLI_ACTOR,
      });
      assert.equal((await verify(b!, portal.token)).status, 401);
    });

    test('malformed and unknown tokens never enter the cache; a new token works at once', async (t) => {
      const [a] = await openInstances(t, backend, 1);
      const portal = await createPortal(a!.services);
      const cache = a!.services.tokenVerification.cache;
      const before = cache.stats();
      // Right shape, wrong checksum: refused before any cache or database read.
      const badChecksum = portal.token.slice(0, -1) + (portal.token.endsWith('A') ? 'B' : 'A');
      assert.equal((await verify(a!, badChecksum)).status, 401);
      assert.deepEqual(cache.stats(), before);
      // Well formed, unknown: read from the database, not remembered.
      const other = await createPortal(a!.services);
      await a!.services.accounts.regenerateToken({
        portalCode: other.portalCode,
        actor: CLI_ACTOR,
      });
      assert.equal((await verify(a!, other.token)).status, 401);
      assert.equal((await verify(a!, other.token)).status, 401);
      assert.equal(cache.has(hashApiToken(other.token)), false);
      // A brand-new token answers on its first request.
      const brandNew = await createPortal(a!.services);
      assert.equal((await verify(a!, brandNew.token)).status, 200);
    });
  });
}

const postgres = backends().find((b) => b.name === 'postgres');

describe('the listening connection dies (postgres)', () => {
  test(
    'B refuses the old token anyway, logs it, listens again and caches again',
    {
      skip: postgres
        ? false
        : 'needs a real PostgreSQL: set TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres)',
    },
    async (t) => {
      const [a, b] = await openInstances(t, postgres!, 2);
      const portal = await createPortal(a!.services);
      await warm(b!, portal.token);
      const listener = b!.app.tokenChangeListener;
      const pid = listener.backendPid;
      assert.ok(pid, 'B listens on a session of its own');

      // Kill B's listening session, then change the token right away: the notification may
      // well be sent while B has no session to receive it.
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ done: boolean }>(
          'select pg_terminate_backend($1) as done',
          [pid],
        );
        assert.equal(rows[0]?.done, true);
      } finally {
        await admin.end();
      }
      const { token: fresh } = await a!.services.accounts.regenerateToken({
        portalCode: portal.portalCode,
        actor: CLI_ACTOR,
      });

      await eventually(
        async () => (await verify(b!, portal.token)).status === 401,
        'B refuses the old token',
      );
      assert.equal((await verify(b!, fresh)).status, 200);
      assert.ok(
        b!.logs.some((line) => line.includes('token change listener lost its connection')),
        'B says in its log that it stopped trusting its cache',
      );

      // B listens again on a new session, caches again, and hears the next change.
      await eventually(() => listener.listening && listener.backendPid !== pid, 'B listens again');
      await warm(b!, fresh);
      await a!.services.accounts.regenerateToken({
        portalCode: portal.portalCode,
        actor: CLI_ACTOR,
      });
      await eventually(
        async () => (await verify(b!, fresh)).status === 401,
        'B refuses the regenerated token after reconnecting',
      );
    },
  );
});
