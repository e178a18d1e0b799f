/**
 * The sender numbers of a portal's connected account: every phone number of every WABA of the
 * connection, read from the Cloud API and kept for a short while per portal.
 *
 * Invariants: every call first reads the portal's WABA ids from its connection, so a revoked
 * connection is `not_connected` at once and its cached numbers are dropped; a cached list is
 * used only for the same set of WABAs and for at most `cacheTtlMs`.
 *
 * @see https://developers.facebook.com/docs/whatsapp/business-management-api/manage-phone-numbers
 * @see docs/decisions.md "Messaging: numbers and templates"
 */
import type { PhoneNumber } from '../../partner/cloud-api/cloud-api.ts';
import {
  callCloud,
  requireWabaIds,
  type CloudAccountDeps,
} from '../provider/numbers-cloud-account.ts';

export type { PhoneNumber } from '../../partner/cloud-api/cloud-api.ts';

/** Default lifetime of a portal's cached numbers, in ms. */
export const NUMBERS_CACHE_TTL_MS = 60_000;

export type NumbersService = ReturnType<typeof createNumbersService>;

export function createNumbersService(deps: {
  partner: CloudAccountDeps;
  /** How long a portal's numbers are reused, in ms (0: never). */
  cacheTtlMs?: number;
  /** The clock, in ms (tests). */
  now?: () => number;
}) {
  const { partner } = deps;
  const ttl = deps.cacheTtlMs ?? NUMBERS_CACHE_TTL_MS;
  const now = deps.now ?? Date.now;
  const cache = new Map<number, { key: string; until: number; numbers: PhoneNumber[] }>();

  return {
    /**
     * Every phone number of the portal's WABAs, in WABA order.
     *
     * @throws AppError `not_connected` (409), `provider_error` (502), `provider_timeout` (504).
     */
    async listNumbers(portalId: number): Promise<PhoneNumber[]> {
      let wabaIds: string[];
      try {
        wabaIds = await requireWabaIds(partner, portalId);
      } catch (err) {
        cache.delete(portalId);
        throw err;
      }
      const key = wabaIds.join(',');
      const hit = cache.get(portalId);
      if (hit && hit.key === key && hit.until > now()) return hit.numbers;
      const numbers: PhoneNumber[] = [];
      for (const wabaId of wabaIds) {
        numbers.push(
          ...(await callCloud(partner, portalId, 'phone numbers read', (cloud) =>
            cloud.listPhoneNumbers(wabaId),
          )),
        );
      }
      if (ttl > 0) cache.set(portalId, { key, until: now() + ttl, numbers });
      return numbers;
    },

    /** Forget a portal's numbers (after a revocation or reconnection). */
    forget(portalId: number): void {
      cache.delete(portalId);
    },
  };
}
