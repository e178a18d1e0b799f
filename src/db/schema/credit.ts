import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  pgTable,
  text,
  timestamp,
} from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';

/**
 * A portal's messaging credit, in integer minor units of `currency` (docs/messaging.md
 * "Credit"). `balance` is what the portal owns; `reserved` is the part held: by queued messages
 * and by the open escrow blocks of `credit_leases` (whole, used or not). Invariants (also
 * checked by the database): 0 ≤ reserved ≤ balance, so the balance never goes negative. Sends
 * do not update this row: an instance leases a block from it (one conditional UPDATE,
 * `balance - reserved >= block`) and reserves from the block.
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
 * The escrow blocks instances hold (docs/decisions/0026-credit-escrow.md): `amount` minor units
 * moved from the balance's available part into `credit_accounts.reserved` by one short
 * transaction. A send reserves from its instance's block by inserting its `reserve` transaction
 * with `lease_id` in the statement that inserts the message, locking this row `FOR KEY SHARE`;
 * settling a block locks it `FOR UPDATE` (so it waits for those sends), gives back `amount` less
 * the reservations made from it, and deletes the row. The part not yet used still counts as
 * available in every balance read.
 */
export const creditLeases = pgTable(
  'credit_leases',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    /** The instance holding it: `<host>:<pid>:<random>`, for an operator's eyes only. */
    holder: text('holder').notNull(),
    amount: bigint('amount', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('credit_leases_portal').on(t.portalId),
    check('credit_leases_amount_positive', sql`${t.amount} > 0`),
  ],
);

/**
 * What moved credit: `topup` adds to the balance (an operator), `reserve` holds a message's
 * price, `capture` spends it (the provider sent the message), `release` frees it (the message
 * failed, or the provider billed less than was reserved), `charge` takes from the balance what
 * the provider's billed category costs beyond the reservation, `refund` gives back to the
 * balance what was captured beyond the billed price (docs/decisions/0056-billed-pricing.md).
 * Append-only but for `posted`; `amount` is positive, in minor units; `note` never holds a
 * secret. The column has no database CHECK: a new kind needs no migration.
 */
export const CREDIT_TRANSACTION_KINDS = [
  'topup',
  'reserve',
  'capture',
  'release',
  'charge',
  'refund',
] as const;

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
    /** The escrow block (`credit_leases.id`) a `reserve` was taken from. No foreign key: the
     * block's row is deleted when it is settled, the reservation stays. */
    leaseId: bigint('lease_id', { mode: 'number' }),
    /**
     * Whether `credit_accounts` includes this movement. A `capture` or `release` is written
     * unposted (no update of the account row, which would serialise the portal's status
     * webhooks) and posted later in bulk; balance reads count the unposted ones.
     */
    posted: boolean('posted').notNull().default(true),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (t) => [
    index('credit_transactions_portal_page').on(t.portalId, t.createdAt, t.id),
    index('credit_transactions_message').on(t.messageId),
    index('credit_transactions_lease')
      .on(t.leaseId)
      .where(sql`${t.leaseId} is not null`),
    index('credit_transactions_unposted')
      .on(t.portalId)
      .where(sql`not ${t.posted}`),
    check('credit_transactions_amount_positive', sql`${t.amount} > 0`),
  ],
);
