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
 * @see docs/messaging.md "The queue"
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database, Storage } from './client.ts';

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

/**
 * `text` with `$n` placeholders as Drizzle SQL: each `$n` becomes a bound parameter (a
 * placeholder used twice is bound twice, with the same value).
 */
export function positionalSql(text: string, values: readonly unknown[] = []): SQL {
  const chunks: SQL[] = [];
  let last = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) {
    chunks.push(sql.raw(text.slice(last, match.index)));
    const index = Number(match[1]) - 1;
    if (index < 0 || index >= values.length) throw new Error(`no value for $${match[1]}`);
    chunks.push(sql`${toParam(values[index])}`);
    last = match.index + match[0].length;
  }
  chunks.push(sql.raw(text.slice(last)));
  return sql.join(chunks, sql.raw(''));
}

/** pg-boss over a Drizzle transaction: its statements join the transaction. */
export function transactionJobDb(tx: Tx): JobDb {
  return {
    async executeSql(text, values) {
      const result = (await tx.execute(positionalSql(text, values))) as unknown as {
        rows: unknown[];
      };
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
        const result = await pool.query(text, values && values.length > 0 ? values : undefined);
        // A multi-statement text answers one result per statement.
        const last = Array.isArray(result) ? (result.at(-1) as (typeof result)[0]) : result;
        return { rows: last?.rows ?? [] };
      },
    };
  }
  throw new Error('storage has neither a PGlite instance nor a pool');
}
