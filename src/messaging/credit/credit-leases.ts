/**
 * Escrow blocks of credit in the database (docs/decisions/0026-credit-escrow.md): taking a
 * block from a portal's account, settling one, and the fence a send's statement puts on its
 * block. The instance's side (which block a send reserves from) is credit-escrow.ts.
 *
 * Lock order, the same everywhere so that nothing deadlocks: the account row (`FOR UPDATE`),
 * then block rows (`FOR UPDATE`). A send locks only its block row, `FOR KEY SHARE`, which
 * conflicts with `FOR UPDATE` but not with other sends; captures and releases lock only the
 * account row and never wait for a block.
 *
 * The invariant kept: for every open block, the reservations inserted with its id never exceed
 * its `amount` (credit-escrow.ts counts them before each insert), and a block is settled only
 * under its `FOR UPDATE` lock, after which no reservation can name it (the row is gone, and a
 * send's fence finds nothing). So `credit_accounts.reserved` always covers every queued
 * message's reservation, and `reserved ≤ balance` (a CHECK) keeps the balance from going
 * negative.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database, Transaction as Tx } from '../../db/client.ts';
import { creditAccounts, creditLeases, creditTransactions } from '../../db/schema/credit.ts';
import { postLocked } from './credit-ledger.ts';

/** A block as the database holds it: its id and its size in minor units. */
export interface Lease {
  id: number;
  amount: number;
}

const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;

/**
 * The fence of a send's statement, as a `WITH` entry: the block's row `FOR KEY SHARE`, or no
 * row when the block was settled (then the statement must insert nothing).
 */
export function leaseFence(leaseId: number): SQL {
  return sql`select id from ${creditLeases} where id = ${leaseId} for key share`;
}

/**
 * Settle one block inside the caller's transaction, which already holds the account row: wait
 * for the sends holding it, then give back its amount less the reservations made from it, and
 * delete it.
 *
 * @returns false when the block was already settled (by another instance).
 */
async function settleLocked(tx: Tx, leaseId: number): Promise<boolean> {
  const locked = rowsOf<{ id: string }>(
    await tx.execute(sql`select id from ${creditLeases} where id = ${leaseId} for update`),
  );
  if (locked.length === 0) return false;
  // A new statement, so its snapshot holds every reservation committed before the lock.
  await tx.execute(sql`
    with used as (
      select coalesce(sum(amount), 0)::bigint as n from ${creditTransactions}
      where lease_id = ${leaseId} and kind = 'reserve'),
    gone as (delete from ${creditLeases} where id = ${leaseId} returning portal_id, amount)
    update ${creditAccounts} a set reserved = a.reserved - (gone.amount - used.n),
      updated_at = now()
    from gone, used where a.portal_id = gone.portal_id`);
  return true;
}

async function lockAccount(tx: Tx, portalId: number) {
  const [row] = rowsOf<{ balance: string | number; reserved: string | number }>(
    await tx.execute(
      sql`select balance, reserved from ${creditAccounts} where portal_id = ${portalId} for update`,
    ),
  );
  return row ? Number(row.balance) - Number(row.reserved) : null;
}

/**
 * Settle one block of the portal (its holder's return, at shutdown or once it is used up).
 *
 * @returns false when it was already settled.
 */
export function settleLease(db: Database, portalId: number, leaseId: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    if ((await lockAccount(tx, portalId)) === null) return false;
    return settleLocked(tx, leaseId);
  });
}

/**
 * Take a block for `holder` in one short transaction: lock the account, post its unposted
 * captures and releases (credit-ledger.ts), settle the portal's
 * blocks older than `maxAgeS` (their holder is gone or idle), and when what is not leased does
 * not cover `price` and `settleAll` is set, settle every other block too (each waits for the
 * sends holding it), so that a refusal means the portal's credit as a whole does not cover the
 * price. The block is `desired`, at most half of what is not leased, at least `price`.
 *
 * @returns the block, or null when the credit does not cover `price` (nothing leased); and the
 *   blocks this transaction settled (their holders' sends fail their fence and lease again).
 */
export function takeLease(
  db: Database,
  args: {
    portalId: number;
    holder: string;
    price: number;
    desired: number;
    settleAll: boolean;
    maxAgeS: number;
  },
): Promise<{ lease: Lease | null; settled: number[] }> {
  return db.transaction(async (tx) => {
    if ((await lockAccount(tx, args.portalId)) === null) return { lease: null, settled: [] };
    // What the provider's events released counts before the division below.
    await postLocked(tx, args.portalId);
    let unleased = (await lockAccount(tx, args.portalId)) ?? 0;
    const open = rowsOf<{ id: string | number; stale: boolean }>(
      await tx.execute(sql`select id, created_at < now() - make_interval(secs => ${args.maxAgeS})
          as stale from ${creditLeases} where portal_id = ${args.portalId} order by id`),
    );
    const settled: number[] = [];
    const settle = async (ids: number[]) => {
      if (ids.length === 0) return;
      for (const id of ids) if (await settleLocked(tx, id)) settled.push(id);
      unleased = (await lockAccount(tx, args.portalId)) ?? 0;
    };
    await settle(open.filter((l) => l.stale).map((l) => Number(l.id)));
    if (unleased < args.price && args.settleAll)
      await settle(open.filter((l) => !l.stale).map((l) => Number(l.id)));
    if (unleased < args.price) return { lease: null, settled };
    const amount = Math.min(args.desired, Math.max(args.price, Math.floor(unleased / 2)));
    await tx.execute(sql`update ${creditAccounts} set reserved = reserved + ${amount},
        updated_at = now() where portal_id = ${args.portalId}`);
    const [lease] = rowsOf<{ id: string | number }>(
      await tx.execute(sql`insert into ${creditLeases} (portal_id, holder, amount)
          values (${args.portalId}, ${args.holder}, ${amount}) returning id`),
    );
    return { lease: { id: Number(lease!.id), amount }, settled };
  });
}

/** The advisory-lock class of `lockCreditZone` (its second key is the portal id). */
const CREDIT_ZONE_LOCK = 0x63726564; // 'cred'

/**
 * Lock the portal's credit "zone" for the rest of the transaction: the sends that may take the
 * available credit below the `credit.low` threshold run one at a time, each seeing the ones
 * before it committed (credit-escrow.ts). An advisory lock, not the account row: a send holding
 * its block's fence must never wait for the account row, which a lease holds while it waits for
 * that fence.
 */
export async function lockCreditZone(tx: Tx, portalId: number): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${CREDIT_ZONE_LOCK}::int, ${portalId}::int)`);
}
