import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import type { SealedValue } from '../../platform/keyring.ts';
import { portals } from './portals.ts';
import { users } from './users.ts';

/**
 * A portal's connection to the provider: at most one per portal (`portal_id` is the key), so a
 * repeated connection replaces the previous one.
 *
 * Invariants: the provider token is held only sealed by the keyring (`token`: AES-256-GCM
 * ciphertext, IV, tag and key id; additional authenticated data: the portal id), never in
 * clear. An `inactive` row holds no token at all: revocation deletes it. Every query filters by `portal_id`.
 *
 * @see docs/partner-connection.md "Stored connection"
 */
export const connections = pgTable(
  'connections',
  {
    portalId: integer('portal_id')
      .primaryKey()
      .references(() => portals.id, { onDelete: 'cascade' }),
    status: text('status', { enum: ['active', 'inactive'] }).notNull(),
    /** The provider's id of the person who granted access (signed_request `user_id`). */
    providerUserId: text('provider_user_id'),
    /** Provider assets the grant covers (`granular_scopes[].target_ids`). */
    assetIds: text('asset_ids')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** Asset ids per permission (`{ [permission]: target_ids }` of `granular_scopes`). */
    grantedAssets: jsonb('granted_assets')
      .$type<Record<string, string[]>>()
      .notNull()
      .default(sql`'{}'::jsonb`),
    /**
     * The WhatsApp Business Account ids of the grant: the assets that came with
     * `whatsapp_business_messaging` or `whatsapp_business_management`. GIN-indexed: the provider's
     * webhooks are routed to a portal by WABA id (`portalOfWaba`).
     */
    wabaIds: text('waba_ids')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    grantedPermissions: text('granted_permissions')
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    /** The provider token, sealed (`SealedValue`, purpose `connection`); null once revoked. */
    token: jsonb('token').$type<SealedValue>(),
    /** Null when the provider reports no expiry. */
    tokenExpiresAt: timestamp('token_expires_at', { withTimezone: true }),
    connectedAt: timestamp('connected_at', { withTimezone: true }).notNull().defaultNow(),
    connectedBy: integer('connected_by').references(() => users.id, { onDelete: 'set null' }),
    lastCheckedAt: timestamp('last_checked_at', { withTimezone: true }),
    /** Health-check lease: which instance checks this connection, and until when. */
    checkLeaseOwner: text('check_lease_owner'),
    checkLeaseUntil: timestamp('check_lease_until', { withTimezone: true }),
    /**
     * Onboarding claim: which instance is onboarding this connection, and until when. One
     * onboarding runs per connection at a time, so no provider call is made twice.
     */
    onboardingOwner: text('onboarding_owner'),
    onboardingUntil: timestamp('onboarding_until', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokeReason: text('revoke_reason'),
  },
  (t) => [
    index('connections_provider_user').on(t.providerUserId),
    index('connections_status_checked').on(t.status, t.lastCheckedAt),
    index('connections_waba_ids').using('gin', t.wabaIds),
  ],
);
