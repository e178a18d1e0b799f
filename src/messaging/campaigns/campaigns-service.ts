/**
 * Campaigns: one approved template to an audience at a pace, from a sender number
 * (`/messaging/campaigns`). Creating or changing one checks what can be checked before it runs:
 * a schedule in the future, the template approved (not paused) in the sender's WABA, the sender
 * number onboarded, its pace within the number's throughput, an audience that is not empty.
 * Starting resolves the audience once into the stored snapshot (campaign-audience.ts), prices
 * it (recipients × the template category's price) and refuses a start the credit does not
 * cover (402, with the shortfall); the runner (campaign-runner.ts) then sends.
 *
 * @see docs/decisions/0063-campaigns.md
 * @see docs/how-to/send-a-campaign.md
 */
import { sql } from 'drizzle-orm';
import { keysetCursor } from '../../api-kit/keyset-cursor.ts';
import { recordAuditEvent } from '../../audit/audit-log.ts';
import type { Database } from '../../db/client.ts';
import type { CampaignAudience } from '../../db/schema/campaigns.ts';
import { randomBase62 } from '../../platform/crypto.ts';
import { AppError } from '../../platform/errors.ts';
import { failQueuedMessage } from '../store/message-failures.ts';
import type { MessagingPrices } from '../outbound/message-sending.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import type { ProviderAdapter } from '../provider/provider-adapter.ts';
import { failuresByCode, readCounts, reportPage } from './campaign-counts.ts';
import { actorOf, move, type CampaignCaller, type MoveDeps } from './campaign-lifecycle.ts';
import { checkFields } from './campaign-checks.ts';
import { startCampaign, type StartContext } from './campaign-start.ts';
import * as repo from './campaigns-repository.ts';
import {
  DEFAULT_PACE,
  type Campaign,
  type ListCampaignsQuery,
  type NewCampaignBody,
  type PatchCampaignBody,
  type ReportRecipient,
} from './campaigns-schemas.ts';

const campaignCursor = keysetCursor(/^cmp_[0-9A-Za-z]{1,60}$/);

interface CampaignsDeps {
  db: Database;
  keyring: repo.CampaignKeyring;
  provider: Pick<ProviderAdapter, 'catalog'>;
  prices: MessagingPrices;
  events?: MessagingEvents | undefined;
  now?: () => Date;
}

export type CampaignsService = ReturnType<typeof createCampaignsService>;

/** Who asks: every query filters by its portal; changes are audited as its user or actor. */
type Caller = CampaignCaller;

const notFound = () => new AppError('not_found', 'No such campaign.');

const wrongStatus = (row: { status: string }, action: string) =>
  new AppError('conflict', `A ${row.status} campaign cannot be ${action}.`);

function toCampaign(row: repo.CampaignRow, live: Awaited<ReturnType<typeof readCounts>>): Campaign {
  return {
    id: row.id,
    name: row.name,
    from: row.fromPhoneNumberId,
    template: row.template,
    audience: row.audience,
    schedule: row.scheduleAt ? { at: row.scheduleAt.toISOString() } : null,
    pace: { perSecond: row.pacePerSecond },
    status: row.status,
    statusReason: row.statusReason,
    category: row.category,
    counts: live.counts,
    skippedBy: row.skippedBy,
    cost: { estimated: row.estimatedCostMinor, spent: live.spent, currency: row.currency },
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const fieldsOf = (b: NewCampaignBody): repo.CampaignFields => ({
  name: b.name,
  fromPhoneNumberId: b.from,
  template: b.template,
  audience: b.audience,
  scheduleAt: b.schedule ? new Date(b.schedule.at) : null,
  pacePerSecond: b.pace?.perSecond ?? DEFAULT_PACE,
});

export function createCampaignsService(deps: CampaignsDeps) {
  const { db, keyring } = deps;
  const now = deps.now ?? (() => new Date());
  const moves: MoveDeps = { db, keyring, events: deps.events };
  const ctx: StartContext = { ...moves, provider: deps.provider, prices: deps.prices, now };

  async function load(portalId: number, id: string): Promise<repo.CampaignRow> {
    const row = await repo.findCampaign(db, keyring, portalId, id);
    if (!row) throw notFound();
    return row;
  }

  const view = async (row: repo.CampaignRow) => toCampaign(row, await readCounts(db, row));

  return {
    /** @throws AppError as `checkFields` and `checkSendable`. */
    async createCampaign(principal: Caller, body: NewCampaignBody): Promise<Campaign> {
      const fields = fieldsOf(body);
      await checkFields(ctx, principal.portalId, fields);
      const row = await db.transaction(async (tx) => {
        const inserted = await repo.insertCampaign(tx, keyring, {
          id: `cmp_${randomBase62(16)}`,
          portalId: principal.portalId,
          ...fields,
        });
        await recordAuditEvent(tx, {
          portalId: principal.portalId,
          actor: actorOf(principal),
          action: 'campaign.created',
          reason: `Campaign ${inserted.id} created.`,
        });
        return inserted;
      });
      return view(row);
    },

    /** @throws AppError `not_found`. */
    getCampaign: async (principal: Pick<Caller, 'portalId'>, id: string): Promise<Campaign> =>
      view(await load(principal.portalId, id)),

    /** Newest first. @throws AppError `invalid_request` for a cursor not made here. */
    async listCampaigns(principal: Pick<Caller, 'portalId'>, query: ListCampaignsQuery) {
      const page = await repo.listCampaignPage(db, keyring, principal.portalId, {
        limit: query.limit,
        after: campaignCursor.after(query.cursor),
        status: query.status,
      });
      const items: Campaign[] = [];
      for (const row of page.rows) items.push(await view(row));
      return { items, nextCursor: campaignCursor.page(page, (r) => r).nextCursor };
    },

    /**
     * Change a campaign that has not started: the fields given replace the stored ones; a
     * scheduled campaign goes back to `draft` (start it again).
     *
     * @throws AppError `not_found`, `conflict` (it started), and as `createCampaign`.
     */
    async patchCampaign(principal: Caller, id: string, patch: PatchCampaignBody) {
      const current = await load(principal.portalId, id);
      if (current.status !== 'draft' && current.status !== 'scheduled')
        throw wrongStatus(current, 'changed');
      const fields: repo.CampaignFields = {
        name: patch.name ?? current.name,
        fromPhoneNumberId: patch.from ?? current.fromPhoneNumberId,
        template: patch.template ?? current.template,
        audience: (patch.audience as CampaignAudience | undefined) ?? current.audience,
        scheduleAt:
          patch.schedule === undefined
            ? current.scheduleAt
            : patch.schedule === null
              ? null
              : new Date(patch.schedule.at),
        pacePerSecond: patch.pace?.perSecond ?? current.pacePerSecond,
      };
      await checkFields(ctx, principal.portalId, fields);
      const row = await db.transaction(async (tx) => {
        const changed = await repo.updateUnstarted(tx, keyring, principal.portalId, id, fields);
        if (!changed) throw wrongStatus({ status: 'started' }, 'changed');
        await recordAuditEvent(tx, {
          portalId: principal.portalId,
          actor: actorOf(principal),
          action: 'campaign.changed',
          reason: `Campaign ${id} changed.`,
        });
        return changed;
      });
      return view(row);
    },

    /**
     * Start a draft: checks again, resolves the audience into the snapshot, prices it, and
     * moves it to `scheduled` (a schedule to come) or `running` (campaign-start.ts).
     *
     * @param confirmCost the estimate the caller accepted, minor units: a higher one is refused.
     * @throws AppError as `startCampaign` of campaign-start.ts.
     */
    startCampaign: async (principal: Caller, id: string, confirmCost?: number) =>
      view(await startCampaign(ctx, principal, await load(principal.portalId, id), confirmCost)),

    /** Pause a running campaign: no runner takes a batch of it after this. */
    pauseCampaign: (principal: Caller, id: string) =>
      lifecycle(moves, view, principal, id, ['running'], 'paused', 'campaign.paused', 'paused'),

    /** Resume a paused campaign: the runners take its next batch at once. */
    resumeCampaign: (principal: Caller, id: string) =>
      lifecycle(moves, view, principal, id, ['paused'], 'running', 'campaign.resumed', 'resumed', {
        nextBatchAt: now(),
      }),

    /**
     * Cancel: nothing more is handed to the provider; the campaign's messages still queued and
     * not yet attempted fail with `campaign_cancelled`, their credit released.
     */
    async cancelCampaign(principal: Caller, id: string): Promise<Campaign> {
      const row = await lifecycle(
        moves,
        view,
        principal,
        id,
        ['draft', 'scheduled', 'running', 'paused'],
        'cancelled',
        'campaign.cancelled',
        'cancelled',
        { finishedAt: now() },
      );
      await cancelQueuedMessages(db, id);
      return view(await load(principal.portalId, row.id));
    },

    /**
     * The report: the campaign, its failures by code, and a page of per-recipient outcomes.
     *
     * @throws AppError `not_found`.
     */
    async report(
      principal: Pick<Caller, 'portalId'>,
      id: string,
      page: { after?: number | undefined; limit: number },
    ): Promise<{
      campaign: Campaign;
      failedBy: { code: string; count: number }[];
      recipients: ReportRecipient[];
      nextAfter: number | null;
    }> {
      const row = await load(principal.portalId, id);
      return {
        campaign: await view(row),
        failedBy: await failuresByCode(db, row),
        ...(await reportPage(db, row, {
          after: page.after ?? 0,
          limit: page.limit,
          cancelled: row.status === 'cancelled',
        })),
      };
    },
  };
}

/** Why a cancelled campaign's message that was still queued failed. */
const CANCELLED_ERROR = {
  code: 'campaign_cancelled',
  title: 'The campaign was cancelled before the message was handed to the provider',
} as const;

/**
 * Fail the campaign's messages still queued and not yet attempted, a batch at a time, each
 * releasing its credit (a message whose send attempt began is left to its outcome).
 */
async function cancelQueuedMessages(db: Database, campaignId: string): Promise<void> {
  let after = 0;
  for (;;) {
    const result = await db.execute(sql`select r.seq, r.message_id from campaign_recipients r
      join messages m on m.id = r.message_id and m.status = 'queued'
      where r.campaign_id = ${campaignId} and r.seq > ${after} order by r.seq limit 500`);
    const rows = (result as { rows: { seq: number; message_id: string }[] }).rows;
    if (rows.length === 0) return;
    for (const r of rows)
      await failQueuedMessage(db, r.message_id, CANCELLED_ERROR, { unlessAttempted: true });
    after = Number(rows.at(-1)!.seq);
  }
}

/** A lifecycle move someone asked for. @throws AppError `not_found`, `conflict`. */
async function lifecycle(
  moves: MoveDeps,
  view: (row: repo.CampaignRow) => Promise<Campaign>,
  principal: Caller,
  id: string,
  from: Parameters<typeof move>[1]['from'],
  to: Parameters<typeof move>[1]['to'],
  type: Parameters<typeof move>[1]['type'],
  verb: string,
  set: Parameters<typeof move>[1]['set'] = {},
): Promise<Campaign> {
  const current = await repo.findCampaign(moves.db, moves.keyring, principal.portalId, id);
  if (!current) throw notFound();
  const row = await move(moves, {
    portalId: principal.portalId,
    id,
    from,
    to,
    type,
    actor: actorOf(principal),
    set,
  });
  if (!row) throw wrongStatus(current, verb);
  return view(row);
}
