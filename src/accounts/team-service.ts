/**
 * The team of a portal: its members (users), their roles and status, and the invitations that
 * bring new ones in. Used by `/settings/team`, the invitation page and the CLI's `user`
 * commands. Every change is audited in the transaction that makes it.
 *
 * Rules:
 * - a role is `admin` (everything) or `agent` (the inbox and contacts only);
 * - an invitation is a one-time link: 32 random bytes (base64url) that exist only in the link,
 *   stored as their SHA-256, valid {@link INVITATION_LIFETIME_MS}, deleted by the acceptance that
 *   sets the password (so it works once) or replaced by a new invitation of the same person;
 * - disabling or removing a member ends every session of theirs in the same transaction;
 * - the last active administrator cannot be disabled, removed or made an agent, and the main
 *   administrator (the portal's owner, who owns its first API key) not at all.
 *
 * @see docs/decisions/0065-team-roles-and-invitations.md
 * @see docs/how-to/work-the-inbox-as-a-team.md
 */
import { and, asc, count, eq, ne, sql } from 'drizzle-orm';
import { recordAuditEvent, type Actor, type AuditAction } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import {
  apiTokens,
  memberInvitations,
  MEMBER_AVAILABILITIES,
  MEMBER_ROLES,
  portals,
  users,
  type MemberAvailability,
  type MemberRole,
} from '../db/schema/index.ts';
import { databaseErrorCode, isUniqueViolation } from '../platform/database-errors.ts';

/** PostgreSQL SQLSTATE of a foreign key violation (a row still names the member). */
const FOREIGN_KEY_VIOLATION = '23503';
import { randomBase64Url, sha256Hex } from '../platform/crypto.ts';
import { UsageError } from '../platform/errors.ts';
import { hashPassword, passwordProblem } from '../platform/passwords.ts';
import { endSessionsOfUser, type Executor } from './accounts-repository.ts';

/** How long an invitation link works: 7 days (milliseconds). */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** An invitation token as the link carries it: 32 random bytes, base64url. */
const INVITATION_TOKEN = /^[A-Za-z0-9_-]{43}$/;
// The accounts service's address check (no white space, no control characters).
const EMAIL = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]{1,253}\.[^\s@\p{Cc}]{1,63}$/u;

/**
 * A member as the team page and `user list` show them. `status` is `invited` while an
 * invitation of theirs is pending (until they set a password through it), then `active` or
 * `disabled`.
 */
export interface Member {
  userId: number;
  email: string;
  role: MemberRole;
  status: 'invited' | 'active' | 'disabled';
  availability: MemberAvailability;
  isMainAdmin: boolean;
  /** ISO 8601 UTC; set while an invitation is pending (it may have expired). */
  invitationExpiresAt: string | null;
  /** ISO 8601 UTC. */
  createdAt: string;
}

/** What an invitation link leads to. */
export type InvitationLookup =
  | { state: 'valid'; email: string; portalName: string; role: MemberRole }
  | { state: 'expired' }
  | { state: 'unknown' };

/** Who makes a change, and the request it came in (for the audit row). */
export interface TeamChangeContext {
  actor: Actor;
  requestId?: string | undefined;
}

/**
 * A role from outside (a form, the CLI).
 *
 * @throws UsageError naming the roles for anything else.
 */
export function parseRole(value: string | undefined): MemberRole {
  const role = MEMBER_ROLES.find((r) => r === value);
  if (!role) throw new UsageError(`Choose a role: ${MEMBER_ROLES.join(' or ')}.`);
  return role;
}

/** An availability from outside. @throws UsageError for anything else. */
export function parseAvailability(value: string | undefined): MemberAvailability {
  const found = MEMBER_AVAILABILITIES.find((a) => a === value);
  if (!found) throw new UsageError(`Choose ${MEMBER_AVAILABILITIES.join(' or ')}.`);
  return found;
}

function checkEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized)) throw new UsageError('Give an email address (name@example.com).');
  return normalized;
}

/** The team rules over the users and invitations tables. */
export class TeamService {
  readonly #db: Database;
  readonly #now: () => number;

  /** @param deps.now clock (ms), for tests of expiry; defaults to `Date.now`. */
  constructor(deps: { db: Database; now?: () => number }) {
    this.#db = deps.db;
    this.#now = deps.now ?? Date.now;
  }

  /** The members of a portal, oldest first. One query. */
  async listMembers(portalId: number): Promise<Member[]> {
    const rows = await this.#db
      .select({
        userId: users.id,
        email: users.email,
        role: users.role,
        status: users.status,
        availability: users.availability,
        isMainAdmin: users.isMainAdmin,
        invitationExpiresAt: memberInvitations.expiresAt,
        createdAt: users.createdAt,
      })
      .from(users)
      .leftJoin(memberInvitations, eq(memberInvitations.userId, users.id))
      .where(eq(users.portalId, portalId))
      .orderBy(asc(users.id));
    return rows.map((r) => ({
      ...r,
      status: r.status === 'disabled' ? 'disabled' : r.invitationExpiresAt ? 'invited' : 'active',
      invitationExpiresAt: r.invitationExpiresAt?.toISOString() ?? null,
      createdAt: r.createdAt.toISOString(),
    }));
  }

  /**
   * Invite a person to a portal: a member with no password yet, and a one-time link token.
   * Inviting again someone whose invitation is still pending (same portal, no password yet)
   * replaces their link (the previous one stops working) and sets the role given.
   *
   * @returns the token in clear (for the link only; never stored, logged or audited) and when
   *   it expires.
   * @throws UsageError on a bad email or role, or an email that already has an account.
   */
  async invite(
    input: { portalId: number; email: string; role: string } & TeamChangeContext,
  ): Promise<{ userId: number; email: string; role: MemberRole; token: string; expiresAt: Date }> {
    const email = checkEmail(input.email);
    const role = parseRole(input.role);
    const token = randomBase64Url(32);
    const expiresAt = new Date(this.#now() + INVITATION_LIFETIME_MS);
    try {
      const userId = await this.#db.transaction(async (tx) => {
        const [existing] = await tx
          .select({ id: users.id, portalId: users.portalId, passwordHash: users.passwordHash })
          .from(users)
          .where(eq(users.email, email))
          .for('update');
        let id: number;
        if (existing) {
          if (existing.portalId !== input.portalId || existing.passwordHash !== null)
            throw new UsageError(`A user with email ${email} already exists.`);
          await tx.update(users).set({ role }).where(eq(users.id, existing.id));
          id = existing.id;
        } else {
          const [made] = await tx
            .insert(users)
            .values({ portalId: input.portalId, email, role })
            .returning({ id: users.id });
          id = made!.id;
        }
        const values = { userId: id, tokenHash: sha256Hex(token), expiresAt };
        await tx
          .insert(memberInvitations)
          .values(values)
          .onConflictDoUpdate({
            target: memberInvitations.userId,
            set: { tokenHash: values.tokenHash, expiresAt, createdAt: new Date(this.#now()) },
          });
        await this.#audit(tx, input, 'member.invited', `user ${id} invited as ${role}`);
        return id;
      });
      return { userId, email, role, token, expiresAt };
    } catch (err) {
      if (isUniqueViolation(err, 'users_email_unique'))
        throw new UsageError(`A user with email ${email} already exists.`);
      throw err;
    }
  }

  /** What the invitation link with this token leads to. Reads only. */
  async invitation(token: string): Promise<InvitationLookup> {
    if (!INVITATION_TOKEN.test(token)) return { state: 'unknown' };
    const [row] = await this.#db
      .select({
        email: users.email,
        role: users.role,
        portalName: portals.name,
        expiresAt: memberInvitations.expiresAt,
      })
      .from(memberInvitations)
      .innerJoin(users, eq(users.id, memberInvitations.userId))
      .innerJoin(portals, eq(portals.id, users.portalId))
      .where(eq(memberInvitations.tokenHash, sha256Hex(token)));
    if (!row) return { state: 'unknown' };
    if (row.expiresAt.getTime() <= this.#now()) return { state: 'expired' };
    return { state: 'valid', email: row.email, portalName: row.portalName, role: row.role };
  }

  /**
   * Accept an invitation: set the member's password (the sign-in's rules and scrypt hashing)
   * and use the link up, in one transaction.
   *
   * @returns the member, to be signed in; or `unknown` (no such link, or used) or `expired`,
   *   and then nothing changed.
   * @throws UsageError for a password the rules refuse (the link then still works).
   */
  async acceptInvitation(input: {
    token: string;
    password: string;
  }): Promise<
    | { outcome: 'accepted'; userId: number; portalId: number }
    | { outcome: 'unknown' }
    | { outcome: 'expired' }
  > {
    const problem = passwordProblem(input.password);
    if (problem) throw new UsageError(problem);
    if (!INVITATION_TOKEN.test(input.token)) return { outcome: 'unknown' };
    const passwordHash = await hashPassword(input.password);
    return this.#db.transaction(async (tx) => {
      const [found] = await tx
        .select({ userId: memberInvitations.userId, expiresAt: memberInvitations.expiresAt })
        .from(memberInvitations)
        .where(eq(memberInvitations.tokenHash, sha256Hex(input.token)))
        .for('update');
      if (!found) return { outcome: 'unknown' as const };
      if (found.expiresAt.getTime() <= this.#now()) return { outcome: 'expired' as const };
      // Deleting it is what makes the link single-use (a second acceptance finds nothing).
      const [taken] = await tx
        .delete(memberInvitations)
        .where(eq(memberInvitations.userId, found.userId))
        .returning({ userId: memberInvitations.userId });
      if (!taken) return { outcome: 'unknown' as const };
      const [member] = await tx
        .update(users)
        .set({ passwordHash })
        .where(eq(users.id, taken.userId))
        .returning({ id: users.id, portalId: users.portalId });
      await recordAuditEvent(tx, {
        portalId: member!.portalId,
        actor: { type: 'user', id: String(member!.id) },
        action: 'member.joined',
      });
      return { outcome: 'accepted' as const, userId: member!.id, portalId: member!.portalId };
    });
  }

  /**
   * Make a member an admin or an agent. Their sessions go on, with the new role from their
   * next request.
   *
   * @throws UsageError `not_found` for a member of no portal or another; `refused` for the main
   *   administrator or the last active administrator made an agent, or an unknown role.
   */
  async setRole(
    input: { portalId: number; userId: number; role: string } & TeamChangeContext,
  ): Promise<Member> {
    const role = parseRole(input.role);
    await this.#db.transaction(async (tx) => {
      const member = await this.#lockMember(tx, input.portalId, input.userId);
      if (member.role === role) return;
      if (role === 'agent') await this.#keepAnAdmin(tx, member, 'made an agent');
      await tx.update(users).set({ role }).where(eq(users.id, member.id));
      await this.#audit(tx, input, 'member.role_changed', `user ${member.id} is now ${role}`);
    });
    return this.#member(input.portalId, input.userId);
  }

  /**
   * Disable a member: they cannot sign in, and every session of theirs ends in the same
   * transaction (their next request is signed out).
   *
   * @returns how many sessions were ended.
   * @throws UsageError as {@link TeamService.setRole}.
   */
  async disable(
    input: { portalId: number; userId: number } & TeamChangeContext,
  ): Promise<{ userId: number; email: string; endedSessions: number }> {
    return this.#db.transaction(async (tx) => {
      const member = await this.#lockMember(tx, input.portalId, input.userId);
      if (member.status === 'disabled')
        return { userId: member.id, email: member.email, endedSessions: 0 };
      await this.#keepAnAdmin(tx, member, 'disabled');
      await tx.update(users).set({ status: 'disabled' }).where(eq(users.id, member.id));
      const endedSessions = await endSessionsOfUser(tx, member.id);
      await this.#audit(tx, input, 'member.disabled', `user ${member.id} disabled`);
      return { userId: member.id, email: member.email, endedSessions };
    });
  }

  /** Let a disabled member sign in again. @throws UsageError `not_found`. */
  async enable(
    input: { portalId: number; userId: number } & TeamChangeContext,
  ): Promise<{ userId: number; email: string }> {
    return this.#db.transaction(async (tx) => {
      const member = await this.#lockMember(tx, input.portalId, input.userId);
      if (member.status !== 'disabled') return { userId: member.id, email: member.email };
      await tx.update(users).set({ status: 'active' }).where(eq(users.id, member.id));
      await this.#audit(tx, input, 'member.enabled', `user ${member.id} enabled`);
      return { userId: member.id, email: member.email };
    });
  }

  /**
   * Remove a member from the portal: their account, sessions and pending invitation are
   * deleted. A member who filed support tickets stays on them: they can be disabled, not
   * removed.
   *
   * @throws UsageError as {@link TeamService.setRole}, or `refused` when tickets name them.
   */
  async remove(
    input: { portalId: number; userId: number } & TeamChangeContext,
  ): Promise<{ userId: number; email: string; endedSessions: number }> {
    try {
      return await this.#db.transaction(async (tx) => {
        const member = await this.#lockMember(tx, input.portalId, input.userId);
        await this.#keepAnAdmin(tx, member, 'removed');
        const endedSessions = await endSessionsOfUser(tx, member.id);
        // API keys belong to the portal; the owner of record becomes the main administrator.
        const [owner] = await tx
          .select({ id: users.id })
          .from(users)
          .where(and(eq(users.portalId, input.portalId), eq(users.isMainAdmin, true)));
        if (owner)
          await tx
            .update(apiTokens)
            .set({ userId: owner.id })
            .where(eq(apiTokens.userId, member.id));
        await tx.delete(users).where(eq(users.id, member.id));
        await this.#audit(tx, input, 'member.removed', `user ${member.id} removed`);
        return { userId: member.id, email: member.email, endedSessions };
      });
    } catch (err) {
      if (databaseErrorCode(err) === FOREIGN_KEY_VIOLATION)
        throw new UsageError(
          'This member filed support tickets, which keep their name: disable them instead.',
        );
      throw err;
    }
  }

  /** Set the signed-in member's own availability (not audited: it is not a team change). */
  async setAvailability(input: {
    portalId: number;
    userId: number;
    availability: string;
  }): Promise<MemberAvailability> {
    const availability = parseAvailability(input.availability);
    const changed = await this.#db
      .update(users)
      .set({ availability })
      .where(and(eq(users.id, input.userId), eq(users.portalId, input.portalId)))
      .returning({ id: users.id });
    if (changed.length === 0) throw new UsageError('No such member.', 'not_found');
    return availability;
  }

  async #member(portalId: number, userId: number): Promise<Member> {
    const found = (await this.listMembers(portalId)).find((m) => m.userId === userId);
    if (!found) throw new UsageError('No such member.', 'not_found');
    return found;
  }

  /** The member, locked until the transaction ends; 404 for one of no portal or another. */
  async #lockMember(tx: Executor, portalId: number, userId: number) {
    const [member] = await tx
      .select({
        id: users.id,
        email: users.email,
        role: users.role,
        status: users.status,
        isMainAdmin: users.isMainAdmin,
      })
      .from(users)
      .where(and(eq(users.id, userId), eq(users.portalId, portalId)))
      .for('update');
    if (!member) throw new UsageError('No such member.', 'not_found');
    return member;
  }

  /**
   * Refuse a change that would leave the portal without an active administrator, or that
   * touches its main administrator. The portal's admin rows are locked first, so two admins
   * demoting each other at once cannot both succeed.
   */
  async #keepAnAdmin(
    tx: Executor,
    member: { id: number; role: MemberRole; status: string; isMainAdmin: boolean },
    change: string,
  ): Promise<void> {
    if (member.role !== 'admin' || member.status !== 'active') return;
    const [portal] = await tx
      .select({ portalId: users.portalId })
      .from(users)
      .where(eq(users.id, member.id));
    await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.portalId, portal!.portalId), eq(users.role, 'admin')))
      .for('update');
    const [others] = await tx
      .select({ n: count() })
      .from(users)
      .where(
        and(
          eq(users.portalId, portal!.portalId),
          eq(users.role, 'admin'),
          eq(users.status, 'active'),
          sql`${users.passwordHash} is not null`,
          ne(users.id, member.id),
        ),
      );
    if ((others?.n ?? 0) === 0)
      throw new UsageError(
        `The last active administrator cannot be ${change}: make another member an administrator first.`,
      );
    if (member.isMainAdmin)
      throw new UsageError(`The main administrator of the portal cannot be ${change}.`);
  }

  async #audit(
    tx: Pick<Database, 'insert'>,
    input: { portalId: number } & TeamChangeContext,
    action: AuditAction,
    reason: string,
  ): Promise<void> {
    await recordAuditEvent(tx, {
      portalId: input.portalId,
      actor: input.actor,
      action,
      reason,
      requestId: input.requestId ?? null,
    });
  }
}
