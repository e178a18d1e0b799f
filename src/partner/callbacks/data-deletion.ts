/**
 * The provider's callbacks about a person, after their `signed_request` is verified: deauthorize
 * (the person removed the app: revoke their connections) and data deletion (revoke, erase the
 * provider-derived data, and keep a request with a confirmation code and a status page).
 *
 * @see https://developers.facebook.com/docs/development/create-an-app/app-dashboard/data-deletion-callback
 * @see https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow#deauth-callback
 * @see docs/partner-connection.md "Revocation" (paths 2 and 4)
 */
import { and, eq, isNull } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../../audit/audit-log.ts';
import type { Database } from '../../db/client.ts';
import { dataDeletionRequests } from '../../db/schema/index.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import type { ConnectionsStore } from '../connections-store.ts';
import type { RevokeConnection } from '../revocation/revocation.ts';
import {
  claimSignedRequest,
  forgetSignedRequest,
  recordConfirmationCode,
  type VerifiedSignedRequest,
} from './signed-request-memory.ts';

export type { VerifiedSignedRequest } from './signed-request-memory.ts';

type Queryable = Pick<Database, 'select' | 'insert' | 'update' | 'delete'>;

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
  /** PROVIDER_SIGNED_REQUEST_MAX_AGE_S: how long a processed request is remembered. */
  signedRequestMaxAgeS: number;
}

/** What a deauthorize did: how many connections it revoked, or that it was a replay. */
export interface DeauthorizeOutcome {
  revoked: number;
  /** Connections made after the request was signed, left alone (and audited as ignored). */
  ignored: number;
  /** The same signed_request was already processed: nothing changed. */
  replayed: boolean;
}

const IN_PROGRESS = 'The deletion is in progress.';

/**
 * Run `work` for a freshly claimed request; if it fails, forget the claim so that the
 * provider's retry of the same request is processed again rather than answered as a replay.
 */
async function orForget<T>(
  db: Database,
  callback: 'deauthorize' | 'data_deletion',
  request: VerifiedSignedRequest,
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    await forgetSignedRequest(db, callback, request).catch(() => {});
    throw err;
  }
}

/**
 * Revoke every connection of the person made before `request` was signed (actor provider).
 * A connection made since (the person connected again) is left alone and audited as ignored.
 */
async function revokeSignedBefore(
  { db, store, revokeConnection }: ProviderPersonCallbacksDeps,
  request: VerifiedSignedRequest,
  requestId: string | undefined,
): Promise<{ revoked: number; ignored: number }> {
  const actor: Actor = { type: 'provider', id: request.userId };
  // issued_at has whole seconds: a connection made within the signing second still counts as
  // before it (the person connected, then removed the app, within one second).
  const connectedBefore = new Date((request.issuedAt + 1) * 1000);
  let revoked = 0;
  let ignored = 0;
  for (const portalId of await store.portalIdsForProviderUser(request.userId)) {
    const result = await revokeConnection(portalId, {
      actor,
      reason: 'deauthorize',
      requestId,
      connectedBefore,
    });
    if (result.revoked) {
      revoked++;
      continue;
    }
    const row = await store.find(portalId);
    if (row?.status === 'active' && row.connectedAt >= connectedBefore) {
      ignored++;
      await recordAuditEvent(db, {
        portalId,
        actor,
        action: 'provider_callback.ignored',
        reason:
          'a deauthorize signed before the current connection was made was ignored; the connection stays',
        requestId: requestId ?? null,
      });
    }
  }
  return { revoked, ignored };
}

/**
 * The code of the person's open data-deletion request, opening one when there is none (the
 * partial unique index allows one open request per provider user).
 */
async function openRequestCode(q: Queryable, providerUserId: string): Promise<string> {
  const opened = await q
    .insert(dataDeletionRequests)
    .values({
      confirmationCode: randomBase62(16),
      providerUserId,
      connectionsDeleted: 0,
      summary: IN_PROGRESS,
    })
    .onConflictDoNothing()
    .returning({ code: dataDeletionRequests.confirmationCode });
  if (opened[0]) return opened[0].code;
  const [open] = await q
    .select({ code: dataDeletionRequests.confirmationCode })
    .from(dataDeletionRequests)
    .where(
      and(
        eq(dataDeletionRequests.providerUserId, providerUserId),
        isNull(dataDeletionRequests.completedAt),
      ),
    );
  // Unreachable unless the open request completed between the two statements: open another.
  return open?.code ?? openRequestCode(q, providerUserId);
}

/** Revoke and erase the person's connections, then complete the open request `code`. */
async function carryOutDeletion(
  { db, store, revokeConnection }: ProviderPersonCallbacksDeps,
  code: string,
  providerUserId: string,
  requestId: string | undefined,
): Promise<void> {
  const portalIds = await store.portalIdsForProviderUser(providerUserId);
  const actor: Actor = { type: 'provider', id: providerUserId };
  for (const portalId of portalIds) {
    const { revoked } = await revokeConnection(portalId, {
      actor,
      reason: 'data_deletion',
      requestId,
      eraseProviderData: true,
    });
    if (!revoked) await store.eraseProviderData(db, portalId);
  }
  const summary =
    portalIds.length === 0
      ? 'Portico held no data from your provider account.'
      : `Deleted the stored access token and the provider account details (your provider user id, the ids of your business assets and the permissions you granted) of ${portalIds.length} connection(s).`;
  await db.transaction(async (tx) => {
    await tx
      .update(dataDeletionRequests)
      .set({ connectionsDeleted: portalIds.length, summary, completedAt: new Date() })
      .where(eq(dataDeletionRequests.confirmationCode, code));
    for (const portalId of portalIds)
      await recordAuditEvent(tx, {
        portalId,
        actor,
        action: 'data_deletion.requested',
        reason: 'provider-derived data deleted',
        requestId: requestId ?? null,
      });
  });
}

export function createProviderPersonCallbacks(deps: ProviderPersonCallbacksDeps) {
  const { db } = deps;
  const statusUrl = (code: string) => `${deps.appBaseUrl}/data-deletion?code=${code}`;

  return {
    /**
     * Deauthorize: revoke every connection of the provider user made before the request was
     * signed (actor provider). A replay of a processed request changes nothing.
     */
    async deauthorize(
      request: VerifiedSignedRequest,
      requestId?: string,
    ): Promise<DeauthorizeOutcome> {
      const claim = await claimSignedRequest(db, 'deauthorize', request, deps.signedRequestMaxAgeS);
      if (!claim.first) return { revoked: 0, ignored: 0, replayed: true };
      const done = await orForget(db, 'deauthorize', request, () =>
        revokeSignedBefore(deps, request, requestId),
      );
      return { ...done, replayed: false };
    },

    /**
     * Data deletion: revoke (actor provider) and erase the provider-derived data of every
     * connection of the provider user, and record the request with an alphanumeric
     * confirmation code. The same signed_request, and any request of the same person while
     * one is open, answers with the same code.
     *
     * @returns the confirmation code and the status page URL.
     */
    async requestDataDeletion(
      request: VerifiedSignedRequest,
      requestId?: string,
    ): Promise<{ confirmationCode: string; url: string; replayed: boolean }> {
      // One transaction: a concurrent replay of this request waits on the claim, then reads
      // the code recorded here.
      const claimed = await db.transaction(async (tx) => {
        const claim = await claimSignedRequest(
          tx,
          'data_deletion',
          request,
          deps.signedRequestMaxAgeS,
        );
        if (!claim.first) return { code: claim.confirmationCode, replayed: true };
        const code = await openRequestCode(tx, request.userId);
        await recordConfirmationCode(tx, request, code);
        return { code, replayed: false };
      });
      if (claimed.code === null) throw new Error('A processed data deletion without its code.');
      const code = claimed.code;
      if (!claimed.replayed) {
        await orForget(db, 'data_deletion', request, () =>
          carryOutDeletion(deps, code, request.userId, requestId),
        );
      }
      return { confirmationCode: code, url: statusUrl(code), replayed: claimed.replayed };
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
