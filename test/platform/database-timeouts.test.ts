/**
 * The pool's timeouts (docs/decisions/0001-storage.md): a request that meets a lock held
 * by another session, or a statement that runs too long, fails fast with 503 `unavailable`
 * (a page for a person) instead of holding its caller for as long as the lock is held.
 * PostgreSQL only: an embedded PGlite has a single in-process session.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { openStorage, storageTargetFor } from '../../src/db/client.ts';
import { databaseFailureKind } from '../../src/platform/database-errors.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createServices } from '../../src/services.ts';
import { captureLogs, createPortal, testConfig } from '../helpers/app.ts';
import { createPostgresDatabase } from '../helpers/storage.ts';
import { Browser, portalWithPassword } from '../helpers/web.ts';

const VERIFY = '/api/v1/external/auth/verify';
/** Without the timeouts, the blocked request would wait for the lock's release at this point. */
const LOCK_HELD_MS = 8_000;

test('timeouts and lock waits are read as unavailable (57014, 55P03, 25P03)', () => {
  for (const code of ['57014', '55P03', '25P03']) {
    // Drizzle wraps the driver's error in `cause`.
    assert.equal(
      databaseFailureKind(new Error('query failed', { cause: { code } })),
      'unavailable',
    );
  }
  assert.equal(databaseFailureKind({ code: '23505' }), null);
});

/**
 * An app over a fresh PostgreSQL database opened from `env` as main.ts opens it, and a second
 * session that holds `lock table <table>` in an open transaction for LOCK_HELD_MS at most.
 */
async function appWithLockedTable(t: TestContext, env: Record<string, string>) {
  const database = await createPostgresDatabase();
  const cleanups: (() => Promise<void>)[] = [() => database.drop()];
  // In reverse order of opening, whatever happened: the lock, the app, the pool, the database.
  t.after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });
  const config = testConfig({ DATABASE_URL: database.url, TOKEN_CACHE_SIZE: '0', ...env });
  const storage = await openStorage(storageTargetFor(config));
  cleanups.push(() => storage.close());
  await storage.migrate();
  const { logs, stream } = captureLogs();
  const logger = createLogger('info', stream);
  const services = createServices({ config, storage, logger });
  const app = await buildApp({ services, logger });
  cleanups.push(() => app.close());

  const holder = new pg.Client({ connectionString: database.url });
  holder.on('error', () => {});
  await holder.connect();
  let timer: NodeJS.Timeout | undefined;
  const release = async () => {
    clearTimeout(timer);
    await holder.query('rollback').catch(() => {});
    await holder.end().catch(() => {});
  };
  cleanups.push(release);
  return {
    app,
    services,
    logs,
    /** Hold an exclusive lock on `table` until LOCK_HELD_MS have passed (or the test ends). */
    lock: async (table: string) => {
      await holder.query('begin');
      await holder.query(`lock table ${table} in access exclusive mode`);
      timer = setTimeout(() => void release(), LOCK_HELD_MS);
    },
  };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

const postgresOnly = process.env.TEST_DATABASE_URL ? {} : { skip: 'TEST_DATABASE_URL is not set' };

test(
  'a lock held by another session: the API answers 503 unavailable within lock_timeout',
  postgresOnly,
  async (t) => {
    const { app, services, lock } = await appWithLockedTable(t, {
      DATABASE_LOCK_TIMEOUT_MS: '300',
      DATABASE_STATEMENT_TIMEOUT_MS: '0',
    });
    const { token } = await createPortal(services);
    await lock('api_tokens');
    const { value: res, ms } = await timed(() =>
      app.inject({ url: VERIFY, headers: { authorization: token } }),
    );
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().error.code, 'unavailable');
    assert.ok(ms < LOCK_HELD_MS / 2, `answered after ${Math.round(ms)} ms`);
  },
);

test(
  'a statement over statement_timeout: 503 unavailable, and the pool keeps serving',
  postgresOnly,
  async (t) => {
    const { app, services, lock } = await appWithLockedTable(t, {
      DATABASE_LOCK_TIMEOUT_MS: '0',
      DATABASE_STATEMENT_TIMEOUT_MS: '300',
    });
    const { token } = await createPortal(services);
    await lock('api_tokens');
    const { value: res, ms } = await timed(() =>
      app.inject({ url: VERIFY, headers: { authorization: token } }),
    );
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().error.code, 'unavailable');
    assert.ok(ms < LOCK_HELD_MS / 2, `answered after ${Math.round(ms)} ms`);
    // The cancelled statement gave its connection back: the pool still answers.
    assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);
  },
);

test(
  'a page whose storage is locked says so: 503 with Retry-After, no detail',
  postgresOnly,
  async (t) => {
    const { app, services, lock, logs } = await appWithLockedTable(t, {
      DATABASE_LOCK_TIMEOUT_MS: '300',
    });
    const portal = await portalWithPassword(services);
    const browser = new Browser(app);
    await browser.signIn(portal.email);
    await lock('sessions');
    const { value: res, ms } = await timed(() => browser.get('/settings'));
    assert.equal(res.statusCode, 503);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['retry-after'], '30');
    assert.match(res.body, /not answering right now/);
    assert.doesNotMatch(res.body, /lock|55P03|sessions/i);
    assert.ok(ms < LOCK_HELD_MS / 2, `answered after ${Math.round(ms)} ms`);
    // Said on the request's one access line, with the error's code (access-log.ts).
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(
      logs.some((l) => l.includes('request completed') && l.includes('"code":"unavailable"')),
      'the access line carries the code',
    );
  },
);
