import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';

/**
 * A portal's messaging credit, in integer minor units of `currency` (docs/messaging.md
 * "Credit"). `balance` is what the portal owns; `reserved` is the part held by queued messages.
 * Invariants (also checked by the database): 0 ≤ reserved ≤ balance, so the balance never goes
 * negative; a send reserves with one conditional UPDATE (`balance - reserved >= price`), which
 * PostgreSQL's row lock makes safe across instances.
 */
export const creditAccounts = pgTable(
  'credit_accounts',
  {
    portalId: integer('portal_id')
      .primaryKey()
      .references(() => portals.id, { onDelete: 'cascade' }),
    balance: bigint('balance', { mode: 'number' }).notNull().default(0),
    reserved: bigint('reserved', { mode: 'number' }).notNull().default(0),
    /** ISO 4217, e.g. `EUR`. */
    currency: text('currency').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    check('credit_reserved_not_negative', sql`${t.reserved} >= 0`),
    check('credit_reserved_within_balance', sql`${t.reserved} <= ${t.balance}`),
  ],
);

/**
 * What moved credit: `topup` adds to the balance (an operator), `reserve` holds a message's
 * price, `capture` spends it (the provider sent the message), `release` frees it (the message
 * failed). Append-only; `amount` is positive, in minor units; `note` never holds a secret.
 */
export const CREDIT_TRANSACTION_KINDS = ['topup', 'reserve', 'capture', 'release'] as const;

export const creditTransactions = pgTable(
  'credit_transactions',
  {
    /** Public id: `ctx_` + base62. */
    id: text('id').primaryKey(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    kind: text('kind', { enum: CREDIT_TRANSACTION_KINDS }).notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    /** The message a reserve, capture or release is for. */
    messageId: text('message_id'),
    note: text('note'),
    /** Who: `operator:cli`, `api`, `provider`, `system:…`. */
    actor: text('actor').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('credit_transactions_portal_page').on(t.portalId, t.createdAt, t.id),
    index('credit_transactions_message').on(t.messageId),
    check('credit_transactions_amount_positive', sql`${t.amount} > 0`),
  ],
);
