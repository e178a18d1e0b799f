/**
 * The one engine over the registry of sealed values (sealed-columns.ts): re-seal every value
 * under the keyring's active key in batches (`keys rotate`), seal what is still stored in clear,
 * count the values per key (`keys check`), and refuse to start while a value is sealed under a
 * key the keyring no longer has.
 *
 * Batches walk each table by its key, so a run that stops (a crash, a `--max` limit) loses
 * nothing: the next run picks up the rows still under another key. Each row is updated only if it
 * still holds the ciphertext that was read, so a concurrent write is never overwritten. Counts,
 * column names and key ids only: no value is ever logged or returned.
 *
 * @see docs/how-to/rotate-keys.md
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from './client.ts';
import {
  DecryptionError,
  KeySpecError,
  type Keyring,
  type SealedValue,
} from '../platform/keyring.ts';
import { SEALED_COLUMNS, type SealedColumn } from './sealed-columns.ts';

/** Rows per batch (one transaction each), by default. */
export const RESEAL_BATCH = 500;

/** How many values of one column are sealed under one key (`keyId` null: still in clear). */
export interface KeyUse {
  column: string;
  keyId: string | null;
  rows: number;
}

/** What a run did to one column. */
export interface ColumnReseal {
  column: string;
  /** Values re-sealed from another key under the active one. */
  resealed: number;
  /** Values sealed from clear. */
  sealed: number;
  /** Values that did not open (tampered, or bound to another row), left as they are. */
  unreadable: number;
}

/** What a run did, and what is left under other keys or in clear. */
export interface ResealResult {
  activeKeyId: string;
  columns: ColumnReseal[];
  /** Values still under another key or in clear after the run (0 when done). */
  remaining: number;
}

/** Thrown at start-up when a sealed value names a key the keyring does not have. */
export class RetiredKeyInUseError extends KeySpecError {
  constructor(readonly uses: readonly KeyUse[]) {
    const total = uses.reduce((n, u) => n + u.rows, 0);
    const where = uses.map((u) => `${u.column} ${u.rows} under ${u.keyId}`).join(', ');
    super(
      `${total} sealed value(s) use a key that is not in TOKEN_ENCRYPTION_KEYS (${where}). ` +
        'Put the key back after the active one, run `keys rotate`, and remove it only when ' +
        '`keys check` shows no value under it.',
    );
    this.name = 'RetiredKeyInUseError';
  }
}

type Db = Database;
type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

async function rows<T>(db: Db | Tx, query: SQL): Promise<T[]> {
  const result: unknown = await db.execute(query);
  return (result as { rows: T[] }).rows;
}

const live = (c: SealedColumn): SQL => (c.live ? sql` and ${c.live()}` : sql``);

/**
 * How many values each column holds per key id, and in clear (`keyId` null). Scans each table.
 *
 * @returns one entry per column and key with at least one row, in registry order.
 */
export async function countKeyUses(
  db: Db,
  columns: readonly SealedColumn[] = SEALED_COLUMNS,
): Promise<KeyUse[]> {
  const uses: KeyUse[] = [];
  for (const c of columns) {
    const found = await rows<{ key_id: string; n: number }>(
      db,
      sql`select ${c.keyId} as key_id, count(*)::int as n from ${c.table}
          where ${c.keyId} is not null${live(c)} group by 1 order by 1`,
    );
    uses.push(...found.map((r) => ({ column: c.name, keyId: r.key_id, rows: Number(r.n) })));
    if (c.clear) {
      const [clear] = await rows<{ n: number }>(
        db,
        sql`select count(*)::int as n from ${c.table} where ${c.clear.where}`,
      );
      if (Number(clear?.n ?? 0) > 0)
        uses.push({ column: c.name, keyId: null, rows: Number(clear!.n) });
    }
  }
  return uses;
}

/**
 * The values sealed under a key that `keyring` does not have (they cannot be opened).
 *
 * @returns one entry per column and unknown key, in registry order; empty when all is readable.
 */
export async function retiredKeyUses(
  db: Db,
  keyring: Pick<Keyring, 'keyIds'>,
  columns: readonly SealedColumn[] = SEALED_COLUMNS,
): Promise<KeyUse[]> {
  const uses: KeyUse[] = [];
  for (const c of columns) {
    const found = await rows<{ key_id: string; n: number }>(
      db,
      sql`select ${c.keyId} as key_id, count(*)::int as n from ${c.table}
          where ${c.keyId} not in ${[...keyring.keyIds]}${live(c)} group by 1 order by 1`,
    );
    uses.push(...found.map((r) => ({ column: c.name, keyId: r.key_id, rows: Number(r.n) })));
  }
  return uses;
}

/**
 * Refuse to run over a database holding values sealed under a key the keyring lacks: such a
 * value would read as erased (message content) or fail (a provider token, a webhook secret).
 *
 * @throws RetiredKeyInUseError naming the columns, keys and counts (never a value).
 */
export async function assertKeyringOpensAll(
  db: Db,
  keyring: Pick<Keyring, 'keyIds'>,
  columns: readonly SealedColumn[] = SEALED_COLUMNS,
): Promise<void> {
  const uses = await retiredKeyUses(db, keyring, columns);
  if (uses.length > 0) throw new RetiredKeyInUseError(uses);
}

/**
 * Start-up: refuse a database holding a value no listed key opens, then seal the values still in
 * clear (rows written before their column was sealed), before anything reads them.
 *
 * @throws RetiredKeyInUseError naming the columns, keys and counts.
 */
export async function prepareSealedValues(db: Db, keyring: Keyring): Promise<void> {
  await assertKeyringOpensAll(db, keyring);
  await sealClearValues(db, keyring);
}

/**
 * Seal every value still in clear (the columns with a `clear` part), in batches: run at start-up
 * and by `keys rotate`.
 *
 * @returns how many values were sealed, per column (only columns with a `clear` part).
 */
export async function sealClearValues(
  db: Db,
  keyring: Pick<Keyring, 'seal'>,
  options: { batch?: number; max?: number } = {},
  columns: readonly SealedColumn[] = SEALED_COLUMNS,
): Promise<{ column: string; sealed: number }[]> {
  const out = [];
  let budget = options.max ?? Number.POSITIVE_INFINITY;
  for (const c of columns) {
    if (!c.clear) continue;
    const sealed = await sealClear(db, keyring, c, options.batch ?? RESEAL_BATCH, budget);
    budget -= sealed;
    out.push({ column: c.name, sealed });
  }
  return out;
}

async function sealClear(
  db: Db,
  keyring: Pick<Keyring, 'seal'>,
  c: SealedColumn,
  batch: number,
  max: number,
): Promise<number> {
  const clear = c.clear!;
  let done = 0;
  while (done < max) {
    const size = Math.min(batch, max - done);
    const found = await db.transaction(async (tx) => {
      const due = await rows<{ key: string | number; portal_id: number; plaintext: string }>(
        tx,
        sql`select ${c.key} as key, ${c.portalId} as portal_id, ${clear.plaintext} as plaintext
            from ${c.table} where ${clear.where} order by ${c.key} limit ${size} for update`,
      );
      for (const row of due) {
        const sealed = keyring.seal(row.plaintext, row.portal_id, c.purpose, subject(c, row.key));
        await tx.execute(
          sql`update ${c.table} set ${c.store(sealed)}, ${clear.forget}
              where ${c.key} = ${row.key} and ${clear.where}`,
        );
      }
      return due.length;
    });
    done += found;
    if (found < size) break;
  }
  return done;
}

const subject = (c: SealedColumn, key: string | number) =>
  c.subjectIsKey ? String(key) : undefined;

/**
 * Re-seal under the active key every value the keyring can open that is under another key, then
 * seal the values still in clear; batches of `batch` rows, one transaction each, at most `max`
 * values in this run (`keys rotate --max`, so a long rotation can report progress and resume).
 *
 * @param onProgress called after each batch with the column and its counts so far.
 * @returns the counts per column, and how many values are left under another key or in clear
 *   (values under a key the keyring lacks are left, and counted there).
 */
export async function resealAll(
  db: Db,
  keyring: Keyring,
  options: {
    batch?: number;
    max?: number;
    onProgress?: (progress: ColumnReseal) => void;
  } = {},
  columns: readonly SealedColumn[] = SEALED_COLUMNS,
): Promise<ResealResult> {
  const batch = options.batch ?? RESEAL_BATCH;
  let budget = options.max ?? Number.POSITIVE_INFINITY;
  const result: ColumnReseal[] = [];
  for (const c of columns) {
    const counts: ColumnReseal = { column: c.name, resealed: 0, sealed: 0, unreadable: 0 };
    result.push(counts);
    let after: string | number | undefined;
    while (budget > 0) {
      const size = Math.min(batch, budget);
      const batchResult = await resealBatch(db, keyring, c, size, after);
      counts.resealed += batchResult.resealed;
      counts.unreadable += batchResult.unreadable;
      budget -= batchResult.read;
      after = batchResult.last;
      if (batchResult.read > 0) options.onProgress?.({ ...counts });
      if (batchResult.read < size) break;
    }
    if (c.clear && budget > 0) {
      counts.sealed = await sealClear(db, keyring, c, batch, budget);
      budget -= counts.sealed;
      if (counts.sealed > 0) options.onProgress?.({ ...counts });
    }
  }
  const remaining = (await countKeyUses(db, columns))
    .filter((u) => u.keyId !== keyring.activeKeyId)
    .reduce((n, u) => n + u.rows, 0);
  return { activeKeyId: keyring.activeKeyId, columns: result, remaining };
}

async function resealBatch(
  db: Db,
  keyring: Keyring,
  c: SealedColumn,
  size: number,
  after: string | number | undefined,
): Promise<{ read: number; resealed: number; unreadable: number; last?: string | number }> {
  return db.transaction(async (tx) => {
    const due = await rows<{ key: string | number; portal_id: number; sealed: SealedValue }>(
      tx,
      sql`select ${c.key} as key, ${c.portalId} as portal_id, ${c.sealed} as sealed
          from ${c.table}
          where ${c.keyId} <> ${keyring.activeKeyId} and ${c.keyId} in ${[...keyring.keyIds]}
            ${live(c)}${after === undefined ? sql`` : sql` and ${c.key} > ${after}`}
          order by ${c.key} limit ${size}`,
    );
    let resealed = 0;
    let unreadable = 0;
    for (const row of due) {
      const about = subject(c, row.key);
      let plaintext: string;
      try {
        plaintext = keyring.open(row.sealed, row.portal_id, c.purpose, about);
      } catch (err) {
        if (!(err instanceof DecryptionError)) throw err;
        unreadable++;
        continue;
      }
      const sealed = keyring.seal(plaintext, row.portal_id, c.purpose, about);
      const updated = await rows<{ key: string }>(
        tx,
        sql`update ${c.table} set ${c.store(sealed)}
            where ${c.key} = ${row.key} and ${c.ciphertext} = ${row.sealed.ciphertext}
            returning 1 as key`,
      );
      resealed += updated.length;
    }
    const last = due.at(-1)?.key;
    return { read: due.length, resealed, unreadable, ...(last !== undefined && { last }) };
  });
}
