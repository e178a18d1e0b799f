/**
 * A portal's API keys: create (the secret shown once), list, rotate with an overlap, revoke,
 * and their usage. Used by the API (`/keys`, scope `tokens:manage`), the settings page (the
 * main administrator) and the CLI (`key create|list|rotate|revoke`).
 *
 * Every change runs in one transaction with its audit record and the `portico_token_change`
 * notification (token-change-channel.ts), so every instance drops the portal's cached keys when
 * it commits; `onTokenChange` drops this instance's at once.
 *
 * @see docs/decisions/0037-api-keys.md
 * @see docs/how-to/restrict-an-api-key.md
 */
import { and, asc, count, eq, sql } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { apiTokens, users } from '../db/schema/index.ts';
import { UsageError } from '../platform/errors.ts';
import { apiTokenHint, generateApiToken, hashApiToken } from './api-token.ts';
import { parseAllowedIps } from './ip-allow-list.ts';
import { MAX_USAGE_DAYS, readKeyUsage, type ApiKeyUsage } from './key-usage-report.ts';
import { parseScopes, type Scope } from './scopes.ts';
import { notifyTokenChange } from './token-change-channel.ts';

/** Most keys one portal may hold. */
export const MAX_KEYS_PER_PORTAL = 50;
/** Longest a rotated key's previous secret keeps working, in seconds (24 h). */
export const MAX_ROTATION_OVERLAP_S = 86_400;
/** Bounds of a key's own rate limit, in requests per minute. */
export const KEY_RATE_LIMIT_MAX = 1_000_000;

const NAME_MAX = 100;
// No control characters: a name is shown on pages, in the CLI and in the audit log.
const CONTROL = /\p{Cc}/u;

/** A key as shown to people and clients: never its secret nor its hash. */
export interface ApiKeyView {
  id: number;
  name: string;
  /** The last 4 characters of the current secret. */
  hint: string;
  scopes: Scope[];
  /** ISO 8601 UTC; null: never expires. */
  expiresAt: string | null;
  /** Normalised CIDR ranges; null: any address. */
  allowedIps: string[] | null;
  /** Requests per minute; null: the instance's limit. */
  rateLimitPerMinute: number | null;
  /** ISO 8601 UTC: when the current secret was issued. */
  createdAt: string;
  /** ISO 8601 UTC, to about 10 s; null: unused since issued. */
  lastUsedAt: string | null;
  lastUsedIp: string | null;
  /** ISO 8601 UTC: until when the previous secret still works after a rotation; else null. */
  previousSecretValidUntil: string | null;
}

/** The input of a new key, as the API, the page and the CLI give it. */
export interface NewKeyInput {
  portalId: number;
  name: string;
  scopes: readonly string[];
  /** ISO 8601 (or a Date); absent or null: never. Must be in the future. */
  expiresAt?: string | Date | null | undefined;
  allowedIps?: readonly string[] | null | undefined;
  rateLimitPerMinute?: number | null | undefined;
  /**
   * The scopes the creator may grant: a key created through the API gets at most the scopes of
   * the key that creates it; absent: the whole catalog (the administrator, the CLI).
   */
  grantable?: readonly Scope[];
  /** The user the key acts as; absent: the portal's main administrator. */
  ownerUserId?: number;
  actor: Actor;
  /** How the change was made, for the audit reason ("through API key 3"). */
  via?: string;
}

const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

function viewOf(row: typeof apiTokens.$inferSelect, now: number): ApiKeyView {
  const previous = row.previousValidUntil;
  return {
    id: row.id,
    name: row.name,
    hint: row.tokenHint,
    scopes: row.scopes as Scope[],
    expiresAt: iso(row.expiresAt),
    allowedIps: row.allowedIps,
    rateLimitPerMinute: row.rateLimitPerMinute,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
    lastUsedIp: row.lastUsedIp,
    previousSecretValidUntil:
      row.previousTokenHash && previous && previous.getTime() > now ? previous.toISOString() : null,
  };
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (name.length < 1 || name.length > NAME_MAX || CONTROL.test(name))
    throw new UsageError(`Give the key a name of 1 to ${NAME_MAX} characters.`);
  return name;
}

function checkExpiry(raw: string | Date | null | undefined, now: number): Date | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const at = raw instanceof Date ? raw : new Date(raw);
  if (Number.isNaN(at.getTime()))
    throw new UsageError('expiresAt: give an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z.');
  if (at.getTime() <= now) throw new UsageError('expiresAt: give a time in the future.');
  return at;
}

function checkRateLimit(raw: number | null | undefined): number | null {
  if (raw === undefined || raw === null) return null;
  if (!Number.isInteger(raw) || raw < 1 || raw > KEY_RATE_LIMIT_MAX)
    throw new UsageError(
      `rateLimitPerMinute: give a whole number from 1 to ${KEY_RATE_LIMIT_MAX}.`,
    );
  return raw;
}

/**
 * Check scopes against the catalog and against what the creator may grant.
 *
 * @throws UsageError for an unknown scope, none, or one the creator does not hold.
 */
function checkScopes(names: readonly string[], grantable: readonly Scope[] | undefined): Scope[] {
  const scopes = parseScopes(names);
  if (grantable) {
    const held = new Set<string>(grantable);
    const beyond = scopes.filter((s) => !held.has(s));
    if (beyond.length > 0)
      throw new UsageError(
        `A key can only be given scopes the key that creates it has; not: ${beyond.join(', ')}.`,
      );
  }
  return scopes;
}

const notFound = (keyId: number) =>
  new UsageError(`No API key ${keyId} in this portal.`, 'not_found');

export class ApiKeysService {
  readonly #db: Database;
  readonly #onTokenChange: (portalId: number) => void;
  readonly #now: () => number;

  constructor(deps: {
    db: Database;
    onTokenChange?: (portalId: number) => void;
    now?: () => number;
  }) {
    this.#db = deps.db;
    this.#onTokenChange = deps.onTokenChange ?? (() => {});
    this.#now = deps.now ?? Date.now;
  }

  /** The portal's keys, oldest first. */
  async list(portalId: number): Promise<ApiKeyView[]> {
    const rows = await this.#db
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.portalId, portalId))
      .orderBy(asc(apiTokens.id));
    const now = this.#now();
    return rows.map((r) => viewOf(r, now));
  }

  /** One key of the portal. @throws UsageError `not_found` for a key of no portal or another. */
  async get(portalId: number, keyId: number): Promise<ApiKeyView> {
    const [row] = await this.#db
      .select()
      .from(apiTokens)
      .where(and(eq(apiTokens.id, keyId), eq(apiTokens.portalId, portalId)));
    if (!row) throw notFound(keyId);
    return viewOf(row, this.#now());
  }

  /**
   * Create a key.
   *
   * @returns the key and its secret in clear: the only time the secret is available.
   * @throws UsageError on a bad name, scope, expiry, address or limit; a scope the creator
   *   cannot grant; more than `MAX_KEYS_PER_PORTAL` keys.
   */
  async create(input: NewKeyInput): Promise<{ key: ApiKeyView; secret: string }> {
    const now = this.#now();
    const name = checkName(input.name);
    const scopes = checkScopes(input.scopes, input.grantable);
    const expiresAt = checkExpiry(input.expiresAt, now);
    const allowedIps = parseAllowedIps(input.allowedIps);
    const rateLimitPerMinute = checkRateLimit(input.rateLimitPerMinute);
    const secret = generateApiToken();
    const row = await this.#db.transaction(async (tx) => {
      // Serialises creations of one portal, so the count below holds.
      await tx.execute(sql`select pg_advisory_xact_lock(7246, ${input.portalId})`);
      const [held] = await tx
        .select({ n: count() })
        .from(apiTokens)
        .where(eq(apiTokens.portalId, input.portalId));
      if ((held?.n ?? 0) >= MAX_KEYS_PER_PORTAL)
        throw new UsageError(
          `A portal has at most ${MAX_KEYS_PER_PORTAL} API keys; revoke one first.`,
        );
      const ownerUserId = input.ownerUserId ?? (await this.#mainAdmin(tx, input.portalId));
      const [inserted] = await tx
        .insert(apiTokens)
        .values({
          portalId: input.portalId,
          userId: ownerUserId,
          name,
          tokenHash: hashApiToken(secret),
          tokenHint: apiTokenHint(secret),
          scopes,
          expiresAt,
          allowedIps,
          rateLimitPerMinute,
          createdBy: `${input.actor.type}:${input.actor.id}`,
        })
        .returning();
      await recordAuditEvent(tx, {
        portalId: input.portalId,
        actor: input.actor,
        action: 'api_key.created',
        reason: `API key ${inserted!.id} (${name})${input.via ? ` ${input.via}` : ''}`,
      });
      return inserted!;
    });
    this.#onTokenChange(input.portalId);
    return { key: viewOf(row, now), secret };
  }

  /**
   * Give a key a new secret. The previous secret keeps working for `overlapSeconds` (0: stops at
   * once, on every instance as soon as this commits), then stops; a secret replaced by an
   * earlier rotation stops now. Name, scopes, expiry, addresses and limit stay.
   *
   * @param input.overlapSeconds 0 to `MAX_ROTATION_OVERLAP_S`.
   * @returns the key and its new secret in clear (shown once).
   * @throws UsageError `not_found` for a key of another portal; a bad overlap.
   */
  async rotate(input: {
    portalId: number;
    keyId: number;
    overlapSeconds: number;
    actor: Actor;
    via?: string;
  }): Promise<{ key: ApiKeyView; secret: string }> {
    const overlap = input.overlapSeconds;
    if (!Number.isInteger(overlap) || overlap < 0 || overlap > MAX_ROTATION_OVERLAP_S)
      throw new UsageError(
        `overlapSeconds: give a whole number of seconds from 0 to ${MAX_ROTATION_OVERLAP_S} (24 hours).`,
      );
    const now = this.#now();
    const secret = generateApiToken();
    const row = await this.#db.transaction(async (tx) => {
      const [updated] = await tx
        .update(apiTokens)
        .set({
          previousTokenHash: sql`${apiTokens.tokenHash}`,
          previousValidUntil: new Date(now + overlap * 1000),
          tokenHash: hashApiToken(secret),
          tokenHint: apiTokenHint(secret),
          createdAt: new Date(now),
          createdBy: `${input.actor.type}:${input.actor.id}`,
        })
        .where(and(eq(apiTokens.id, input.keyId), eq(apiTokens.portalId, input.portalId)))
        .returning();
      if (!updated) throw notFound(input.keyId);
      await recordAuditEvent(tx, {
        portalId: input.portalId,
        actor: input.actor,
        action: 'api_key.rotated',
        reason:
          `API key ${updated.id} (${updated.name}): the previous secret ` +
          (overlap === 0 ? 'stopped at once' : `works for ${overlap} more seconds`) +
          (input.via ? ` (${input.via})` : ''),
      });
      await notifyTokenChange(tx, input.portalId);
      return updated;
    });
    this.#onTokenChange(input.portalId);
    return { key: viewOf(row, now), secret };
  }

  /**
   * Revoke a key: it stops working on every instance as soon as this commits (its usage goes
   * with it).
   *
   * @throws UsageError `not_found` for a key of another portal.
   */
  async revoke(input: { portalId: number; keyId: number; actor: Actor; via?: string }) {
    await this.#db.transaction(async (tx) => {
      const [deleted] = await tx
        .delete(apiTokens)
        .where(and(eq(apiTokens.id, input.keyId), eq(apiTokens.portalId, input.portalId)))
        .returning({ id: apiTokens.id, name: apiTokens.name });
      if (!deleted) throw notFound(input.keyId);
      await recordAuditEvent(tx, {
        portalId: input.portalId,
        actor: input.actor,
        action: 'api_key.revoked',
        reason: `API key ${deleted.id} (${deleted.name})${input.via ? ` ${input.via}` : ''}`,
      });
      await notifyTokenChange(tx, input.portalId);
    });
    this.#onTokenChange(input.portalId);
    return { id: input.keyId, revoked: true as const };
  }

  /**
   * A key's usage over the last `days` days (today included, UTC): requests per day by status
   * class, and by operation. Counts are written in batches, so the last few seconds may be
   * missing.
   *
   * @throws UsageError `not_found` for a key of another portal; days outside 1–90.
   */
  async usage(portalId: number, keyId: number, days = 30): Promise<ApiKeyUsage> {
    if (!Number.isInteger(days) || days < 1 || days > MAX_USAGE_DAYS)
      throw new UsageError(`days: give a whole number from 1 to ${MAX_USAGE_DAYS}.`);
    const key = await this.get(portalId, keyId);
    return readKeyUsage(this.#db, key, days, this.#now());
  }

  async #mainAdmin(tx: Pick<Database, 'select'>, portalId: number): Promise<number> {
    const [admin] = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.portalId, portalId), eq(users.isMainAdmin, true)));
    if (!admin) throw new UsageError('This portal has no main administrator to own the key.');
    return admin.id;
  }
}

export function createApiKeysService(deps: ConstructorParameters<typeof ApiKeysService>[0]) {
  return new ApiKeysService(deps);
}
