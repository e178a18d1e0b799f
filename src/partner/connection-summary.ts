/**
 * What `/settings` shows of a portal's connection: never any token material.
 *
 * @see docs/partner-connection.md "Stored connection"
 */
import type { ConnectionRow } from './connections-store.ts';
import { capabilitiesOf } from './permissions.ts';

export type ConnectionSummary =
  | {
      status: 'active';
      /** ISO 8601 UTC. */
      connectedAt: string;
      connectedBy: { userId: number; email: string } | null;
      /** Plain-words capabilities of the granted permissions. */
      capabilities: string[];
      assetIds: string[];
    }
  | { status: 'inactive'; revokedAt: string | null; revokeReason: string | null };

/** The summary of a stored connection (null: the portal never connected). */
export function summarizeConnection(row: ConnectionRow | null): ConnectionSummary {
  if (row?.status !== 'active')
    return {
      status: 'inactive',
      revokedAt: row?.revokedAt?.toISOString() ?? null,
      revokeReason: row?.revokeReason ?? null,
    };
  return {
    status: 'active',
    connectedAt: row.connectedAt.toISOString(),
    connectedBy: row.connectedBy,
    capabilities: capabilitiesOf(row.grantedPermissions),
    assetIds: row.assetIds,
  };
}
