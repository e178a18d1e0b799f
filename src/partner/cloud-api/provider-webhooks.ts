/**
 * The provider's webhooks, the service side (no HTTP here; the routes are in
 * provider-webhooks-routes.ts): the subscription's verify-token check, the `X-Hub-Signature-256`
 * check over the raw body, and what `account_update` / `PARTNER_REMOVED` does (the revocation
 * cleanup, actor provider).
 *
 * Invariants: both comparisons run in constant time on equal-length digests; an unconfigured
 * provider or verify token verifies nothing; the app secret is read from the settings only here
 * and in the provider client.
 *
 * @see https://developers.facebook.com/docs/graph-api/webhooks/getting-started#verification-requests
 * @see https://developers.facebook.com/docs/graph-api/webhooks/getting-started#event-notifications
 * @see docs/partner-connection.md "WhatsApp Cloud API"
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Actor } from '../../audit/audit-log.ts';
import type { ProviderSettings } from '../../config.ts';
import type { Logger } from '../../platform/logger.ts';
import type { RevokeConnection } from '../revocation/revocation.ts';
import type { WabaRouting } from './waba-routing.ts';

/** `sha256=` and 64 lower- or upper-case hex digits. */
const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/** The provider, acting on a WABA (audit actor of a `PARTNER_REMOVED` revocation). */
export function wabaActor(wabaId: string): Actor {
  return { type: 'provider', id: `waba:${wabaId}` };
}

export type ProviderWebhooks = ReturnType<typeof createProviderWebhooks>;

export function createProviderWebhooks(deps: {
  settings: ProviderSettings | null;
  routing: WabaRouting;
  revokeConnection: RevokeConnection;
  log: Logger;
}) {
  const { settings, routing, revokeConnection, log } = deps;
  return {
    /**
     * Whether a subscription verification request (`hub.mode=subscribe`,
     * `hub.verify_token`) carries the configured verify token. Compared as SHA-256 digests in
     * constant time, so neither the content nor the length leaks through timing.
     */
    verifyWebhookSubscription(mode: string | undefined, verifyToken: string | undefined): boolean {
      const expected = settings?.webhookVerifyToken;
      if (mode !== 'subscribe' || !expected || verifyToken === undefined) return false;
      const digest = (v: string) => createHash('sha256').update(v, 'utf8').digest();
      return timingSafeEqual(digest(verifyToken), digest(expected));
    },

    /**
     * Whether `X-Hub-Signature-256` is `sha256=` + hex HMAC-SHA256(app secret, `rawBody`),
     * compared in constant time. False for a missing or malformed header and when the
     * provider is not configured.
     */
    verifyWebhookSignature(rawBody: Buffer, header: string | undefined): boolean {
      if (!settings || header === undefined) return false;
      const hex = SIGNATURE.exec(header.trim())?.[1];
      if (!hex) return false;
      const expected = createHmac('sha256', settings.appSecret).update(rawBody).digest();
      return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
    },

    /**
     * `account_update` with `PARTNER_REMOVED`: the business removed Portico's app from its WABA.
     * Revokes every active connection covering the WABA that was made before the event
     * (`eventTime`, whole seconds as the webhook's `entry[].time`: a connection made within that
     * second still counts as before). Idempotent: a repeated delivery finds nothing active.
     *
     * @returns the portal ids this call revoked.
     */
    async partnerRemoved(
      wabaId: string,
      eventTime: Date | undefined,
      requestId?: string,
    ): Promise<number[]> {
      const before = eventTime && new Date(eventTime.getTime() + 1000);
      const revoked: number[] = [];
      for (const portalId of await routing.activePortalsOfWaba(wabaId, before)) {
        const outcome = await revokeConnection(portalId, {
          actor: wabaActor(wabaId),
          reason: 'partner_removed',
          requestId,
          connectedBefore: before,
        });
        if (outcome.revoked) revoked.push(portalId);
      }
      if (revoked.length > 0) log.info({ revoked: revoked.length }, 'PARTNER_REMOVED: revoked');
      return revoked;
    },
  };
}
