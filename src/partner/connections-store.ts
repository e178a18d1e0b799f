/**
 * The connections store: each portal's provider connection, with the provider token sealed by
 * the keyring. Only `partner/` imports this module; a decrypted token leaves it only through
 * `openAccessToken` (to the outbound-call path) and `grantToRevoke` (to revocation), both inside
 * `partner/`.
 *
 * Invariant (docs/security.md, tenant isolation): every read and write names the portal id in the
 * query itself (`where portal_id = …`), never by filtering rows afterwards.
 *
 * @see docs/partner-connection.md "Stored connection"
 */
import { and, eq, isNotNull, lt, or, sql } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { connections, users } from '../db/schema/index.ts';
import type { Keyring } from '../platform/keyring.ts';
import { isGrantShared } from './revocation/shared-grants.ts';
import { wabaIdsOfGrant } from './cloud-api/waba-routing.ts';

/**
 * The stored token's version: its ciphertext (text), which changes whenever the token is sealed
 * again (a new IV per seal). Null when the row holds no token.
 */
const tokenVersionOf = sql<string | null>`(${connections.token} ->> 'ciphertext')`;

/** What data deletion clears: everything the provider told us about the person and assets. */
const ERASED_PROVIDER_DATA = {
  providerUserId: null,
  assetIds: [],
  grantedAssets: {},
  wabaIds: [],
  grantedPermissions: [],
};

export type Queryable = Pick<Database, 'select' | 'insert' | 'update' | 'execute'>;

/** Thrown when a call needs the provider token of a portal that has no active connection. */
export class ConnectionInactiveError extends Error {
  constructor() {
    super('The portal has no active provider connection.');
    this.name = 'ConnectionInactiveError';
  }
}

export interface NewConnection {
  portalId: number;
  /** The user who connected (actor of `connection.created`). */
  userId: number | null;
  accessToken: string;
  tokenExpiresAt: Date | null;
  providerUserId: string | null;
  assetIds: string[];
  /** Asset ids per permission (`granular_scopes`); the WABA ids are derived from it. */
  grantedAssets: Record<string, string[]>;
  grantedPermissions: string[];
}

export interface ConnectionRow {
  portalId: number;
  status: 'active' | 'inactive';
  providerUserId: string | null;
  assetIds: string[];
  grantedPermissions: string[];
  tokenExpiresAt: Date | null;
  connectedAt: Date;
  connectedBy: { userId: number; email: string } | null;
  lastCheckedAt: Date | null;
  revokedAt: Date | null;
  revokeReason: string | null;
}

/**
 * The portal's connection row and its sealed token. A class rather than a closure so that each
 * query is its own small method; callers hold the instance and never pass methods around.
 */
export class ConnectionsStore {
  readonly #db: Database;
  readonly #keyring: Keyring;

  constructor(deps: { db: Database; keyring: Keyring }) {
    this.#db = deps.db;
    this.#keyring = deps.keyring;
  }

  /**
   * Store (or replace) the portal's connection, sealed under the active key, as `active`.
   * Pass the transaction that also writes the audit record.
   */
  async save(q: Queryable, input: NewConnection): Promise<void> {
    const token = this.#keyring.seal(input.accessToken, input.portalId);
    const values = {
      status: 'active' as const,
      providerUserId: input.providerUserId,
      assetIds: input.assetIds,
      grantedAssets: input.grantedAssets,
      wabaIds: wabaIdsOfGrant(input.grantedAssets),
      grantedPermissions: input.grantedPermissions,
      token,
      tokenExpiresAt: input.tokenExpiresAt,
      connectedAt: new Date(),
      connectedBy: input.userId,
      lastCheckedAt: null,
      checkLeaseOwner: null,
      checkLeaseUntil: null,
      revokedAt: null,
      revokeReason: null,
    };
    await q
      .insert(connections)
      .values({ portalId: input.portalId, ...values })
      .onConflictDoUpdate({ target: connections.portalId, set: values });
  }

  /** The portal's connection (no token material), or null when it never connected. */
  async find(portalId: number): Promise<ConnectionRow | null> {
    const [row] = await this.#db
      .select({
        portalId: connections.portalId,
        status: connections.status,
        providerUserId: connections.providerUserId,
        assetIds: connections.assetIds,
        grantedPermissions: connections.grantedPermissions,
        tokenExpiresAt: connections.tokenExpiresAt,
        connectedAt: connections.connectedAt,
        connectedById: connections.connectedBy,
        connectedByEmail: users.email,
        lastCheckedAt: connections.lastCheckedAt,
        revokedAt: connections.revokedAt,
        revokeReason: connections.revokeReason,
      })
      .from(connections)
      .leftJoin(
        users,
        and(eq(users.id, connections.connectedBy), eq(users.portalId, connections.portalId)),
      )
      .where(eq(connections.portalId, portalId));
    if (!row) return null;
    const { connectedById, connectedByEmail, ...rest } = row;
    return {
      ...rest,
      connectedBy:
        connectedById !== null && connectedByEmail !== null
          ? { userId: connectedById, email: connectedByEmail }
          : null,
    };
  }

  /**
   * The portal's decrypted provider token and its `tokenVersion` (an opaque value that changes
   * whenever the stored token does; pass it to `replaceToken` or `markRevoked` so a
   * reconnection meanwhile is never overwritten or revoked by mistake). Read by the outbound-call
   * path only (outbound-calls.ts), before any network I/O.
   *
   * @throws ConnectionInactiveError when there is no active connection with a token.
   * @throws DecryptionError when the stored ciphertext does not open for this portal.
   */
  async openAccessToken(portalId: number): Promise<{ accessToken: string; tokenVersion: string }> {
    const [row] = await this.#db
      .select({ token: connections.token })
      .from(connections)
      .where(and(eq(connections.portalId, portalId), eq(connections.status, 'active')));
    if (!row?.token) throw new ConnectionInactiveError();
    const accessToken = this.#keyring.open(row.token, portalId);
    return { accessToken, tokenVersion: row.token.ciphertext };
  }

  /** The active connection's decrypted token and provider user, row locked (revocation's
   * transaction); null when inactive or the grant is shared with another portal. */
  async grantToRevoke(
    q: Queryable,
    portalId: number,
  ): Promise<{ accessToken: string; providerUserId: string | null } | null> {
    const [row] = await q
      .select({ providerUserId: connections.providerUserId, token: connections.token })
      .from(connections)
      .where(and(eq(connections.portalId, portalId), eq(connections.status, 'active')))
      .for('update');
    if (!row?.token) return null;
    if (row.providerUserId && (await isGrantShared(q, row.providerUserId, portalId))) return null;
    const accessToken = this.#keyring.open(row.token, portalId);
    return { accessToken, providerUserId: row.providerUserId };
  }

  /**
   * Replace the portal's token (after a refresh) if the connection is still active and still
   * holds the token of `tokenVersion`.
   *
   * @returns whether a row was updated (false: revoked or reconnected meanwhile; the new token
   *   is dropped).
   */
  async replaceToken(
    portalId: number,
    tokenVersion: string,
    accessToken: string,
    tokenExpiresAt: Date | null,
  ) {
    const token = this.#keyring.seal(accessToken, portalId);
    const rows = await this.#db
      .update(connections)
      .set({ token, tokenExpiresAt })
      .where(
        and(
          eq(connections.portalId, portalId),
          eq(connections.status, 'active'),
          eq(tokenVersionOf, tokenVersion),
        ),
      )
      .returning({ portalId: connections.portalId });
    return rows.length === 1;
  }

  /**
   * Mark the portal's connection inactive and delete its ciphertext — only if it is active.
   * The condition in the UPDATE makes concurrent revocations end in exactly one: PostgreSQL
   * re-checks `status = 'active'` after waiting for the other transaction's row lock.
   *
   * @param eraseProviderData also clear the provider user id, assets and permissions (data
   *   deletion path).
   * @param tokenVersion only if the stored token is still this one (from `openAccessToken`):
   *   a token found dead never revokes a connection made again meanwhile.
   * @param connectedBefore only if the connection was made before this instant (a provider
   *   callback signed then must not revoke a later reconnection).
   * @returns true when this call revoked it (false: already inactive or never connected).
   */
  async markRevoked(
    q: Queryable,
    portalId: number,
    input: {
      reason: string;
      eraseProviderData: boolean;
      tokenVersion?: string | undefined;
      connectedBefore?: Date | undefined;
    },
  ): Promise<boolean> {
    const rows = await q
      .update(connections)
      .set({
        status: 'inactive',
        token: null,
        tokenExpiresAt: null,
        checkLeaseOwner: null,
        checkLeaseUntil: null,
        revokedAt: new Date(),
        revokeReason: input.reason,
        ...(input.eraseProviderData && ERASED_PROVIDER_DATA),
      })
      .where(
        and(
          eq(connections.portalId, portalId),
          eq(connections.status, 'active'),
          input.tokenVersion === undefined ? undefined : eq(tokenVersionOf, input.tokenVersion),
          input.connectedBefore === undefined
            ? undefined
            : lt(connections.connectedAt, input.connectedBefore),
        ),
      )
      .returning({ portalId: connections.portalId });
    return rows.length === 1;
  }

  /**
   * Clear provider-derived data (provider user id, assets, permissions) of an inactive
   * connection of `portalId`. Used by data deletion after a revocation by another path.
   */
  async eraseProviderData(q: Queryable, portalId: number): Promise<boolean> {
    const rows = await q
      .update(connections)
      .set(ERASED_PROVIDER_DATA)
      .where(
        and(
          eq(connections.portalId, portalId),
          eq(connections.status, 'inactive'),
          or(
            isNotNull(connections.providerUserId),
            sql`cardinality(${connections.assetIds}) > 0`,
            sql`cardinality(${connections.wabaIds}) > 0`,
            sql`cardinality(${connections.grantedPermissions}) > 0`,
          ),
        ),
      )
      .returning({ portalId: connections.portalId });
    return rows.length === 1;
  }

  /** Portal ids whose connection (active or not) belongs to `providerUserId`. */
  async portalIdsForProviderUser(providerUserId: string): Promise<number[]> {
    const rows = await this.#db
      .select({ portalId: connections.portalId })
      .from(connections)
      .where(eq(connections.providerUserId, providerUserId))
      .orderBy(connections.portalId);
    return rows.map((r) => r.portalId);
  }
}

export function createConnectionsStore(deps: { db: Database; keyring: Keyring }): ConnectionsStore {
  return new ConnectionsStore(deps);
}
