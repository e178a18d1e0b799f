/**
 * What `/settings` shows of a portal's connection: never any token material.
 *
 * @see docs/partner-connection.md "Stored connection"
 */
import type { ConnectionRow } from './connections-store.ts';
import { capabilityOf } from './oauth/permissions.ts';

/** One provider permission as the connection card shows it: its plain words and its state. */
export interface PermissionState {
  /** The provider's permission name (small print beside the words). */
  permission: string;
  /** What it lets Portico do, in plain words (permissions.ts). */
  capability: string;
  /** Portico asked for it (PROVIDER_REQUIRED_PERMISSIONS). */
  requested: boolean;
  /** The person granted it. */
  granted: boolean;
}

export type ConnectionSummary =
  | {
      status: 'active';
      /** ISO 8601 UTC. */
      connectedAt: string;
      connectedBy: { userId: number; email: string } | null;
      /** Plain-words capabilities of the granted permissions. */
      capabilities: string[];
      /** Requested and granted permissions: the requested ones first, in their order. */
      permissions: PermissionState[];
      /** The business assets the grant covers (WABA ids for WhatsApp), as stored. */
      assetIds: string[];
      /** ISO 8601 UTC; null when the provider reported no expiry. */
      tokenExpiresAt: string | null;
      /** ISO 8601 UTC of the last health check; null before the first. */
      lastCheckedAt: string | null;
    }
  | { status: 'inactive'; revokedAt: string | null; revokeReason: string | null };

/** Requested permissions (in order) then any other granted one, each with its state. */
export function permissionStates(
  requested: readonly string[],
  granted: readonly string[],
): PermissionState[] {
  const grantedSet = new Set(granted);
  const requestedSet = new Set(requested);
  return [...new Set([...requested, ...granted])].map((permission) => ({
    permission,
    capability: capabilityOf(permission),
    requested: requestedSet.has(permission),
    granted: grantedSet.has(permission),
  }));
}

/**
 * The summary of a stored connection (null: the portal never connected).
 *
 * @param requestedPermissions what Portico asks for (empty when the provider is not configured).
 */
export function summarizeConnection(
  row: ConnectionRow | null,
  requestedPermissions: readonly string[] = [],
): ConnectionSummary {
  if (row?.status !== 'active')
    return {
      status: 'inactive',
      revokedAt: row?.revokedAt?.toISOString() ?? null,
      revokeReason: row?.revokeReason ?? null,
    };
  const permissions = permissionStates(requestedPermissions, row.grantedPermissions);
  return {
    status: 'active',
    connectedAt: row.connectedAt.toISOString(),
    connectedBy: row.connectedBy,
    capabilities: [...new Set(permissions.filter((p) => p.granted).map((p) => p.capability))],
    permissions,
    assetIds: row.assetIds,
    tokenExpiresAt: row.tokenExpiresAt?.toISOString() ?? null,
    lastCheckedAt: row.lastCheckedAt?.toISOString() ?? null,
  };
}
