/**
 * Whether a provider person's grant is still in use by a connection. The provider keeps one
 * grant per app and person, so revoking it (`DELETE /{user-id}/permissions`) ends every token
 * of that person for the app — in every portal that person connected.
 *
 * @see https://developers.facebook.com/docs/facebook-login/guides/permissions/request-revoke#revoking
 * @see docs/partner-connection.md "Revocation"
 */
import { and, eq, ne } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { connections } from '../../db/schema/index.ts';

/**
 * Whether an active connection of a portal other than `exceptPortalId` (null: of any portal)
 * belongs to `providerUserId`.
 */
export async function isGrantShared(
  q: Pick<Database, 'select'>,
  providerUserId: string,
  exceptPortalId: number | null,
): Promise<boolean> {
  const rows = await q
    .select({ portalId: connections.portalId })
    .from(connections)
    .where(
      and(
        eq(connections.providerUserId, providerUserId),
        eq(connections.status, 'active'),
        exceptPortalId === null ? undefined : ne(connections.portalId, exceptPortalId),
      ),
    )
    .limit(1);
  return rows.length > 0;
}
