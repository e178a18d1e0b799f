/**
 * A campaign's lifecycle moves, each a conditional UPDATE audited and announced as its
 * `campaign.*` event (messaging's `campaign.changed`, which services.ts turns into the tenant
 * webhook) in the move's transaction: draft → scheduled → running ⇄ paused → completed, or
 * cancelled from any status before the end.
 *
 * @see docs/decisions/0063-campaigns.md
 */
import { recordAuditEvent, type Actor } from '../../audit/audit-log.ts';
import type { Principal } from '../../accounts/principal.ts';
import type { Database } from '../../db/client.ts';
import type { campaigns, CampaignStatus } from '../../db/schema/campaigns.ts';
import type { CampaignChange, MessagingEvents } from '../events/messaging-events.ts';
import { moveCampaign, type CampaignKeyring, type CampaignRow } from './campaigns-repository.ts';

/** What a move needs: storage, the keyring of the row, where events go. */
export interface MoveDeps {
  db: Database;
  keyring: CampaignKeyring;
  events?: MessagingEvents | undefined;
}

/**
 * Who asks for a change: every query filters by its portal; the change is audited as its user
 * (an API key's owner, a signed-in member) or, for the CLI, as the actor given (`CLI_ACTOR`).
 */
export type CampaignCaller = Pick<Principal, 'portalId'> & ({ userId: number } | { actor: Actor });

/** The audit log's actor of `caller`'s changes. */
export const actorOf = (caller: CampaignCaller): Actor =>
  'actor' in caller ? caller.actor : { type: 'user', id: String(caller.userId) };

/** The system's own moves (a schedule reached, the end, a pause for a reason). */
export const RUNNER_ACTOR: Actor = { type: 'system', id: 'campaign-runner' };

/**
 * Move campaign `id` from one of `from` to `to`, auditing `action` and emitting `type`.
 *
 * @returns the row after, or null when it was in none of `from` (nothing changed).
 */
export async function move(
  deps: MoveDeps,
  m: {
    portalId: number;
    id: string;
    from: readonly CampaignStatus[];
    to: CampaignStatus;
    type: CampaignChange['type'];
    actor: Actor;
    reason?: string | null;
    requestId?: string | undefined;
    set?: Partial<typeof campaigns.$inferInsert>;
  },
): Promise<CampaignRow | null> {
  return deps.db.transaction(async (tx) => {
    const row = await moveCampaign(tx, deps.keyring, m.portalId, m.id, m.from, m.to, {
      statusReason: m.reason ?? null,
      ...m.set,
    });
    if (!row) return null;
    await recordAuditEvent(tx, {
      portalId: m.portalId,
      actor: m.actor,
      action: m.type,
      reason: `Campaign ${m.id} ${m.to}${m.reason ? ` (${m.reason})` : ''}.`,
      requestId: m.requestId ?? null,
    });
    await deps.events?.emitSerial('campaign.changed', {
      tx,
      portalId: m.portalId,
      change: {
        type: m.type,
        campaignId: m.id,
        status: m.to,
        reason: m.reason ?? null,
        occurredAt: row.updatedAt.toISOString(),
      },
    });
    return row;
  });
}
