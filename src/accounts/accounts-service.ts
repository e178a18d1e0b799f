/**
 * Portals, users and API tokens: the rules (what is valid, what is unique, what a token may
 * carry) over the repository queries. Used by the CLI, the admin socket and the web pages.
 *
 * @see docs/reference/external-api.md
 */
import { randomInt } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { isUniqueViolation } from '../platform/database-errors.ts';
import { apiTokens, portals, users } from '../db/schema/index.ts';
import { UsageError } from '../platform/errors.ts';
import { hasControlCharacters } from '../platform/plain-text.ts';
import { hashPassword, passwordProblem, verifyPassword } from '../platform/passwords.ts';
import { apiTokenHint, generateApiToken, hashApiToken } from './api-token.ts';
import {
  createPrincipalLookup,
  endSessionsOfUser,
  findPortalId,
  findUserByEmail,
  lockFirstKey,
  readPortal,
} from './accounts-repository.ts';
import type { KeyPrincipal } from './principal.ts';
import { parseScopes, SCOPES, type Scope } from './scopes.ts';
import { parseRole } from './team-service.ts';
import { notifyTokenChange } from './token-change-channel.ts';

const PORTAL_CODE = /^[1-9][0-9]{3,17}$/;
// No white space, no control characters (a NUL cannot even be stored).
const EMAIL = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]{1,253}\.[^\s@\p{Cc}]{1,63}$/u;

export interface AccountsServiceDeps {
  db: Database;
  /**
   * Called after each committed token change, before the changing call returns (this
   * instance's verification cache uses it); failures are the listener's to handle. Other
   * instances learn of the change from the `portico_token_change` notification that the
   * change's transaction sends (see token-change-channel.ts).
   */
  onTokenChange?: (portalId: number) => void;
}

export interface PortalSummary {
  portalCode: string;
  name: string;
  createdAt: string;
  users: { userId: number; email: string; isMainAdmin: boolean }[];
  /**
   * Never the token nor its hash: the hint and what it may do. `lastUsedAt` (ISO 8601 UTC, to
   * about a minute; null: unused since issued).
   */
  token: {
    hint: string;
    scopes: Scope[];
    ownerUserId: number;
    createdAt: string;
    lastUsedAt: string | null;
  } | null;
}

function checkEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized)) throw new UsageError(`Not an email address: ${email}`);
  return normalized;
}

/**
 * The accounts rules. A class rather than a closure so that each operation is its own small
 * method; callers hold the instance and never pass its methods around unbound.
 */
export class AccountsService {
  readonly #db: Database;
  readonly #onTokenChange: (portalId: number) => void;
  readonly #principalLookup: (tokenHash: string) => Promise<KeyPrincipal | null>;

  constructor({ db, onTokenChange }: AccountsServiceDeps) {
    this.#db = db;
    this.#onTokenChange = onTokenChange ?? (() => {});
    this.#principalLookup = createPrincipalLookup(db);
  }

  /** The internal id of a portal. @throws UsageError for an unknown code. */
  async portalIdFor(portalCode: string): Promise<number> {
    const id = await findPortalId(this.#db, portalCode);
    if (id === null) throw new UsageError(`No portal with code ${portalCode}.`, 'not_found');
    return id;
  }

  /**
   * Create a portal, its main administrator and its first API token.
   *
   * @param input.code digits (4–18, no leading zero); random 8 digits when omitted.
   * @param input.scopes defaults to the whole catalog.
   * @returns the token in clear: the only time it is ever available.
   * @throws UsageError on a bad name, email, code or scope, or a code/email already in use.
   */
  async createPortal(input: {
    name: string;
    adminEmail: string;
    code?: string | undefined;
    scopes?: readonly string[] | undefined;
    actor: Actor;
  }): Promise<{
    portalId: number;
    portalCode: string;
    userId: number;
    token: string;
    scopes: Scope[];
  }> {
    const name = input.name.trim();
    if (name.length < 1 || name.length > 200 || hasControlCharacters(name))
      throw new UsageError('Give a name of 1 to 200 printable characters (no controls).');
    const email = checkEmail(input.adminEmail);
    if (input.code !== undefined && !PORTAL_CODE.test(input.code)) {
      throw new UsageError('A portal code is 4 to 18 digits and does not start with 0.');
    }
    const scopes = input.scopes ? parseScopes(input.scopes) : [...SCOPES];
    const portalCode = input.code ?? String(randomInt(10_000_000, 100_000_000));
    const token = generateApiToken();
    try {
      const result = await this.#db.transaction(async (tx) => {
        const [portal] = await tx
          .insert(portals)
          .values({ portalCode, name })
          .returning({ id: portals.id });
        const [user] = await tx
          .insert(users)
          .values({ portalId: portal!.id, email, isMainAdmin: true })
          .returning({ id: users.id });
        await tx.insert(apiTokens).values({
          portalId: portal!.id,
          name: 'Default',
          userId: user!.id,
          tokenHash: hashApiToken(token),
          tokenHint: apiTokenHint(token),
          scopes,
          createdBy: `${input.actor.type}:${input.actor.id}`,
        });
        await recordAuditEvent(tx, {
          portalId: portal!.id,
          actor: input.actor,
          action: 'api_token.created',
        });
        return { portalId: portal!.id, userId: user!.id };
      });
      this.#onTokenChange(result.portalId);
      return { ...result, portalCode, token, scopes };
    } catch (err) {
      if (isUniqueViolation(err, 'portals_portal_code_unique')) {
        throw new UsageError(`A portal with code ${portalCode} already exists.`);
      }
      if (isUniqueViolation(err, 'users_email_unique')) {
        throw new UsageError(`A user with email ${email} already exists.`);
      }
      throw err;
    }
  }

  /**
   * Add a user to a portal (without a password: `user set-password` gives one; `user invite`
   * sends a link instead).
   *
   * @param input.role `admin` or `agent`; default `admin` for the main administrator (who is
   *   always one), else `agent`.
   * @throws UsageError on an unknown portal, a bad or taken email, a second main admin, or a
   *   main administrator who would be an agent.
   */
  async createUser(input: {
    portalCode: string;
    email: string;
    mainAdmin: boolean;
    role?: string | undefined;
  }) {
    const portalId = await this.portalIdFor(input.portalCode);
    const email = checkEmail(input.email);
    const role = parseRole(input.role ?? (input.mainAdmin ? 'admin' : 'agent'));
    if (input.mainAdmin && role !== 'admin')
      throw new UsageError('The main administrator is an admin.');
    try {
      const [user] = await this.#db
        .insert(users)
        .values({ portalId, email, isMainAdmin: input.mainAdmin, role })
        .returning({ id: users.id });
      return { userId: user!.id, email, isMainAdmin: input.mainAdmin, role };
    } catch (err) {
      if (isUniqueViolation(err, 'users_email_unique')) {
        throw new UsageError(`A user with email ${email} already exists.`);
      }
      if (isUniqueViolation(err, 'users_one_main_admin_per_portal')) {
        throw new UsageError(`Portal ${input.portalCode} already has a main administrator.`);
      }
      throw err;
    }
  }

  /**
   * Replace the secret of the portal's first API key (its original token), keeping owner and
   * scopes. The previous secret fails from the moment this commits.
   *
   * @returns the new token in clear (shown once).
   * @see docs/reference/external-api.md
   */
  async regenerateToken(input: {
    portalCode: string;
    actor: Actor;
  }): Promise<{ token: string; hint: string }> {
    const portalId = await this.portalIdFor(input.portalCode);
    const token = generateApiToken();
    await this.#db.transaction(async (tx) => {
      const keyId = await lockFirstKey(tx, portalId);
      if (keyId === undefined) throw new UsageError(`Portal ${input.portalCode} has no API token.`);
      await tx
        .update(apiTokens)
        .set({
          tokenHash: hashApiToken(token),
          tokenHint: apiTokenHint(token),
          createdAt: new Date(),
          createdBy: `${input.actor.type}:${input.actor.id}`,
          lastUsedAt: null,
          lastUsedIp: null,
          previousTokenHash: null,
          previousValidUntil: null,
        })
        .where(eq(apiTokens.id, keyId));
      await recordAuditEvent(tx, {
        portalId,
        actor: input.actor,
        action: 'api_token.regenerated',
      });
      // Delivered to every instance when this transaction commits (never if it rolls back).
      await notifyTokenChange(tx, portalId);
    });
    this.#onTokenChange(portalId);
    return { token, hint: apiTokenHint(token) };
  }

  /**
   * Set the scopes of the portal's first API key (the key itself stays valid).
   *
   * @throws UsageError listing valid scopes when a name is unknown.
   */
  async setTokenScopes(input: { portalCode: string; scopes: readonly string[]; actor: Actor }) {
    const scopes = parseScopes(input.scopes);
    const portalId = await this.portalIdFor(input.portalCode);
    await this.#db.transaction(async (tx) => {
      const keyId = await lockFirstKey(tx, portalId);
      if (keyId === undefined) throw new UsageError(`Portal ${input.portalCode} has no API token.`);
      await tx.update(apiTokens).set({ scopes }).where(eq(apiTokens.id, keyId));
      await recordAuditEvent(tx, {
        portalId,
        actor: input.actor,
        action: 'api_token.scopes_changed',
        reason: `scopes set to ${scopes.join(' ')}`,
      });
      await notifyTokenChange(tx, portalId);
    });
    this.#onTokenChange(portalId);
    return { portalCode: input.portalCode, scopes };
  }

  /**
   * Set (or replace) the sign-in password of a user of a portal, and end every session of that
   * user in the same transaction: whoever signed in with the old password is signed out (a
   * password change is how a person takes their account back).
   *
   * @returns the user, and how many sessions were ended.
   * @throws UsageError on an unknown portal, a user not in that portal, or a password that is
   *   too short or too long.
   */
  async setPassword(input: {
    portalCode: string;
    email: string;
    password: string;
  }): Promise<{ userId: number; email: string; endedSessions: number }> {
    const problem = passwordProblem(input.password);
    if (problem) throw new UsageError(problem);
    const portalId = await this.portalIdFor(input.portalCode);
    const email = checkEmail(input.email);
    const passwordHash = await hashPassword(input.password);
    const result = await this.#db.transaction(async (tx) => {
      const [row] = await tx
        .update(users)
        .set({ passwordHash })
        .where(and(eq(users.portalId, portalId), eq(users.email, email)))
        .returning({ id: users.id });
      if (!row) return null;
      return { userId: row.id, email, endedSessions: await endSessionsOfUser(tx, row.id) };
    });
    if (!result)
      throw new UsageError(`Portal ${input.portalCode} has no user ${email}.`, 'not_found');
    return result;
  }

  /**
   * End every browser session of a user of a portal (`user sign-out`): a lost laptop, a
   * departing colleague. The password is not changed.
   *
   * @returns the user, and how many sessions were ended (0 when none was open).
   * @throws UsageError on an unknown portal or a user not in that portal.
   */
  async signOutUser(input: {
    portalCode: string;
    email: string;
  }): Promise<{ userId: number; email: string; endedSessions: number }> {
    const portalId = await this.portalIdFor(input.portalCode);
    const email = checkEmail(input.email);
    return this.#db.transaction(async (tx) => {
      const [row] = await tx
        .select({ id: users.id })
        .from(users)
        .where(and(eq(users.portalId, portalId), eq(users.email, email)));
      if (!row)
        throw new UsageError(`Portal ${input.portalCode} has no user ${email}.`, 'not_found');
      return { userId: row.id, email, endedSessions: await endSessionsOfUser(tx, row.id) };
    });
  }

  /**
   * The user whose email and password these are, or null (also for a disabled member). Unknown
   * emails cost the same scrypt work as known ones, so timing does not tell which emails exist.
   */
  async authenticatePassword(email: string, password: string): Promise<{ userId: number } | null> {
    const normalized = email.trim().toLowerCase();
    const row = EMAIL.test(normalized) ? await findUserByEmail(this.#db, normalized) : undefined;
    const ok = await verifyPassword(password, row?.passwordHash ?? null);
    return ok && row?.status === 'active' ? { userId: row.id } : null;
  }

  /** A portal, its users and its token's hint and scopes. Never the token or its hash. */
  async showPortal(portalCode: string): Promise<PortalSummary> {
    const found = await readPortal(this.#db, portalCode);
    if (!found) throw new UsageError(`No portal with code ${portalCode}.`, 'not_found');
    const { portal, people, token } = found;
    return {
      portalCode: portal.portalCode,
      name: portal.name,
      createdAt: portal.createdAt.toISOString(),
      users: people,
      token: token
        ? {
            ...token,
            scopes: token.scopes as Scope[],
            createdAt: token.createdAt.toISOString(),
            lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
          }
        : null,
    };
  }

  /**
   * The principal a token hash belongs to, or null when no token has that hash (unknown or
   * regenerated). One indexed query.
   */
  async principalForTokenHash(tokenHash: string): Promise<KeyPrincipal | null> {
    return this.#principalLookup(tokenHash);
  }
}

export function createAccountsService(deps: AccountsServiceDeps): AccountsService {
  return new AccountsService(deps);
}
