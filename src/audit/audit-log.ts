/**
 * The audit log: append and list. Every revocation, token change and key rotation is written
 * here with an actor and a timestamp.
 *
 * @see docs/partner-connection.md "Revocation" (every path writes one record)
 */
import { eq } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { keysetClauses, type PagePosition } from '../db/keyset-page.ts';
import { auditEvents } from '../db/schema/index.ts';

export type ActorType = 'user' | 'provider' | 'system' | 'agent';

/** Who did something: a user (id), a support agent (id), the provider (its user id), or a system component (`cli`, ...). */
export interface Actor {
  type: ActorType;
  id: string;
}

/** The operator at the admin CLI. */
export const CLI_ACTOR: Actor = { type: 'system', id: 'cli' };

/** The actions written so far; extend as features add events. */
export type AuditAction =
  | 'api_token.created'
  | 'api_token.regenerated'
  | 'api_token.scopes_changed'
  | 'api_key.created'
  | 'api_key.rotated'
  | 'api_key.revoked'
  | 'api_key.refused'
  | 'connection.created'
  | 'connection.revoked'
  | 'connection.cancelled'
  | 'connection.declined'
  | 'encryption_key.rotated'
  | 'secret.redacted'
  | 'data_deletion.requested'
  | 'provider_callback.ignored'
  | 'contact.erased'
  | 'contact.merged'
  | 'credit.added'
  | 'webhook_endpoint.created'
  | 'webhook_endpoint.removed'
  | 'webhook_endpoint.secret_rotated'
  | 'webhook_endpoint.disabled'
  | 'webhook_endpoint.enabled'
  | 'webhook_endpoint.replayed'
  | 'webhook_settings.changed'
  | 'messaging_settings.changed'
  | 'ticket.status_changed'
  | 'ticket.assigned'
  | 'conversation.assigned'
  | 'agent.created'
  | 'agent.disabled'
  | 'member.invited'
  | 'member.joined'
  | 'member.role_changed'
  | 'member.disabled'
  | 'member.enabled'
  | 'member.removed'
  | 'campaign.created'
  | 'campaign.changed'
  | 'campaign.scheduled'
  | 'campaign.started'
  | 'campaign.paused'
  | 'campaign.resumed'
  | 'campaign.cancelled'
  | 'campaign.completed';

export interface AuditEventInput {
  portalId: number | null;
  actor: Actor;
  action: AuditAction;
  /** Plain words; never a secret. */
  reason?: string | null;
  requestId?: string | null;
}

export interface AuditEvent {
  id: number;
  portalId: number | null;
  actorType: ActorType;
  actorId: string;
  action: string;
  reason: string | null;
  requestId: string | null;
  /** ISO 8601 UTC. */
  occurredAt: string;
}

/**
 * Append one event. Pass a transaction as `db` to write it atomically with the change it records.
 */
export async function recordAuditEvent(
  db: Pick<Database, 'insert'>,
  event: AuditEventInput,
): Promise<void> {
  await db.insert(auditEvents).values({
    portalId: event.portalId,
    actorType: event.actor.type,
    actorId: event.actor.id,
    action: event.action,
    reason: event.reason ?? null,
    requestId: event.requestId ?? null,
  });
}

/**
 * A portal's events, newest first: a keyset page on `(occurred_at, id)` (db/keyset-page.ts),
 * served by the `audit_events_portal_page` index whatever the page's depth.
 *
 * @param options.limit 1–500 (default 50); `after` the position of the last event of the
 *   previous page (`auditPosition`).
 */
export async function listAuditEvents(
  db: Database,
  portalId: number,
  options: { limit?: number | undefined; after?: PagePosition | undefined } = {},
): Promise<AuditEvent[]> {
  const limit = Math.min(Math.max(options.limit ?? 50, 1), 500);
  const { where, orderBy } = keysetClauses(
    { createdAt: auditEvents.occurredAt, id: auditEvents.id },
    [eq(auditEvents.portalId, portalId)],
    options.after,
  );
  const rows = await db
    .select()
    .from(auditEvents)
    .where(where)
    .orderBy(...orderBy)
    .limit(limit);
  return rows.map((r) => ({ ...r, occurredAt: r.occurredAt.toISOString() }));
}

/** An event's position in the newest-first order: where the page after it starts. */
export function auditPosition(event: Pick<AuditEvent, 'id' | 'occurredAt'>): PagePosition {
  return { createdAt: new Date(event.occurredAt), id: String(event.id) };
}
