/**
 * The credit ledger: a portal's balance and reservations in integer minor units, and the
 * append-only transactions that moved them (docs/messaging.md "Credit").
 *
 * Invariants: 0 ≤ reserved ≤ balance (also CHECK constraints); a reservation is one
 * conditional UPDATE (`balance - reserved >= price`), so concurrent sends on any number of
 * instances never overdraw (PostgreSQL serialises the row's updates; a loser re-reads the row
 * and its condition fails). Every change writes its transaction row in the same transaction.
 */
import { and, eq, sql } from 'drizzle-orm';
import { randomBase62 } from '../../platform/crypto.ts';
import { creditAccounts, creditTransactions } from '../../db/schema/credit.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';
import type { Db, Tx } from '../messages/messages-repository.ts';

export type CreditTransactionRow = typeof creditTransactions.$inferSelect;
type Kind = CreditTransactionRow['kind'];

/** Public credit transaction id: `ctx_` + base62 of 16 random bytes. */
export function newCreditTransactionId(): string {
  return `ctx_${randomBase62(16)}`;
}

/** A portal's account as stored, or zero in `currency` when it never had one. */
export async function readCredit(
  db: Db,
  portalId: number,
  currency: string,
): Promise<{ balance: number; reserved: number; currency: string }> {
  const [row] = await db
    .select({
      balance: creditAccounts.balance,
      reserved: creditAccounts.reserved,
      currency: creditAccounts.currency,
    })
    .from(creditAccounts)
    .where(eq(creditAccounts.portalId, portalId));
  return row ?? { balance: 0, reserved: 0, currency };
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
  },
): Promise<string> {
  const id = newCreditTransactionId();
  await tx.insert(creditTransactions).values({ id, ...entry });
  return id;
}

/**
 * Add `amount` minor units to the portal's balance, creating the account in `currency`.
 *
 * @returns the account after the top-up and the transaction id.
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
  return { balance: row!.balance, reserved: row!.reserved, currency: row!.currency, transactionId };
}

/**
 * Hold `amount` for a message, if the available credit (balance − reserved) covers it. A price
 * of 0 always succeeds and writes nothing.
 *
 * @returns the available credit (balance − reserved, minor units) after the reservation, or
 *   false when the credit does not cover it (nothing changed); null for a price of 0.
 */
export async function reserve(
  tx: Tx,
  args: { portalId: number; amount: number; currency: string; messageId: string; actor: string },
): Promise<{ availableAfter: number } | null | false> {
  if (args.amount === 0) return null;
  const updated = await tx
    .update(creditAccounts)
    .set({ reserved: sql`${creditAccounts.reserved} + ${args.amount}`, updatedAt: sql`now()` })
    .where(
      and(
        eq(creditAccounts.portalId, args.portalId),
        sql`${creditAccounts.balance} - ${creditAccounts.reserved} >= ${args.amount}`,
      ),
    )
    .returning({ balance: creditAccounts.balance, reserved: creditAccounts.reserved });
  const [after] = updated;
  if (!after) return false;
  await record(tx, { ...args, kind: 'reserve' });
  return { availableAfter: after.balance - after.reserved };
}

/**
 * Spend a message's reservation (the provider sent it): balance and reserved both go down.
 * Call once per message, when it leaves `queued` for a sent status.
 */
export async function capture(
  tx: Tx,
  args: { portalId: number; amount: number; currency: string; messageId: string; actor: string },
): Promise<void> {
  if (args.amount === 0) return;
  await tx
    .update(creditAccounts)
    .set({
      balance: sql`${creditAccounts.balance} - ${args.amount}`,
      reserved: sql`${creditAccounts.reserved} - ${args.amount}`,
      updatedAt: sql`now()`,
    })
    .where(eq(creditAccounts.portalId, args.portalId));
  await record(tx, { ...args, kind: 'capture' });
}

/**
 * Free the reservations of failed messages (one transaction row each): reserved goes down.
 * Call once per message, when it leaves `queued` for `failed`.
 */
export async function release(
  tx: Tx,
  portalId: number,
  items: readonly { messageId: string; amount: number; currency: string }[],
  actor: string,
): Promise<void> {
  const charged = items.filter((i) => i.amount > 0);
  if (charged.length === 0) return;
  const total = charged.reduce((sum, i) => sum + i.amount, 0);
  await tx
    .update(creditAccounts)
    .set({ reserved: sql`${creditAccounts.reserved} - ${total}`, updatedAt: sql`now()` })
    .where(eq(creditAccounts.portalId, portalId));
  await tx.insert(creditTransactions).values(
    charged.map((i) => ({
      id: newCreditTransactionId(),
      portalId,
      kind: 'release' as const,
      amount: i.amount,
      currency: i.currency,
      messageId: i.messageId,
      actor,
    })),
  );
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
