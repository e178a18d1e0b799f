/**
 * Listens for token changes (`LISTEN portico_token_change`) and keeps this instance's
 * verification cache honest: each notification drops the portal's entries; while not listening
 * the cache is distrusted (every lookup reads the database).
 *
 * - PostgreSQL: a dedicated `pg.Client` (not one of the pool's: a pooled session would be handed
 *   to queries and could lose its LISTEN), with TCP keep-alive and a heartbeat query so that a
 *   silently dead connection is noticed within `heartbeatMs + heartbeatTimeoutMs`. When the
 *   session ends or fails the listener distrusts the cache at once, logs a warning and
 *   reconnects with exponential backoff (with jitter); the cache is trusted again only after
 *   `LISTEN` has been acknowledged, so no change committed after that point is missed.
 * - PGlite (one process): `PGlite.listen`, which delivers the notification in-process when the
 *   transaction commits. Never drops.
 *
 * Note for deployments: LISTEN needs a session, so `DATABASE_URL` must not point at a pooler
 * in transaction mode (PgBouncer's default) for this connection. See docs/deployment.md.
 *
 * @see https://www.postgresql.org/docs/current/sql-listen.html
 * @see ./principal-cache.ts for the invariants this feeds
 */
import pg from 'pg';
import { parseTokenChangePayload, TOKEN_CHANGE_CHANNEL } from './token-change-channel.ts';
import type { Storage } from '../db/client.ts';
import type { PrincipalCache } from './principal-cache.ts';
import type { Logger } from '../platform/logger.ts';

/** `application_name` of the listening session, to find it in `pg_stat_activity`. */
export const LISTENER_APPLICATION_NAME = 'portico-token-listener';

/** Timings of the PostgreSQL listener, in milliseconds. */
export interface ListenerTiming {
  /** Interval between heartbeat queries on the listening session. */
  heartbeatMs: number;
  /** A heartbeat slower than this counts as a dead connection (and is safe: read-through). */
  heartbeatTimeoutMs: number;
  /** Longest a connection attempt may take. */
  connectTimeoutMs: number;
  /** First reconnect delay; doubles per failed attempt up to `backoffMaxMs`. */
  backoffMinMs: number;
  backoffMaxMs: number;
}

export const DEFAULT_LISTENER_TIMING: ListenerTiming = {
  heartbeatMs: 5_000,
  heartbeatTimeoutMs: 2_000,
  connectTimeoutMs: 10_000,
  backoffMinMs: 100,
  backoffMaxMs: 5_000,
};

export interface TokenChangeListener {
  /** Settles after the first attempt to listen, whether it succeeded or not. Never rejects. */
  readonly ready: Promise<void>;
  /** True while notifications are being received (the cache is trusted). */
  readonly listening: boolean;
  /** PostgreSQL backend pid of the listening session while listening; null otherwise. */
  readonly backendPid: number | null;
  /** Stop listening and reconnecting. Idempotent. */
  close(): Promise<void>;
}

export interface TokenChangeListenerDeps {
  storage: Storage;
  cache: PrincipalCache;
  logger: Logger;
  /**
   * PostgreSQL URL for the listening session when it must differ from the storage's (the
   * storage goes through a transaction-mode pooler, which cannot hold a LISTEN).
   */
  listenUrl?: string | undefined;
  timing?: Partial<ListenerTiming>;
}

/** Nothing to keep honest: the cache is off, so every lookup reads the database anyway. */
const INERT: TokenChangeListener = {
  ready: Promise.resolve(),
  listening: false,
  backendPid: null,
  close: async () => {},
};

function handleNotification(cache: PrincipalCache, payload: string | undefined): void {
  const portalId = parseTokenChangePayload(payload);
  if (portalId === null) cache.invalidateAll();
  else cache.invalidatePortal(portalId);
}

/** Start listening for token changes on `storage`; see the module comment. */
export function startTokenChangeListener(deps: TokenChangeListenerDeps): TokenChangeListener {
  if (!deps.cache.stats().enabled) return INERT;
  if (deps.storage.pglite) return listenPglite(deps);
  const connectionString = deps.listenUrl ?? deps.storage.pool?.options.connectionString;
  if (!connectionString) throw new Error('PostgreSQL storage without a connection string.');
  return listenPostgres(connectionString, deps);
}

function listenPglite({ storage, cache }: TokenChangeListenerDeps): TokenChangeListener {
  const pglite = storage.pglite!;
  let listening = false;
  let unlisten: (() => Promise<void>) | null = null;
  const ready = pglite
    .listen(TOKEN_CHANGE_CHANNEL, (payload) => handleNotification(cache, payload))
    .then((stop) => {
      unlisten = stop;
      listening = true;
      cache.trust();
    });
  return {
    ready,
    get listening() {
      return listening;
    },
    backendPid: null,
    async close() {
      await ready;
      listening = false;
      cache.distrust();
      const stop = unlisten;
      unlisten = null;
      if (stop && !pglite.closed) await stop();
    },
  };
}

function listenPostgres(
  connectionString: string,
  { cache, logger, timing: overrides }: TokenChangeListenerDeps,
): TokenChangeListener {
  const timing = { ...DEFAULT_LISTENER_TIMING, ...overrides };
  const log = logger.child({ component: 'token-change-listener' });
  let closed = false;
  let current: pg.Client | null = null;
  /** The client of the attempt in progress, so that close() can end it too. */
  let connecting: pg.Client | null = null;
  let backendPid: number | null = null;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;

  /** The session is gone (or never came): distrust at once, then try again later. */
  function lost(err: unknown, wasListening: boolean): void {
    clearInterval(heartbeatTimer);
    backendPid = null;
    cache.distrust();
    if (closed) return;
    const retryInMs = backoffMs(timing, failures++);
    log.warn(
      { err, retryInMs },
      wasListening
        ? 'token change listener lost its connection: verifying every token against the database until listening again'
        : 'token change listener could not listen: verifying every token against the database until it does',
    );
    retryTimer = setTimeout(() => void connect(), retryInMs);
    retryTimer.unref();
  }

  async function connect(): Promise<void> {
    const client = new pg.Client({
      connectionString,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
      keepAliveInitialDelayMillis: timing.heartbeatMs,
      connectionTimeoutMillis: timing.connectTimeoutMs,
    });
    connecting = client;
    let dead = false;
    const fail = (err?: unknown): void => {
      if (dead) return;
      dead = true;
      const wasListening = current === client;
      if (wasListening) current = null;
      client.removeAllListeners('notification');
      client.end().catch(() => {});
      lost(err, wasListening);
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('connection ended')));
    client.on('notification', (message) => {
      if (message.channel === TOKEN_CHANGE_CHANNEL) handleNotification(cache, message.payload);
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      await client.query(`listen ${TOKEN_CHANGE_CHANNEL}`);
      if (closed) {
        dead = true;
        await client.end().catch(() => {});
        return;
      }
      if (dead) return;
      current = client;
      backendPid = rows[0]?.pid ?? null;
      // LISTEN is acknowledged: every change committed from now on reaches us.
      cache.trust();
      log.info(
        { backendPid, afterFailures: failures },
        'token change listener is listening: verification cache on',
      );
      failures = 0;
      heartbeatTimer = startHeartbeat(client, timing, fail);
    } catch (err) {
      fail(err);
    } finally {
      if (connecting === client) connecting = null;
    }
  }

  const ready = connect();
  return {
    ready,
    get listening() {
      return current !== null;
    },
    get backendPid() {
      return backendPid;
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      clearInterval(heartbeatTimer);
      await ready;
      const pending = connecting;
      connecting = null;
      pending?.end().catch(() => {});
      const client = current;
      current = null;
      cache.distrust();
      if (client) {
        client.removeAllListeners('end');
        client.removeAllListeners('error');
        client.on('error', () => {});
        await client.end().catch(() => {});
      }
    },
  };
}

/** The reconnect delay after `failures` failed attempts: exponential, capped, half jittered. */
function backoffMs(timing: ListenerTiming, failures: number): number {
  const ceiling = Math.min(timing.backoffMaxMs, timing.backoffMinMs * 2 ** failures);
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

/**
 * A `select 1` on the listening session every `heartbeatMs`; one slower than
 * `heartbeatTimeoutMs`, or failing, calls `fail` (the session is then treated as lost).
 */
function startHeartbeat(
  client: pg.Client,
  timing: ListenerTiming,
  fail: (err?: unknown) => void,
): NodeJS.Timeout {
  let beating = false;
  const timer = setInterval(() => {
    if (beating) return;
    beating = true;
    let deadline: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      deadline = setTimeout(
        () => reject(new Error('heartbeat timed out')),
        timing.heartbeatTimeoutMs,
      );
    });
    Promise.race([client.query('select 1'), timeout])
      .catch((err: unknown) => fail(err))
      .finally(() => {
        clearTimeout(deadline);
        beating = false;
      });
  }, timing.heartbeatMs);
  timer.unref();
  return timer;
}
