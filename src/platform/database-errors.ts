/**
 * What a database failure is, read from PostgreSQL's SQLSTATE codes (node-postgres and PGlite
 * errors alike, through Drizzle's `cause` wrapping). Pure functions over error objects: the
 * error envelope and the services use them without importing the database layer.
 *
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 */

/** PostgreSQL SQLSTATE of a unique violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * True when `err` (or its cause: Drizzle wraps driver errors) is a unique violation, optionally
 * of the named constraint. Works for node-postgres and PGlite errors alike.
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  for (const { code, constraint: name } of causeChain(err)) {
    if (code === UNIQUE_VIOLATION) return constraint === undefined || name === constraint;
  }
  return false;
}

/** `err` and its causes, outermost first: Drizzle wraps the driver's error in `cause`. */
function* causeChain(
  err: unknown,
): Generator<{ code?: unknown; constraint?: unknown; message?: unknown }> {
  for (let e: unknown = err; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    yield e;
  }
}

/**
 * The first SQLSTATE (or network error code) in `err`'s cause chain, for a log line: never the
 * error object itself, whose message may quote the query's parameters.
 */
export function databaseErrorCode(err: unknown): string | undefined {
  for (const { code } of causeChain(err)) if (typeof code === 'string') return code;
  return undefined;
}

/**
 * Error codes (errno and our own) of a database connection that cannot be made or was lost, of
 * a full pool queue, and of a disk under the embedded database that cannot take a write.
 */
export const CONNECTION_ERRNOS: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // The embedded database's disk: full, over quota, failing.
  'ENOSPC',
  'EDQUOT',
  'EIO',
  // The pool's bounded queue was full (db/client.ts).
  'POOL_QUEUE_FULL',
]);

/** SQLSTATEs of a statement ended by one of the pool's timeouts (db/client.ts). */
const TIMED_OUT = new Set([
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '25P03', // idle_in_transaction_session_timeout
]);

/**
 * SQLSTATEs of a database that cannot be reached or cannot serve now: classes 08 (connection
 * exception), 28 (invalid authorization), 53 (insufficient resources), and 55000, 57P01–57P05,
 * 3D000.
 */
const CANNOT_SERVE_SQLSTATE =
  /^(?:08[0-9A-Z]{3}|28[0-9A-Z]{3}|53[0-9A-Z]{3}|55000|57P0[1-5]|3D000)$/;

/**
 * What kind of database failure `err` is (walking Drizzle's `cause` chain):
 * - `data`: PostgreSQL refused a value (SQLSTATE class 22, e.g. a NUL byte in text, a number
 *   out of range) — the client's input;
 * - `unavailable`: the database cannot be reached or cannot serve now (class 08 connection
 *   exceptions, class 53 insufficient resources such as 53300 too many connections, 55000
 *   object not in prerequisite state, operator intervention 57P01–57P05, 3D000 no such
 *   database, class 28 refused authorization, a refused or lost connection — a connection
 *   ended inside a transaction included —, a pool timeout or a full pool queue, a closed
 *   PGlite, a full or failing disk under it) or did not answer in time (57014 query_canceled by `statement_timeout`,
 *   55P03 lock_not_available by `lock_timeout`, 25P03 idle_in_transaction_session_timeout) — a
 *   503 the client may retry, never a 500;
 * - null: anything else (a bug of ours).
 *
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
export function databaseFailureKind(err: unknown): 'data' | 'unavailable' | null {
  for (const { code, message } of causeChain(err)) {
    if (typeof code === 'string') {
      if (/^22[0-9A-Z]{3}$/.test(code)) return 'data';
      if (CANNOT_SERVE_SQLSTATE.test(code) || TIMED_OUT.has(code)) return 'unavailable';
      if (CONNECTION_ERRNOS.has(code)) return 'unavailable';
    }
    if (
      typeof message === 'string' &&
      /timeout exceeded when trying to connect|PGlite is closed|Connection terminated|Cannot use a pool after calling end|is not queryable/i.test(
        message,
      )
    ) {
      return 'unavailable';
    }
  }
  return null;
}
