/**
 * The credit ledger: a portal's balance and reservations in integer minor units, and the
 * append-only transactions that moved them (docs/messaging.md "Credit").
 *
 * Invariants: 0 ≤ reserved ≤ balance (also CHECK constraints). Sends reserve from escrow
 * blocks leased from the account (credit-leases.ts, credit-escrow.ts), never from the account
 * row itself: `credit_accounts.reserved` holds the blocks whole, and a balance read counts the
 * part of each open block not yet reserved as available again. Every movement of a message's
 * credit writes its transaction row in the same transaction.
 */
import { eq, sql } from 'drizzle-orm';
import { randomBase62 } from '../../platform/crypto.ts';
import { creditAccounts, creditLeases, creditTransactions } from '../../db/schema/credit.ts';
import { readKeysetPage, type KeysetPage, type PagePosition } from '../../db/keyset-page.ts';
import type { Db, Tx } from '../messages/messages-repository.ts';

export type CreditTransactionRow = typeof creditTransactions.$inferSelect;
type Kind = CreditTransactionRow['kind'];

/** Public credit transaction id: `ctx_` + base62 of 16 random bytes. */
export function newCreditTransactionId(): string {
  return `ctx_${randomBase62(16)}`;
}

/**
 * A portal's credit as its users see it, or zero in `currency` when it never had an account:
 * `balance` (owned) and `reserved` (held by queued messages), so `balance − reserved` is what
 * sends can still reserve. The escrow blocks' unused parts are not reserved: the account row
 * holds each open block whole, and this read gives back `amount − reservations made from it`
 * of each, all in one snapshot.
 */
export async function readCredit(
  db: Db,
  portalId: number,
  currency: string,
): Promise<{ balance: number; reserved: number; currency: string }> {
  const result: unknown = await db.execute(sql`
    select a.balance, a.currency, a.reserved
      - coalesce((select sum(l.amount) from ${creditLeases} l where l.portal_id = a.portal_id), 0)
      + coalesce((select sum(t.amount) from ${creditTransactions} t
          join ${creditLeases} l on l.id = t.lease_id
          where l.portal_id = a.portal_id and t.kind = 'reserve'), 0) as reserved
    from ${creditAccounts} a where a.portal_id = ${portalId}`);
  const [row] = (result as { rows: { balance: unknown; reserved: unknown; currency: string }[] })
    .rows;
  if (!row) return { balance: 0, reserved: 0, currency };
  return { balance: Number(row.balance), reserved: Number(row.reserved), currency: row.currency };
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
