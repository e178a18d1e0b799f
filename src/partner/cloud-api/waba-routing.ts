/**
 * Which WhatsApp Business Accounts (WABAs) a connection's grant covers, and which portal a WABA
 * belongs to. The provider names a WABA in every webhook (`entry[].id`); this is the only way an
 * event reaches a portal (docs/security.md: events route to a portal only through the asset ids
 * of its active connection).
 *
 * A WABA is an asset that came with `whatsapp_business_messaging` or
 * `whatsapp_business_management` in `debug_token`'s `granular_scopes` (kept per permission in
 * `connections.granted_assets`, the WABA ids in the GIN-indexed `connections.waba_ids`).
 *
 * @see https://developers.facebook.com/docs/graph-api/reference/debug_token
 * @see docs/partner-connection.md "WhatsApp Cloud API"
 */
import { and, arrayContains, desc, eq, lt } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { connections } from '../../db/schema/index.ts';

/** The permissions whose assets are WABAs. */
export const WABA_PERMISSIONS: readonly string[] = [
  'whatsapp_business_messaging',
  'whatsapp_business_management',
];

/** The WABA ids among a grant's assets per permission, distinct, in the order first seen. */
export function wabaIdsOfGrant(grantedAssets: Record<string, string[]>): string[] {
  return [...new Set(WABA_PERMISSIONS.flatMap((p) => grantedAssets[p] ?? []))];
}

/** `granular_scopes` as `{ [permission]: target_ids }` (ids distinct; a repeated scope merges). */
export function assetsByPermission(
  granularScopes: readonly { scope: string; targetIds: string[] }[],
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const { scope, targetIds } of granularScopes)
    out[scope] = [...new Set([...(out[scope] ?? []), ...targetIds])];
  return out;
}

const GRAPH_ID = /^[0-9]{1,30}$/;

export type WabaRouting = ReturnType<typeof createWabaRouting>;

/** The WABA lookups over the connections table. */
export function createWabaRouting(db: Database) {
  return {
    /**
     * The WABA ids of the portal's active connection; [] when it is not connected (or the
     * grant holds no WABA).
     */
    wabaIdsOf: async (portalId: number): Promise<string[]> => {
      const [row] = await db
        .select({ wabaIds: connections.wabaIds })
        .from(connections)
        .where(and(eq(connections.portalId, portalId), eq(connections.status, 'active')));
      return row?.wabaIds ?? [];
    },

    /**
     * The portal whose active connection covers `wabaId`, or null. Should two active
     * connections cover it (one person connected two portals), the latest connection wins:
     * the person's newest choice.
     */
    portalOfWaba: async (wabaId: string): Promise<number | null> => {
      if (!GRAPH_ID.test(wabaId)) return null;
      const [row] = await db
        .select({ portalId: connections.portalId })
        .from(connections)
        .where(and(eq(connections.status, 'active'), arrayContains(connections.wabaIds, [wabaId])))
        .orderBy(desc(connections.connectedAt))
        .limit(1);
      return row?.portalId ?? null;
    },

    /**
     * Every portal whose active connection covers `wabaId` and was made before `before` (all
     * of them when undefined): whom the provider's removal of the WABA concerns.
     */
    activePortalsOfWaba: async (wabaId: string, before?: Date): Promise<number[]> => {
      if (!GRAPH_ID.test(wabaId)) return [];
      const rows = await db
        .select({ portalId: connections.portalId })
        .from(connections)
        .where(
          and(
            eq(connections.status, 'active'),
            arrayContains(connections.wabaIds, [wabaId]),
            before === undefined ? undefined : lt(connections.connectedAt, before),
          ),
        )
        .orderBy(connections.portalId);
      return rows.map((r) => r.portalId);
    },
  };
}
