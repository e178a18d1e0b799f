/**
 * The queries of portals, users and API tokens. Every function takes the database or the
 * transaction it runs in; the rules (what is valid, who may, what is audited) are the
 * service's (`accounts-service.ts`).
 *
 * @see docs/architecture.md "accounts/"
 */
import { and, count, eq, or, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { apiTokens, portals, sessions, users } from '../db/schema/index.ts';
import { compileAllowList } from './ip-allow-list.ts';
import type { KeyPrincipal } from './principal.ts';
import type { Scope } from './scopes.ts';

/** The database or a transaction. */
export type Executor = Pick<Database, 'select' | 'insert' | 'update' | 'delete' | 'execute'>;

/** The internal id of the portal with this code, or null. */
export async function findPortalId(q: Executor, portalCode: string): Promise<number | null> {
  const [row] = await q
    .select({ id: portals.id })
    .from(portals)
    .where(eq(portals.portalCode, portalCode));
  return row?.id ?? null;
}

/**
 * Whether user `userId` is an active member of portal `portalId` (one indexed read): a disabled
 * member is not (docs/decisions/0065-team-roles-and-invitations.md).
 */
export async function isActiveUserOfPortal(
  q: Executor,
  userId: number,
  portalId: number,
): Promise<boolean> {
  const [row] = await q
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.id, userId), eq(users.portalId, portalId), eq(users.status, 'active')));
  return row !== undefined;
}

/**
 * End every browser session of user `userId` (password change, `user sign-out`).
 *
 * @returns how many sessions were ended.
 */
export async function endSessionsOfUser(q: Executor, userId: number): Promise<number> {
  const ended = await q
    .delete(sessions)
    .where(eq(sessions.userId, userId))
    .returning({ idHash: sessions.idHash });
  return ended.length;
}

/** The id, password hash and status of the user with this (normalised) email, or undefined. */
export async function findUserByEmail(
  q: Executor,
  email: string,
): Promise<{ id: number; passwordHash: string | null; status: string } | undefined> {
  const [row] = await q
    .select({ id: users.id, passwordHash: users.passwordHash, status: users.status })
    .from(users)
    .where(eq(users.email, email));
  return row;
}

/**
 * The id of the portal's first (oldest) API key — "the portal's token" of `token regenerate`
 * and `token scopes` — locked `FOR UPDATE` until the transaction ends (so two regenerations
 * serialise), or undefined when the portal has no key.
 */
export async function lockFirstKey(q: Executor, portalId: number): Promise<number | undefined> {
  const [row] = await q
    .select({ id: apiTokens.id })
    .from(apiTokens)
    .where(eq(apiTokens.portalId, portalId))
    .orderBy(apiTokens.id)
    .limit(1)
    .for('update');
  return row?.id;
}

/** A portal, its users (by id) and its first key's hint and scopes; null for an unknown code. */
export async function readPortal(db: Database, portalCode: string) {
  const [portal] = await db.select().from(portals).where(eq(portals.portalCode, portalCode));
  if (!portal) return null;
  const people = await db
    .select({ userId: users.id, email: users.email, isMainAdmin: users.isMainAdmin })
    .from(users)
    .where(eq(users.portalId, portal.id))
    .orderBy(users.id);
  const [token] = await db
    .select({
      hint: apiTokens.tokenHint,
      scopes: apiTokens.scopes,
      ownerUserId: apiTokens.userId,
      createdAt: apiTokens.createdAt,
      lastUsedAt: apiTokens.lastUsedAt,
    })
    .from(apiTokens)
    .where(eq(apiTokens.portalId, portal.id))
    .orderBy(apiTokens.id)
    .limit(1);
  return { portal, people, token };
}

/** Every portal, oldest first: its code, name, creation time and number of users. */
export async function listPortals(db: Database) {
  const rows = await db
    .select({
      portalCode: portals.portalCode,
      name: portals.name,
      createdAt: portals.createdAt,
      users: count(users.id),
    })
    .from(portals)
    .leftJoin(users, eq(users.portalId, portals.id))
    .groupBy(portals.id)
    .orderBy(portals.id);
  return rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
}

/**
 * The token check's lookup: the principal a secret's hash belongs to (the key's current secret,
 * or its previous one within a rotation's overlap), or null when no key has that hash (unknown,
 * revoked, or a previous secret past its overlap). One indexed query. An expired key is found
 * (the hook answers `token_expired` for it).
 *
 * The query is built once: building a Drizzle query per request cost more CPU than PostgreSQL
 * took to answer it. Deliberately unnamed (''): a named server-side prepared statement breaks
 * behind a transaction-mode pooler (PgBouncer before 1.21), and parsing this small statement is
 * cheap for PostgreSQL.
 */
export function createPrincipalLookup(
  db: Database,
  now: () => number = Date.now,
): (tokenHash: string) => Promise<KeyPrincipal | null> {
  const hash = sql.placeholder('tokenHash');
  const principalByTokenHash = db
    .select({
      portalId: portals.id,
      portalCode: portals.portalCode,
      userId: users.id,
      isMainAdmin: users.isMainAdmin,
      scopes: apiTokens.scopes,
      keyId: apiTokens.id,
      keyName: apiTokens.name,
      expiresAt: apiTokens.expiresAt,
      allowedIps: apiTokens.allowedIps,
      rateLimitPerMinute: apiTokens.rateLimitPerMinute,
      currentHash: apiTokens.tokenHash,
      previousValidUntil: apiTokens.previousValidUntil,
    })
    .from(apiTokens)
    .innerJoin(portals, eq(portals.id, apiTokens.portalId))
    .innerJoin(users, and(eq(users.id, apiTokens.userId), eq(users.portalId, apiTokens.portalId)))
    .where(or(eq(apiTokens.tokenHash, hash), eq(apiTokens.previousTokenHash, hash)))
    .prepare('');
  return async (tokenHash) => {
    const [row] = await principalByTokenHash.execute({ tokenHash });
    if (!row) return null;
    const { currentHash, previousValidUntil, expiresAt, allowedIps, ...rest } = row;
    let secretValidUntil: number | null = null;
    if (currentHash !== tokenHash) {
      secretValidUntil = previousValidUntil?.getTime() ?? 0;
      if (secretValidUntil <= now()) return null;
    }
    return {
      ...rest,
      scopes: row.scopes as Scope[],
      expiresAt: expiresAt?.getTime() ?? null,
      secretValidUntil,
      allowedIps,
      allowList: allowedIps ? compileAllowList(allowedIps) : null,
    };
  };
}
