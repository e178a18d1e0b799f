/**
 * `Idempotency-Key` handling for every API route that creates something (tickets, contacts,
 * messages): the request fingerprint and the claim-or-replay step, run inside the caller's
 * transaction. One table, one semantics; the fingerprint names the route, so a key used on one
 * route is a conflict on another. The queries are in idempotency-repository.ts.
 *
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/
 * @see docs/decisions/0005-idempotency.md
 */
import { sha256Hex } from '../platform/crypto.ts';
import { AppError } from '../platform/errors.ts';
import { claimIdempotencyKey, findIdempotencyKey, type Tx } from './idempotency-repository.ts';

/** The first response stored under a key, as saved by `saveIdempotentResponse`. */
export interface StoredResponse {
  /** HTTP status of the first response. */
  status: number;
  /** Its JSON body, as stored (the caller knows its shape). */
  body: unknown;
}

/** JSON with object keys sorted, so equal requests hash equally whatever the key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * The fingerprint of a request: SHA-256 hex of the canonical JSON of `{ route, clean }`.
 *
 * `clean` is the body after defaults and secret redaction, so nothing derived from a secret is
 * stored. The `{ route, clean }` shape is part of the stored hashes: changing it would turn
 * retries across a deploy, within the 24-hour window, into conflicts.
 *
 * @param route the method and path, such as `POST /support/tickets`.
 */
export function requestFingerprint(route: string, clean: unknown): string {
  return sha256Hex(canonicalJson({ route, clean }));
}

/**
 * Claim `(portalId, key)` in the caller's transaction, or fetch the first response of the
 * earlier request that holds it. A concurrent request holding the key makes this wait until its
 * transaction ends.
 *
 * @returns null when this transaction now owns the key (go on and create, then save the
 *   response in the same transaction); otherwise the stored first response, to replay.
 * @throws AppError `idempotency_conflict` (409) when the key was used within 24 hours for a
 *   request with another fingerprint.
 * @throws AppError `internal_error` when the key row has no response (cannot happen: the row
 *   and its response are written in one transaction).
 */
export async function claimOrReplay(
  tx: Tx,
  portalId: number,
  key: string,
  requestHash: string,
): Promise<StoredResponse | null> {
  if (await claimIdempotencyKey(tx, portalId, key, requestHash)) return null;
  const existing = await findIdempotencyKey(tx, portalId, key);
  if (!existing || existing.responseStatus === null) {
    // Unreachable: the key row and its response are written in one transaction.
    throw new AppError('internal_error', 'The idempotency record is incomplete.');
  }
  if (existing.requestHash !== requestHash) {
    throw new AppError(
      'idempotency_conflict',
      'This Idempotency-Key was already used with a different request in the last ' +
        '24 hours; use a new key for a new request.',
    );
  }
  return { status: existing.responseStatus, body: existing.responseBody };
}
