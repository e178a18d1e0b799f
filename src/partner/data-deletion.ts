/**
 * The provider's callbacks about a person, after their `signed_request` is verified: deauthorize
 * (the person removed the app: revoke their connections) and data deletion (revoke, erase the
 * provider-derived data, and keep a request with a confirmation code and a status page).
 *
 * @see https://developers.facebook.com/docs/development/create-an-app/app-dashboard/data-deletion-callback
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow#deauth-callback
 * @see docs/partner-connection.md "Revocation" (paths 2 and 4)
 */
import { eq } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { dataDeletionRequests } from '../db/schema/index.ts';
import { randomBase62 } from '../platform/crypto.ts';
import type { ConnectionsStore } from './connections-store.ts';
import { REVOKE_REASONS, type RevokeConnection } from './revocation.ts';

export interface DataDeletionStatus {
  confirmationCode: string;
  /** ISO 8601 UTC. */
  requestedAt: string;
  completedAt: string | null;
  connectionsDeleted: number;
  summary: string;
}

export interface ProviderPersonCallbacksDeps {
  db: Database;
  store: ConnectionsStore;
  revokeConnection: RevokeConnection;
  /** `APP_BASE_URL`: the status page's origin. */
  appBaseUrl: string;
}

export function createProviderPersonCallbacks(deps: ProviderPersonCallbacksDeps) {
  const { db, store, revokeConnection } = deps;
  return {
    /**
     * Deauthorize: revoke every connection of the provider user (actor provider).
     *
     * @returns how many connections were revoked (0 for an unknown user).
     */
    async deauthorize(providerUserId: string, requestId?: string): Promise<number> {
      let n = 0;
      for (const portalId of await store.portalIdsForProviderUser(providerUserId)) {
        const { revoked } = await revokeConnection(portalId, {
          actor: { type: 'provider', id: providerUserId },
          reason: REVOKE_REASONS.deauthorized,
          requestId,
        });
        if (revoked) n++;
      }
      return n;
    },

    /**
     * Data deletion: revoke (actor provider) and erase the provider-derived data of every
     * connection of the provider user, and record the request with an alphanumeric
     * confirmation code.
     *
     * @returns the confirmation code and the status page URL.
     */
    async requestDataDeletion(
      providerUserId: string,
      requestId?: string,
    ): Promise<{ confirmationCode: string; url: string }> {
      const portalIds = await store.portalIdsForProviderUser(providerUserId);
      const actor: Actor = { type: 'provider', id: providerUserId };
      for (const portalId of portalIds) {
        const { revoked } = await revokeConnection(portalId, {
          actor,
          reason: REVOKE_REASONS.dataDeletion,
          requestId,
          eraseProviderData: true,
        });
        if (!revoked) await store.eraseProviderData(db, portalId);
      }
      const confirmationCode = randomBase62(16);
      const summary =
        portalIds.length === 0
          ? 'Portico held no data from your provider account.'
          : `Deleted the stored access token and the provider account details (your provider user id, the ids of your business assets and the permissions you granted) of ${portalIds.length} connection(s).`;
      await db.transaction(async (tx) => {
        const now = new Date();
        await tx.insert(dataDeletionRequests).values({
          confirmationCode,
          providerUserId,
          connectionsDeleted: portalIds.length,
          summary,
          requestedAt: now,
          completedAt: now,
        });
        for (const portalId of portalIds)
          await recordAuditEvent(tx, {
            portalId,
            actor,
            action: 'data_deletion.requested',
            reason: 'provider-derived data deleted',
            requestId: requestId ?? null,
          });
      });
      return {
        confirmationCode,
        url: `${deps.appBaseUrl}/data-deletion?code=${confirmationCode}`,
      };
    },

    /** The status of a data deletion request, or null for an unknown code. */
    async dataDeletionStatus(confirmationCode: string): Promise<DataDeletionStatus | null> {
      const [row] = await db
        .select()
        .from(dataDeletionRequests)
        .where(eq(dataDeletionRequests.confirmationCode, confirmationCode));
      if (!row) return null;
      return {
        confirmationCode: row.confirmationCode,
        requestedAt: row.requestedAt.toISOString(),
        completedAt: row.completedAt?.toISOString() ?? null,
        connectionsDeleted: row.connectionsDeleted,
        summary: row.summary,
      };
    },
  };
}
