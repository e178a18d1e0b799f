/**
 * One PostgreSQL `LISTEN` session on one channel, kept alive, for any instance-wide signal
 * (token changes, conversation changes): the payload of each notification goes to `onNotify`;
 * `onListening` and `onLost` tell the owner when it may trust that it hears everything.
 *
 * - PostgreSQL: a dedicated `pg.Client` (not one of the pool's: a pooled session would be handed
 *   to queries and could lose its LISTEN), with TCP keep-alive and a heartbeat query so that a
 *   silently dead connection is noticed within `heartbeatMs + heartbeatTimeoutMs`. When the
 *   session ends or fails, `onLost` runs at once, a warning is logged (the retries that fail
 *   after it are counted in platform/fault-summary.ts's line per interval) and the listener
 *   reconnects with exponential backoff (with jitter); `onListening` runs only after `LISTEN`
 *   has been acknowledged, so no notification committed after that point is missed.
 * - PGlite (one process): `PGlite.listen`, which delivers the notification in-process when the
 *   transaction commits. Never drops.
 *
 * Note for deployments: LISTEN needs a session, so `DATABASE_URL` must not point at a pooler
 * in transaction mode (PgBouncer's default) for this connection. See docs/how-to/deploy.md.
 *
 * @see https://www.postgresql.org/docs/current/sql-listen.html
 * @see https://pglite.dev/docs/api#listen
 */
import pg from 'pg';
import { databaseErrorCode } from '../platform/database-errors.ts';
import { dependencyFaults } from '../platform/fault-summary.ts';
import type { Logger } from '../platform/logger.ts';
import type { Storage } from './client.ts';

/** Timings of the PostgreSQL listener, in milliseconds. */
export interface ListenerTiming {
  /** Interval between heartbeat queries on the listening session. */
  heartbeatMs: number;
  /** A heartbeat slower than this counts as a dead connection. */
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

export interface NotificationListener {
  /** Settles after the first attempt to listen, whether it succeeded or not. Never rejects. */
  readonly ready: Promise<void>;
  /** True while notifications are being received. */
  readonly listening: boolean;
  /** PostgreSQL backend pid of the listening session while listening; null otherwise. */
  readonly backendPid: number | null;
  /** Stop listening and reconnecting. Idempotent. */
  close(): Promise<void>;
}

export interface NotificationListenerOptions {
  storage: Storage;
  logger: Logger;
  /** The channel (an SQL identifier: lower case, no quoting needed). */
  channel: string;
  /** `application_name` of the listening session, to find it in `pg_stat_activity`. */
  applicationName: string;
  /** A notification's payload (`undefined`: none). */
  onNotify: (payload: string | undefined) => void;
  /** LISTEN is acknowledged: every notification committed from now on is heard. */
  onListening?: () => void;
  /** Notifications may be missed from now on (the session is gone, or the listener closed). */
  onLost?: () => void;
  /** The log lines' words: listening, the session lost, never listening (no data in them). */
  messages?: { listening: string; wasListening: string; never: string } | undefined;
  /** PostgreSQL URL for the listening session when it must differ from the storage's. */
  listenUrl?: string | undefined;
  timing?: Partial<ListenerTiming> | undefined;
}

/** Start listening on `options.channel`; see the module comment. */
export function startNotificationListener(
  options: NotificationListenerOptions,
): NotificationListener {
  if (options.storage.pglite) return listenPglite(options);
  const connectionString = options.listenUrl ?? options.storage.pool?.options.connectionString;
  if (!connectionString) throw new Error('PostgreSQL storage without a connection string.');
  return listenPostgres(connectionString, options);
}

function listenPglite(options: NotificationListenerOptions): NotificationListener {
  const pglite = options.storage.pglite!;
  let listening = false;
  let unlisten: (() => Promise<void>) | null = null;
  const ready = pglite
    .listen(options.channel, (payload) => options.onNotify(payload))
    .then((stop) => {
      unlisten = stop;
      listening = true;
      options.onListening?.();
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
      options.onLost?.();
      const stop = unlisten;
      unlisten = null;
      if (stop && !pglite.closed) await stop();
    },
  };
}

function listenPostgres(
  connectionString: string,
  options: NotificationListenerOptions,
): NotificationListener {
  const { channel, onNotify } = options;
  const timing = { ...DEFAULT_LISTENER_TIMING, ...options.timing };
  const log = options.logger.child({ component: options.applicationName });
  const words = options.messages ?? {
    listening: `listening on ${channel}`,
    wasListening: `${channel} listener lost its connection`,
    never: `${channel} listener could not listen`,
  };
  let closed = false;
  let current: pg.Client | null = null;
  /** The client of the attempt in progress, so that close() can end it too. */
  let connecting: pg.Client | null = null;
  let backendPid: number | null = null;
  let failures = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;

  /** The session is gone (or never came): tell the owner at once, then try again later. */
  function lost(err: unknown, wasListening: boolean): void {
    clearInterval(heartbeatTimer);
    backendPid = null;
    options.onLost?.();
    if (closed) return;
    const retryInMs = backoffMs(timing, failures);
    // The first failure is said with its cause (no stack: a dependency's fault, not a bug);
    // the retries of an outage are counted in the process's one summary line per interval.
    if (failures++ === 0)
      log.warn(
        {
          error: { code: databaseErrorCode(err), message: (err as Error | undefined)?.message },
          retryInMs,
        },
        wasListening ? words.wasListening : words.never,
      );
    else dependencyFaults.note('storage', databaseErrorCode(err), log);
    retryTimer = setTimeout(() => void connect(), retryInMs);
    retryTimer.unref();
  }

  async function connect(): Promise<void> {
    const client = new pg.Client({
      connectionString,
      application_name: options.applicationName,
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
      if (message.channel === channel) onNotify(message.payload);
    });
    try {
      await client.connect();
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      await client.query(`listen ${channel}`);
      if (closed) {
        dead = true;
        await client.end().catch(() => {});
        return;
      }
      if (dead) return;
      current = client;
      backendPid = rows[0]?.pid ?? null;
      // LISTEN is acknowledged: every notification committed from now on reaches us.
      options.onListening?.();
      log.info({ backendPid, afterFailures: failures }, words.listening);
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
      options.onLost?.();
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
