/**
 * Failing queued messages and giving their credit back, in one transaction: the delivery
 * worker's final failures and the revocation step (docs/messaging.md "Retries and failures").
 */
import type { ErasureStep } from '../../contacts/contacts-service.ts';
import type { Database } from '../../db/client.ts';
import type { RevocationStep } from '../../partner/revocation/revocation.ts';
import { release } from '../credit/credit-ledger.ts';
import {
  failIfQueued,
  failQueuedOfPerson,
  failQueuedOfPortal,
  type MessageRow,
} from './messages-repository.ts';

/** The error of a message whose portal's connection was revoked before it was sent. */
const REVOKED_ERROR = {
  code: 'not_connected',
  title: 'The provider connection was revoked',
} as const;

/** The error of a message that was still queued when the portal's connection was found inactive. */
export const INACTIVE_ERROR = {
  code: 'not_connected',
  title: 'The portal has no active provider connection',
} as const;

/** The error of a message whose delivery job used up its attempts with no outcome. */
export const UNDELIVERED_ERROR = {
  code: 'delivery_failed',
  title: 'The message could not be handed to the provider',
} as const;

/** Who released credit in the ledger. */
const WORKER_ACTOR = 'system:delivery-worker';
const REVOCATION_ACTOR = 'system:revocation';

const releasesOf = (rows: readonly MessageRow[]) =>
  rows.map((r) => ({ messageId: r.id, amount: r.priceMinor, currency: r.currency }));

/**
 * Fail a message that is still `queued` and release its reservation.
 *
 * @returns false when the message had already left `queued` (nothing changed).
 */
export async function failQueuedMessage(
  db: Database,
  id: string,
  error: { code: string; title: string },
  options: { unlessAttempted?: boolean } = {},
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const row = await failIfQueued(tx, id, error, new Date(), options);
    if (!row) return false;
    await release(tx, row.portalId, releasesOf([row]), WORKER_ACTOR);
    return true;
  });
}

/**
 * The dead-letter queue's handler (delivery-queue.ts): each message whose send job used up its
 * attempts fails with `delivery_failed` and its credit is released — unless it has left
 * `queued`, the provider accepted it meanwhile (it has a wamid), or a send attempt's outcome is
 * unknown (the provider may have it; the settlement sweep decides), which changes nothing.
 *
 * @throws the database's error: the batch is retried by pg-boss.
 */
export async function failUndelivered(
  db: Database,
  jobs: readonly { messageId: string }[],
): Promise<void> {
  for (const job of jobs)
    await failQueuedMessage(db, job.messageId, UNDELIVERED_ERROR, { unlessAttempted: true });
}

/**
 * The revocation step (partner/'s `RevocationStep`, run inside the revocation's transaction):
 * every queued message of the portal the provider has not accepted fails with
 * `not_connected` / "The provider connection was revoked", and its credit is released. A
 * message the provider already accepted (it has a wamid) keeps waiting for its status webhook
 * and is billed; a send in flight was waited for before this step, so its wamid is recorded.
 */
export const failQueuedOnRevocation: RevocationStep = async (tx, { portalId }) => {
  const rows = await failQueuedOfPortal(tx, portalId, REVOKED_ERROR, new Date());
  await release(tx, portalId, releasesOf(rows), REVOCATION_ACTOR);
};

/** The error of a message whose recipient was erased (GDPR art. 17) while it was queued. */
const RECIPIENT_ERASED_ERROR = {
  code: 'recipient_erased',
  title: 'The recipient was erased before the message was sent',
} as const;

const ERASURE_ACTOR = 'system:contact-erasure';

/**
 * Fail the erased person's messages still queued and not accepted by the provider with
 * `recipient_erased`, and release their credit (nothing is sent to an erased person).
 *
 * @returns the messages failed.
 */
export async function failQueuedOfErased(
  tx: Parameters<ErasureStep>[0],
  contact: Parameters<ErasureStep>[1],
): Promise<MessageRow[]> {
  const failed = await failQueuedOfPerson(tx, contact, RECIPIENT_ERASED_ERROR, new Date());
  await release(tx, contact.portalId, releasesOf(failed), ERASURE_ACTOR);
  return failed;
}
