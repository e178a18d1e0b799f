/** PostgreSQL SQLSTATE of a unique violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * True when `err` (or its cause: Drizzle wraps driver errors) is a unique violation, optionally
 * of the named constraint. Works for node-postgres and PGlite errors alike.
 */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  for (let e: unknown = err; e instanceof Error || (e && typeof e === 'object');) {
    const { code, constraint: name } = e as { code?: unknown; constraint?: unknown };
    if (code === UNIQUE_VIOLATION) return constraint === undefined || name === constraint;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
