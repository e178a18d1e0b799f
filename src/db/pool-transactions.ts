/**
 * Transactions on a node-postgres pool that always give their client back.
 *
 * drizzle-orm's node-postgres session (0.45) checks a client out of the pool and sends `BEGIN`
 * before the `try` whose `finally` releases it. When `BEGIN` fails — the pool handed out an idle
 * connection the server has just ended (a restart, a failover, a cut) and the pool has not yet
 * seen its `error` — the client is never released: the pool counts it checked out for ever,
 * each such fault takes one connection from the pool's size until none is left, and
 * `pool.end()` never resolves. Here the session's `transaction` checks the client out itself,
 * runs drizzle's transaction on that one client (which then neither checks out nor releases),
 * and releases it in a `finally` whatever failed.
 *
 * @see https://node-postgres.com/apis/pool#releasing-clients
 * @see docs/decisions/0035-process-fault-policy.md
 */
import { NodePgSession } from 'drizzle-orm/node-postgres';
import type pg from 'pg';

type Session = NodePgSession<Record<string, unknown>, never>;
type SessionArgs = ConstructorParameters<typeof NodePgSession>;

/** Make every `db.transaction` on `pool` release its client (see the module's comment). */
export function releasingTransactions(db: object, pool: pg.Pool): void {
  // The session drizzle made for the pool, and what it was built with (private in drizzle's
  // types, public at run time): a session per transaction shares them.
  const session = (db as unknown as { session: Session }).session;
  const { dialect, schema, options } = session as unknown as {
    dialect: SessionArgs[1];
    schema: SessionArgs[2];
    options: SessionArgs[3];
  };
  session.transaction = async (transaction, config) => {
    const client = await pool.connect();
    try {
      return await new NodePgSession(client, dialect, schema, options).transaction(
        transaction as never,
        config,
      );
    } finally {
      client.release();
    }
  };
}
