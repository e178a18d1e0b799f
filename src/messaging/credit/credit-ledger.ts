/**
 * The credit ledger: a portal's balance and reservations in integer minor units, and the
 * append-only transactions that moved them (docs/messaging.md "Credit").
 *
 * Invariants: 0 ≤ reserved ≤ balance (also CHECK constraints). No movement of one message
 * updates the account row, which would make it the portal's one hot row: sends reserve from
 * escrow blocks leased from the account (credit-leases.ts, credit-escrow.ts) and captures and
 * releases are written unposted, then posted in bulk (`postCredit`). `credit_accounts.reserved`
 * holds the blocks whole; a balance read (`readCredit`) counts the part of each open block not
 * yet reserved as available, and applies the unposted captures and releases, in one snapshot.
 * Every movement of a message's credit writes its transaction row in the same transaction as
 * the message's change.
 */
import { eq, sql } from 'drizzle-orm';
import { randomBase62 } from '../../platform/crypto.ts';
import { creditAccounts, creditLeases, creditTransactions } from '../../db/schema/credit.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';
import type { Database, Transaction as Tx } from '../../db/client.ts';

type Db = Database | Tx;

export type CreditTransactionRow = typeof creditTransactions.$inferSelect;
type Kind = CreditTransactionRow['kind'];

/** Public credit transaction id: `ctx_` + base62 of 16 random bytes. */
export function newCreditTransactionId(): string {
  return `ctx_${randomBase62(16)}`;
}

/**
 * A portal's credit as its users see it, or zero in `currency` when it never had an account:
 * `balance` (owned) and `reserved` (held by queued messages), so `balance − reserved` is what
 * sends can still reserve. From the account row, in one snapshot: the unposted captures taken
 * from both, the unposted releases from `reserved`, and each open escrow block's part not yet
 * reserved given back to what is available.
 */
export async function readCredit(
  db: Db,
  portalId: number,
  currency: string,
): Promise<{ balance: number; reserved: number; currency: string }> {
  const result: unknown = await db.execute(sql`
    with unposted as (
      select coalesce(sum(amount) filter (where kind = 'capture'), 0) as captured,
        coalesce(sum(amount), 0) as settled
      from ${creditTransactions} where portal_id = ${portalId} and not posted),
    unused as (
      select coalesce(sum(l.amount), 0)
        - coalesce((select sum(t.amount) from ${creditTransactions} t
            join ${creditLeases} b on b.id = t.lease_id
            where b.portal_id = ${portalId} and t.kind = 'reserve'), 0) as amount
      from ${creditLeases} l where l.portal_id = ${portalId})
    select a.balance - unposted.captured as balance, a.currency,
      a.reserved - unposted.settled - unused.amount as reserved
    from ${creditAccounts} a, unposted, unused where a.portal_id = ${portalId}`);
  const [row] = (result as { rows: { balance: unknown; reserved: unknown; currency: string }[] })
    .rows;
  if (!row) return { balance: 0, reserved: 0, currency };
  return { balance: Number(row.balance), reserved: Number(row.reserved), currency: row.currency };
}

/**
 * Post the portal's unposted captures and releases to its account row, in the caller's
 * transaction, which must hold the account row (`FOR UPDATE`, credit-leases.ts's lock order):
 * balance − captures, reserved − captures − releases. Each movement is posted once (a
 * concurrent posting waits for the account row, then finds them posted).
 */
export async function postLocked(tx: Tx, portalId: number): Promise<void> {
  await tx.execute(sql`
    with posted as (
      update ${creditTransactions} set posted = true
      where portal_id = ${portalId} and not posted returning kind, amount)
    update ${creditAccounts} a
    set balance = a.balance - p.captured, reserved = a.reserved - p.settled, updated_at = now()
    from (select coalesce(sum(amount) filter (where kind = 'capture'), 0) as captured,
        coalesce(sum(amount), 0) as settled from posted) p
    where a.portal_id = ${portalId} and p.settled > 0`);
}

/** Post the portal's unposted captures and releases in a short transaction of its own. */
export function postCredit(db: Database, portalId: number): Promise<void> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select 1 from ${creditAccounts} where portal_id = ${portalId} for update`);
    await postLocked(tx, portalId);
  });
}

async function record(
  tx: Tx,
  entry: {
    portalId: number;
    kind: Kind;
    amount: number;
    currency: string;
    messageId?: string | null;
    note?: string | null;
    actor: string;
    posted?: boolean;
  },
): Promise<string> {
  const id = newCreditTransactionId();
  await tx.insert(creditTransactions).values({ id, ...entry });
  return id;
}

/**
 * Add `amount` minor units to the portal's balance, creating the account in `currency`.
 *
 * @returns the credit after the top-up, as `readCredit` reads it, and the transaction id.
 */
export async function topUp(
  tx: Tx,
  args: { portalId: number; amount: number; currency: string; note: string; actor: string },
): Promise<{ balance: number; reserved: number; currency: string; transactionId: string }> {
  const [row] = await tx
    .insert(creditAccounts)
    .values({ portalId: args.portalId, balance: args.amount, currency: args.currency })
    .onConflictDoUpdate({
      target: creditAccounts.portalId,
      set: {
        balance: sql`${creditAccounts.balance} + ${args.amount}`,
        updatedAt: sql`now()`,
      },
    })
    .returning();
  const transactionId = await record(tx, {
    portalId: args.portalId,
    kind: 'topup',
    amount: args.amount,
    currency: row!.currency,
    note: args.note,
    actor: args.actor,
  });
  return { ...(await readCredit(tx, args.portalId, row!.currency)), transactionId };
}

/**
 * Spend a message's reservation (the provider sent it): balance and reserved both go down, once
 * posted. Call once per message, when it leaves `queued` for a sent status. Writes one
 * unposted transaction row, nothing else.
 */
export async function capture(
  tx: Tx,
  args: { portalId: number; amount: number; currency: string; messageId: string; actor: string },
): Promise<void> {
  if (args.amount === 0) return;
  await record(tx, { ...args, kind: 'capture', posted: false });
}

/**
 * Free the reservations of failed messages (one unposted transaction row each): reserved goes
 * down, once posted. Call once per message, when it leaves `queued` for `failed`.
 */
export async function release(
  tx: Tx,
  portalId: number,
  items: readonly { messageId: string; amount: number; currency: string }[],
  actor: string,
): Promise<void> {
  await settle(
    tx,
    portalId,
    items.map((i) => ({ ...i, kind: 'release' as const })),
    actor,
  );
}

/**
 * `capture` and `release` for many messages at once (a provider webhook's batch of statuses):
 * one unposted transaction row each, in the order given, written in one statement. Items of
 * amount 0 write nothing. Call once per message, as the two functions say.
 */
export async function settle(
  tx: Tx,
  portalId: number,
  items: readonly {
    kind: 'capture' | 'release';
    messageId: string;
    amount: number;
    currency: string;
  }[],
  actor: string,
): Promise<void> {
  const charged = items.filter((i) => i.amount > 0);
  if (charged.length === 0) return;
  // One JSON parameter rather than eight a row: a status webhook writes thousands.
  const values = JSON.stringify(
    charged.map((i) => [newCreditTransactionId(), i.kind, i.amount, i.currency, i.messageId]),
  );
  await tx.execute(sql`
    insert into ${creditTransactions}
      (id, portal_id, kind, amount, currency, message_id, actor, posted)
    select r->>0, ${portalId}::int, r->>1, (r->>2)::bigint, r->>3, r->>4, ${actor}::text, false
    from jsonb_array_elements(${values}::jsonb) with ordinality as e(r, n)
    order by e.n`);
}

/**
 * Move the balance by what the provider billed beyond a message's settled reservation, in the
 * caller's transaction, one posted transaction row each (docs/decisions/0056-billed-pricing.md):
 * `charge` takes `amount` from the balance (a billed category dearer than the one reserved),
 * `refund` gives `amount` back (billed less than was already captured). Rare, so it updates
 * the account row at once (locking it, after the messages the caller locked: no path locks the
 * account row before messages). A charge never takes the balance below what is reserved (the
 * `credit_reserved_within_balance` invariant): it takes at most `balance − reserved`.
 *
 * @returns per item, in order, the amount actually moved (a charge may be less than asked, 0
 *   with no account or nothing available).
 */
export async function adjust(
  tx: Tx,
  portalId: number,
  items: readonly {
    kind: 'charge' | 'refund';
    messageId: string;
    amount: number;
    currency: string;
  }[],
  actor: string,
): Promise<number[]> {
  const moved: number[] = [];
  for (const item of items) {
    if (item.amount <= 0) {
      moved.push(0);
      continue;
    }
    const [account] = await tx
      .select({ balance: creditAccounts.balance, reserved: creditAccounts.reserved })
      .from(creditAccounts)
      .where(eq(creditAccounts.portalId, portalId))
      .for('update');
    const amount =
      account === undefined
        ? 0
        : item.kind === 'refund'
          ? item.amount
          : Math.min(item.amount, Math.max(account.balance - account.reserved, 0));
    moved.push(amount);
    if (amount === 0) continue;
    await tx
      .update(creditAccounts)
      .set({
        balance: sql`${creditAccounts.balance} + ${item.kind === 'refund' ? amount : -amount}`,
        updatedAt: sql`now()`,
      })
      .where(eq(creditAccounts.portalId, portalId));
    await record(tx, { portalId, ...item, amount, actor, posted: true });
  }
  return moved;
}

/** One page of the portal's transactions, newest first (keyset on `(created_at, id)`). */
export async function listTransactionPage(
  db: Db,
  portalId: number,
  options: { limit: number; after?: PagePosition | undefined },
): Promise<KeysetPage<CreditTransactionRow>> {
  const conditions = [eq(creditTransactions.portalId, portalId)];
  return readKeysetPage(creditTransactions, conditions, options, (where, orderBy, limit) =>
    db
      .select()
      .from(creditTransactions)
      .where(where)
      .orderBy(...orderBy)
      .limit(limit),
  );
}
