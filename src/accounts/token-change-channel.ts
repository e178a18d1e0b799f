/**
 * The PostgreSQL notification channel that tells every instance a portal's API token changed
 * (regenerated or re-scoped), so each drops what it cached for that portal.
 *
 * The payload is the portal's internal id in decimal: never a token, never a hash. The
 * notification is sent inside the transaction that makes the change, so PostgreSQL delivers it
 * exactly when the change commits (and never when it rolls back), to every listening session,
 * whichever process made the change (server, admin CLI, another instance).
 *
 * @see https://www.postgresql.org/docs/current/sql-notify.html
 * @see docs/decisions/0002-api-tokens.md
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';

/** Channel name (an SQL identifier: lower case, no quoting needed). */
export const TOKEN_CHANGE_CHANNEL = 'portico_token_change';

/** Anything that can run a statement: the database or a transaction. */
type Executor = Pick<Database, 'execute'>;

/**
 * Queue the notification for `portalId` in the current transaction. Call it inside the same
 * `db.transaction(...)` as the change itself.
 */
export async function notifyTokenChange(tx: Executor, portalId: number): Promise<void> {
  await tx.execute(sql`select pg_notify(${TOKEN_CHANGE_CHANNEL}, ${String(portalId)})`);
}

/**
 * The portal id a notification names, or null when the payload is not one (a listener then
 * drops everything it cached, which is always safe).
 */
export function parseTokenChangePayload(payload: string | undefined): number | null {
  if (payload === undefined || !/^[1-9][0-9]{0,15}$/.test(payload)) return null;
  return Number(payload);
}
