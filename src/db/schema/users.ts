import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { portals } from './portals.ts';

/** What a member of a portal may do (docs/decisions/0065-team-roles-and-invitations.md). */
export const MEMBER_ROLES = ['admin', 'agent'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
/** Whether a member may sign in: a disabled member has no live session. */
export const MEMBER_STATUSES = ['active', 'disabled'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];
/** Whether a member takes new conversations (set by the member). */
export const MEMBER_AVAILABILITIES = ['available', 'away'] as const;
export type MemberAvailability = (typeof MEMBER_AVAILABILITIES)[number];

/**
 * People of a portal (its members). `id` is public as `userId`. Invariants: at most one main
 * administrator per portal (partial unique index), and the main administrator is an active
 * `admin`; a `disabled` member has no session (ended in the transaction that disables them).
 */
export const users = pgTable(
  'users',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    portalId: integer('portal_id')
      .notNull()
      .references(() => portals.id, { onDelete: 'cascade' }),
    /** Stored lower-cased. */
    email: text('email').notNull().unique(),
    /** scrypt hash (`scrypt$N$r$p$salt$hash`), null until a password is set. */
    passwordHash: text('password_hash'),
    isMainAdmin: boolean('is_main_admin').notNull().default(false),
    /** `admin` or `agent`; users from before roles existed are admins (the default). */
    role: text('role').$type<MemberRole>().notNull().default('admin'),
    /** `active` or `disabled`. */
    status: text('status').$type<MemberStatus>().notNull().default('active'),
    /** `available` or `away`. */
    availability: text('availability').$type<MemberAvailability>().notNull().default('available'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('users_one_main_admin_per_portal')
      .on(t.portalId)
      .where(sql`${t.isMainAdmin}`),
    index('users_portal_id').on(t.portalId),
    check('users_role', sql`${t.role} in ('admin', 'agent')`),
    check('users_status', sql`${t.status} in ('active', 'disabled')`),
    check('users_availability', sql`${t.availability} in ('available', 'away')`),
  ],
);

/**
 * The pending invitation of a member who has not set a password yet: one per member (a new
 * invitation replaces the previous one). The link's token exists only in the link; the row keeps
 * its SHA-256. Accepting deletes the row in the transaction that sets the password, so a link
 * works once.
 */
export const memberInvitations = pgTable('member_invitations', {
  userId: integer('user_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  /** Lower-case hex SHA-256 of the link's token. */
  tokenHash: text('token_hash').notNull().unique(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
