/**
 * Endpoint management: add (the secret is returned once), list, remove, rotate the secret
 * (the previous one keeps signing for 24 hours), re-enable; every change audited in the same
 * transaction. The secret is sealed with the keyring (purpose `webhook-secret`, the portal id as
 * additional authenticated data) and opened only to sign.
 *
 * @see docs/webhooks.md "Endpoints"
 */
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { randomBase62 } from '../platform/crypto.ts';
import { AppError } from '../platform/errors.ts';
import type { Keyring, SealedValue, SealPurpose } from '../platform/keyring.ts';
import type { AddressPolicy } from './address-guard.ts';
import { checkEndpointUrl } from './endpoint-url.ts';
import { EVENT_TYPES, isEventType, type EventType } from './webhook-events.ts';
import { newSigningSecret } from './webhook-signing.ts';
import * as repo from './webhooks-repository.ts';

/** What the keyring binds a sealed signing secret to (beside the portal id). */
export const PURPOSE = 'webhook-secret' satisfies SealPurpose;

/** How long a rotated-out secret keeps signing, in milliseconds (24 h). */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** An endpoint as the page, the CLI and the API show it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  eventTypes: EventType[];
  enabled: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  /** Until when the previous secret still signs (ISO 8601), or null. */
  previousSecretValidUntil: string | null;
  createdAt: string;
}

export interface ChangeContext {
  actor: Actor;
  requestId?: string | undefined;
}

export function toEndpoint(row: repo.EndpointRow, now = Date.now()): WebhookEndpoint {
  const until = row.previousSecretExpiresAt;
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.eventTypes.filter(isEventType),
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    previousSecretValidUntil: until && until.getTime() > now ? until.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The endpoint's previous secret, as sealed, while it still signs at `now` (ms); else null. */
export function sealedPreviousSecret(row: repo.EndpointRow, now = Date.now()): SealedValue | null {
  const until = row.previousSecretExpiresAt;
  return until && until.getTime() > now ? row.previousSecret : null;
}

/** The live secrets of an endpoint, current first (the previous one while it overlaps). */
export function secretsOf(row: repo.EndpointRow, keyring: Keyring, now = Date.now()): string[] {
  const previous = sealedPreviousSecret(row, now);
  return [row.secret, ...(previous ? [previous] : [])].map((sealed) =>
    keyring.open(sealed, row.portalId, PURPOSE),
  );
}

function notFound(): AppError {
  return new AppError('not_found', 'No webhook endpoint with this id.');
}

/** Check a list of event types: known, at least one, no repeats (order kept). */
export function checkEventTypes(types: readonly string[]): EventType[] {
  const unknown = types.filter((t) => !isEventType(t));
  if (unknown.length > 0 || types.length === 0) {
    const message =
      types.length === 0
        ? 'must name at least one event type'
        : `unknown event type(s) ${unknown.join(', ')}; known: ${EVENT_TYPES.join(', ')}`;
    throw new AppError('invalid_request', `The event types ${message}.`, {
      details: [{ field: 'eventTypes', message }],
    });
  }
  return [...new Set(types as EventType[])];
}

export function createEndpointManagement(deps: {
  db: Database;
  keyring: Keyring;
  policy: AddressPolicy;
}) {
  const { db, keyring, policy } = deps;
  return {
    /**
     * Add an endpoint, enabled, with a new secret.
     *
     * @returns the endpoint, its secret (`whsec_…`, shown this once) and a notice for a
     *   development-only `http:` URL.
     * @throws AppError `invalid_request` for a refused URL or event type.
     */
    async addEndpoint(
      portalId: number,
      input: { url: string; eventTypes: readonly string[] },
      context: ChangeContext,
    ): Promise<{ endpoint: WebhookEndpoint; secret: string; notice: string | null }> {
      const { url, notice } = checkEndpointUrl(input.url, policy);
      const eventTypes = checkEventTypes(input.eventTypes);
      const secret = newSigningSecret();
      const sealed = keyring.seal(secret, portalId, PURPOSE);
      const row = await db.transaction(async (tx) => {
        const inserted = await repo.insertEndpoint(tx, {
          id: `ep_${randomBase62(16)}`,
          portalId,
          url,
          eventTypes,
          secret: sealed,
        });
        await recordAuditEvent(tx, {
          portalId,
          actor: context.actor,
          action: 'webhook_endpoint.created',
          reason: `Endpoint ${inserted.id} added for ${eventTypes.length} event type(s).`,
          requestId: context.requestId ?? null,
        });
        return inserted;
      });
      return { endpoint: toEndpoint(row), secret, notice };
    },

    listEndpoints: async (portalId: number): Promise<WebhookEndpoint[]> =>
      (await repo.listEndpoints(db, portalId)).map((r) => toEndpoint(r)),

    /** @throws AppError `not_found` for an unknown id and another portal's alike. */
    async removeEndpoint(portalId: number, id: string, context: ChangeContext): Promise<void> {
      await db.transaction(async (tx) => {
        if (!(await repo.deleteEndpoint(tx, portalId, id))) throw notFound();
        await recordAuditEvent(tx, {
          portalId,
          actor: context.actor,
          action: 'webhook_endpoint.removed',
          reason: `Endpoint ${id} removed.`,
          requestId: context.requestId ?? null,
        });
      });
    },

    /**
     * Replace the secret; the current one becomes the previous one and keeps signing (both
     * signatures sent) for 24 hours. A rotation during an overlap ends the older secret.
     *
     * @returns the new secret (shown once) and until when the previous one signs.
     * @throws AppError `not_found`.
     */
    async rotateSecret(
      portalId: number,
      id: string,
      context: ChangeContext,
    ): Promise<{ secret: string; previousSecretValidUntil: string }> {
      const secret = newSigningSecret();
      const sealed = keyring.seal(secret, portalId, PURPOSE);
      const until = new Date(Date.now() + ROTATION_OVERLAP_MS);
      await db.transaction(async (tx) => {
        const row = await repo.findEndpoint(tx, portalId, id, { forUpdate: true });
        if (!row) throw notFound();
        await repo.updateEndpoint(tx, portalId, id, {
          secret: sealed,
          previousSecret: row.secret,
          previousSecretExpiresAt: until,
        });
        await recordAuditEvent(tx, {
          portalId,
          actor: context.actor,
          action: 'webhook_endpoint.secret_rotated',
          reason: `Signing secret of ${id} rotated; the previous one signs until ${until.toISOString()}.`,
          requestId: context.requestId ?? null,
        });
      });
      return { secret, previousSecretValidUntil: until.toISOString() };
    },

    /** Enable a disabled endpoint (failing streak reset). @throws AppError `not_found`. */
    async enableEndpoint(portalId: number, id: string, context: ChangeContext) {
      return db.transaction(async (tx) => {
        const row = await repo.updateEndpoint(tx, portalId, id, {
          enabled: true,
          disabledReason: null,
          disabledAt: null,
          failingSince: null,
        });
        if (!row) throw notFound();
        await recordAuditEvent(tx, {
          portalId,
          actor: context.actor,
          action: 'webhook_endpoint.enabled',
          reason: `Endpoint ${id} enabled.`,
          requestId: context.requestId ?? null,
        });
        return toEndpoint(row);
      });
    },
  };
}
