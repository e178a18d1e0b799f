/**
 * The `db` that pg-boss runs its SQL through (its `db` option, and `send`'s per-call `db`), so
 * the job queue lives in the same database as everything else on both backends:
 *
 * - `storageJobDb(storage)`: the storage's own connection. PGlite has no pool and one
 *   connection; pg-boss sends its schema migrations as one multi-statement text without values,
 *   which only PGlite's `exec` accepts, so such texts go there and the rest through `query`. On
 *   PostgreSQL `pool.query` takes both (a text without values goes by the simple protocol).
 * - `transactionJobDb(tx)`: a Drizzle transaction, so a job is inserted in the same transaction
 *   as the rows it is about (the message and its credit reservation): both commit or neither.
 *
 * @see https://github.com/timgit/pg-boss/blob/10.4.2/docs/readme.md ("db" option)
 * @see docs/architecture.md "jobs/"
 */
import type { Database, Storage } from '../db/client.ts';

/** pg-boss's `Db` contract: run `text` with positional `$n` values, answer its rows. */
export interface JobDb {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/** A plain object (pg-boss's job `data`) goes to the database as JSON text. */
function toParam(value: unknown): unknown {
  // Drizzle renders an `undefined` parameter as nothing at all (a syntax error): send NULL.
  if (value === undefined) return null;
  if (value && typeof value === 'object' && !(value instanceof Date) && !Array.isArray(value)) {
    if (!Buffer.isBuffer(value)) return JSON.stringify(value);
  }
  return value;
}

/** A connection that runs `$n`-parameterised text: node-postgres' client, PGlite's transaction. */
interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * The connection under a Drizzle transaction. Drizzle keeps it as the transaction's
 * `session.client` (node-postgres: the pool client holding BEGIN; PGlite: its transaction
 * object), which is not public API, so its shape is checked here and a drizzle-orm upgrade
 * that moves it fails loudly (the messaging tests send through it on both backends).
 * Statements are passed through unchanged, so pg-boss's own parameter types hold.
 */
function connectionOf(tx: Tx): Queryable {
  const client = (tx as unknown as { session?: { client?: Partial<Queryable> } }).session?.client;
  if (!client || typeof client.query !== 'function')
    throw new Error('drizzle transaction has no session.client.query (drizzle-orm changed?)');
  return client as Queryable;
}

/** pg-boss over a Drizzle transaction: its statements join the transaction. */
export function transactionJobDb(tx: Tx): JobDb {
  const connection = connectionOf(tx);
  return {
    async executeSql(text, values) {
      const result = await connection.query(text, values?.map(toParam));
      return { rows: result.rows };
    },
  };
}

/**
 * pg-boss over the storage's connection (PGlite) or pool (PostgreSQL).
 *
 * @throws Error when the storage has neither (cannot happen with `openStorage`'s result).
 */
export function storageJobDb(storage: Storage): JobDb {
  const { pglite, pool } = storage;
  if (pglite) {
    return {
      async executeSql(text, values) {
        if (!values || values.length === 0) {
          // Multi-statement texts (pg-boss's migrations) need the simple protocol: `exec`.
          const results = await pglite.exec(text);
          return { rows: results.at(-1)?.rows ?? [] };
        }
        const result = await pglite.query(text, values.map(toParam));
        return { rows: result.rows };
      },
    };
  }
  if (pool) {
    return {
      async executeSql(text, values) {
        const result: unknown = await pool.query(
          text,
          values && values.length > 0 ? values : undefined,
        );
        // A multi-statement text answers one result per statement.
        const last = (Array.isArray(result) ? result.at(-1) : result) as
          { rows?: unknown[] } | undefined;
        return { rows: last?.rows ?? [] };
      },
    };
  }
  throw new Error('storage has neither a PGlite instance nor a pool');
}
