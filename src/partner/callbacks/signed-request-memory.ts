/**
 * The provider `signed_request`s already processed, remembered for as long as they would be
 * accepted (`processed_signed_requests`): the one replay guard of the deauthorize and
 * data-deletion callbacks. A provider retry, or a replay within the freshness window, is
 * answered like the first time and changes nothing.
 *
 * @see docs/partner-connection.md "Callbacks from the provider"
 */
import { and, eq, lt } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { processedSignedRequests } from '../../db/schema/index.ts';
import { ISSUED_AT_SKEW_S } from './signed-request.ts';

export type ProviderCallback = 'deauthorize' | 'data_deletion';

/** A verified request, as `verifySignedRequest` returned it. */
export interface VerifiedSignedRequest {
  userId: string;
  /** Unix seconds. */
  issuedAt: number;
  fingerprint: string;
}

type Queryable = Pick<Database, 'select' | 'insert' | 'update' | 'delete'>;

/**
 * Remember `request` as processed by `callback`, unless it already was.
 *
 * @param maxAgeS PROVIDER_SIGNED_REQUEST_MAX_AGE_S: the row is kept until the request is stale.
 * @returns `{ first: true }` when this call claimed it (go on and process it); otherwise the
 *   first processing's confirmation code (null for a deauthorize). A concurrent claim of the
 *   same request waits for the first one's transaction.
 */
export async function claimSignedRequest(
  q: Queryable,
  callback: ProviderCallback,
  request: VerifiedSignedRequest,
  maxAgeS: number,
): Promise<{ first: true } | { first: false; confirmationCode: string | null }> {
  const claimed = await q
    .insert(processedSignedRequests)
    .values({
      callback,
      fingerprint: request.fingerprint,
      providerUserId: request.userId,
      expiresAt: new Date((request.issuedAt + maxAgeS + ISSUED_AT_SKEW_S) * 1000),
    })
    .onConflictDoNothing()
    .returning({ fingerprint: processedSignedRequests.fingerprint });
  if (claimed.length === 1) return { first: true };
  const [row] = await q
    .select({ confirmationCode: processedSignedRequests.confirmationCode })
    .from(processedSignedRequests)
    .where(whereRequest(callback, request.fingerprint));
  return { first: false, confirmationCode: row?.confirmationCode ?? null };
}

/** Record the confirmation code a claimed data-deletion request was answered with. */
export async function recordConfirmationCode(
  q: Queryable,
  request: VerifiedSignedRequest,
  confirmationCode: string,
): Promise<void> {
  await q
    .update(processedSignedRequests)
    .set({ confirmationCode })
    .where(whereRequest('data_deletion', request.fingerprint));
}

/**
 * Forget a claim whose processing failed, so that the provider's retry of the same request is
 * processed again rather than answered as a replay.
 */
export async function forgetSignedRequest(
  q: Queryable,
  callback: ProviderCallback,
  request: VerifiedSignedRequest,
): Promise<void> {
  await q.delete(processedSignedRequests).where(whereRequest(callback, request.fingerprint));
}

function whereRequest(callback: ProviderCallback, fingerprint: string) {
  return and(
    eq(processedSignedRequests.callback, callback),
    eq(processedSignedRequests.fingerprint, fingerprint),
  );
}

/**
 * Delete the records past their `expires_at`: the `partner.signed-requests-expire` background
 * task (src/background-tasks.ts). A request whose record expired is refused as stale before it
 * is claimed, so the deletion only frees storage.
 *
 * @returns how many were deleted.
 * @see docs/architecture.md "jobs/"
 */
export async function expireSignedRequests(db: Database, now = new Date()): Promise<number> {
  const gone = await db
    .delete(processedSignedRequests)
    .where(lt(processedSignedRequests.expiresAt, now))
    .returning({ fingerprint: processedSignedRequests.fingerprint });
  return gone.length;
}
