/**
 * The campaign runner: on every instance, a loop that hands running campaigns' recipients to
 * the send path (the one `POST /messaging/messages` uses) at each campaign's pace.
 *
 * Guarantees, each held by the database rather than an instance's memory:
 * - **Pace across instances.** A batch is a campaign's pacing slot (`next_batch_at`), claimed
 *   with `FOR UPDATE SKIP LOCKED` and moved one second on: each second of a campaign is one
 *   batch of `pace` recipients, whichever instance takes it.
 * - **Pause and cancel at once.** Only a `running` campaign's slot is claimed, so no instance
 *   starts a batch of a campaign after it paused or was cancelled (a batch already claimed,
 *   at most one second of sends, finishes).
 * - **Nothing lost, nothing twice.** Recipients are claimed (`pending` → `sending`, SKIP
 *   LOCKED), each sent with the idempotency key `campaign:<id>:<seq>`, then marked `queued`
 *   with the message id. An instance killed between the two leaves the recipient `sending`;
 *   after `RECLAIM_S` another instance claims it again and its send replays the first
 *   response (the same message) instead of queueing a second one.
 *
 * A refusal of one recipient (opted out since, marketing stopped, …) is recorded with its code;
 * a refusal that would refuse every recipient (credit, the messaging limit, the number or the
 * template no longer usable, the connection gone) puts the recipient back and pauses the
 * campaign with that reason.
 *
 * @see docs/decisions/0063-campaigns.md
 */
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { findIdempotencyKey } from '../../idempotency/idempotency-repository.ts';
import { AppError } from '../../platform/errors.ts';
import type { Logger } from '../../platform/logger.ts';
import { contactValues } from '../drafts/drafts-repository.ts';
import { resolveParameters } from '../drafts/draft-personalisation.ts';
import type { MessagingEvents } from '../events/messaging-events.ts';
import type { SendMessageBody } from '../store/send-kinds-schemas.ts';
import { move, RUNNER_ACTOR, type MoveDeps } from './campaign-lifecycle.ts';
import { findCampaign, type CampaignKeyring, type CampaignRow } from './campaigns-repository.ts';

/**
 * The send path's template send for one recipient.
 *
 * @returns the queued message's id (the first one's, for a replayed key).
 * @throws AppError as `POST /messaging/messages`.
 */
export type CampaignSend = (
  portalId: number,
  input: SendMessageBody,
  idempotencyKey: string,
) => Promise<string>;

/** A `sending` recipient older than this is claimed again (its instance died), in seconds. */
export const RECLAIM_S = 60;
/** How often an idle runner looks for work, in ms. */
const IDLE_MS = 250;
/** Sends of one batch in flight at once. */
const CONCURRENCY = 16;

/** Refusals that would refuse every recipient alike: the campaign pauses with the code. */
const PAUSING = new Set([
  'insufficient_credit',
  'messaging_limit_reached',
  'not_connected',
  'number_not_ready',
  'template_not_approved',
]);
/** Failures that may pass: the recipient goes back to `pending`, the batch stops. */
const TRANSIENT = new Set(['provider_error', 'provider_timeout', 'unavailable', 'rate_limited']);

interface RunnerDeps {
  db: Database;
  keyring: CampaignKeyring;
  send: CampaignSend;
  logger: Logger;
  events?: MessagingEvents | undefined;
}

type Outcome =
  | { seq: number; state: 'queued'; messageId: string }
  | { seq: number; state: 'refused'; code: string }
  | { seq: number; state: 'pending'; pause?: string; halt?: boolean };

const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows;

/** Scheduled campaigns whose time came start. */
async function promoteDue(db: Database, moves: MoveDeps): Promise<void> {
  const due = rowsOf<{ id: string; portal_id: number }>(
    await db.execute(sql`select id, portal_id from campaigns
      where status = 'scheduled' and schedule_at <= now() order by schedule_at limit 20`),
  );
  for (const c of due)
    await move(moves, {
      portalId: c.portal_id,
      id: c.id,
      from: ['scheduled'],
      to: 'running',
      type: 'campaign.started',
      actor: RUNNER_ACTOR,
      set: { startedAt: new Date(), nextBatchAt: new Date() },
    });
}

/** A running campaign's due slot, moved one second on; null when none is due. */
async function claimSlot(
  db: Database,
): Promise<{ id: string; portalId: number; pace: number } | null> {
  const [row] = rowsOf<{ id: string; portal_id: number; pace_per_second: number }>(
    await db.execute(sql`update campaigns c
      set next_batch_at = greatest(coalesce(c.next_batch_at, now()), now() - interval '1 second')
        + interval '1 second'
      where c.id = (select id from campaigns
        where status = 'running' and (next_batch_at is null or next_batch_at <= now())
        order by next_batch_at nulls first limit 1 for update skip locked)
      returning c.id, c.portal_id, c.pace_per_second`),
  );
  return row ? { id: row.id, portalId: row.portal_id, pace: row.pace_per_second } : null;
}

/** Up to `n` recipients claimed: a dead instance's stale ones first, then pending ones. */
async function claimRecipients(db: Database, campaignId: string, n: number) {
  const claim = (which: ReturnType<typeof sql>, limit: number) =>
    db.execute(sql`update campaign_recipients r set state = 'sending', claimed_at = now()
      where (r.campaign_id, r.seq) in (select campaign_id, seq from campaign_recipients
        where campaign_id = ${campaignId} and ${which}
        order by seq limit ${limit} for update skip locked)
      returning r.seq, r.contact_id`);
  const stale = rowsOf<{ seq: number; contact_id: string | null }>(
    await claim(
      sql`state = 'sending' and claimed_at < now() - make_interval(secs => ${RECLAIM_S})`,
      n,
    ),
  );
  const fresh =
    stale.length < n
      ? rowsOf<{ seq: number; contact_id: string | null }>(
          await claim(sql`state = 'pending'`, n - stale.length),
        )
      : [];
  return [...stale, ...fresh].map((r) => ({ seq: Number(r.seq), contactId: r.contact_id }));
}

/** One recipient through the send path. */
async function sendOne(
  deps: RunnerDeps,
  campaign: CampaignRow,
  r: { seq: number; contactId: string | null },
  contact: Parameters<typeof resolveParameters>[1] | undefined,
): Promise<Outcome> {
  if (r.contactId === null || contact === undefined)
    return { seq: r.seq, state: 'refused', code: 'recipient_erased' };
  const resolved = resolveParameters(campaign.template.parameters ?? [], contact);
  if ('reason' in resolved)
    return { seq: r.seq, state: 'refused', code: 'invalid_template_parameters' };
  const { components } = campaign.template;
  const input = {
    type: 'template',
    contactId: r.contactId,
    from: campaign.fromPhoneNumberId,
    template: {
      name: campaign.template.name,
      language: campaign.template.language,
      ...(resolved.parameters.length > 0 && { parameters: resolved.parameters }),
      ...(components && { components }),
    },
  } as SendMessageBody;
  const key = `campaign:${campaign.id}:${r.seq}`;
  try {
    return {
      seq: r.seq,
      state: 'queued',
      messageId: await deps.send(campaign.portalId, input, key),
    };
  } catch (err) {
    if (!(err instanceof AppError)) {
      // Storage or a bug: the recipient is taken again in a later batch (the same key).
      deps.logger.error({ err, campaignId: campaign.id }, 'campaign runner: a send failed');
      return { seq: r.seq, state: 'pending', halt: true };
    }
    if (err.code === 'idempotency_conflict') {
      // Sent before an instance died, and the contact changed since: the first message stands.
      const first = await findIdempotencyKey(deps.db, campaign.portalId, key);
      const id = (first?.responseBody as { data?: { id?: string } } | null)?.data?.id;
      if (id) return { seq: r.seq, state: 'queued', messageId: id };
    }
    if (PAUSING.has(err.code)) return { seq: r.seq, state: 'pending', pause: err.code };
    if (TRANSIENT.has(err.code)) return { seq: r.seq, state: 'pending', halt: true };
    return { seq: r.seq, state: 'refused', code: err.code };
  }
}

/** The outcomes written in one statement. */
async function record(
  db: Database,
  campaignId: string,
  outcomes: readonly Outcome[],
): Promise<void> {
  if (outcomes.length === 0) return;
  const values = outcomes.map((o) => ({
    seq: o.seq,
    state: o.state,
    message_id: o.state === 'queued' ? o.messageId : null,
    error_code: o.state === 'refused' ? o.code : null,
  }));
  await db.execute(sql`update campaign_recipients r
    set state = v.state, message_id = v.message_id, error_code = v.error_code,
      claimed_at = case when v.state = 'pending' then null else r.claimed_at end
    from jsonb_to_recordset(${JSON.stringify(values)}::jsonb)
      as v(seq int, state text, message_id text, error_code text)
    where r.campaign_id = ${campaignId} and r.seq = v.seq`);
}

/** A campaign with nobody left to claim completes (none `pending` nor `sending`). */
async function completeIfDone(
  db: Database,
  moves: MoveDeps,
  c: { id: string; portalId: number },
): Promise<void> {
  const [left] = rowsOf<{ left: boolean }>(
    await db.execute(sql`select exists (select 1 from campaign_recipients
      where campaign_id = ${c.id} and state in ('pending', 'sending')) as left`),
  );
  if (left?.left) return;
  await move(moves, {
    portalId: c.portalId,
    id: c.id,
    from: ['running'],
    to: 'completed',
    type: 'campaign.completed',
    actor: RUNNER_ACTOR,
    set: { finishedAt: new Date() },
  });
}

export function createCampaignRunner(deps: RunnerDeps) {
  const { db, logger } = deps;
  const moves: MoveDeps = { db, keyring: deps.keyring, events: deps.events };
  let stopping = false;
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;
  /**
   * One batch: promote due schedules, claim one campaign's slot and its recipients, send them.
   *
   * @returns recipients handed to the send path (0: nothing was due).
   */
  async function runOnce(): Promise<number> {
    await promoteDue(db, moves);
    const slot = await claimSlot(db);
    if (!slot) return 0;
    const campaign = await findCampaign(db, deps.keyring, slot.portalId, slot.id);
    if (!campaign) return 0;
    const claimed = await claimRecipients(db, slot.id, slot.pace);
    if (claimed.length === 0) {
      await completeIfDone(db, moves, slot);
      return 0;
    }
    const ids = claimed.flatMap((r) => (r.contactId === null ? [] : [r.contactId]));
    const contacts = new Map(
      (await contactValues(db, slot.portalId, ids, [])).map((c) => [c.id, c]),
    );
    const outcomes: Outcome[] = [];
    let pause: string | null = null;
    let halted = false;
    let next = 0;
    // `sendOne` never throws: each claimed recipient gets exactly one outcome.
    async function worker(): Promise<void> {
      while (next < claimed.length) {
        const r = claimed[next++]!;
        if (pause !== null || halted) {
          outcomes.push({ seq: r.seq, state: 'pending' });
          continue;
        }
        const o = await sendOne(
          deps,
          campaign!,
          r,
          r.contactId ? contacts.get(r.contactId) : undefined,
        );
        if (o.state === 'pending' && o.pause) pause = o.pause;
        if (o.state === 'pending' && o.halt) halted = true;
        outcomes.push(o);
      }
    }
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, claimed.length) }, worker));
    await record(db, slot.id, outcomes);
    if (pause !== null)
      await move(moves, {
        portalId: slot.portalId,
        id: slot.id,
        from: ['running'],
        to: 'paused',
        type: 'campaign.paused',
        actor: RUNNER_ACTOR,
        reason: pause,
      });
    return outcomes.filter((o) => o.state === 'queued').length;
  }

  async function run(): Promise<void> {
    while (!stopping) {
      let handed = 0;
      try {
        handed = await runOnce();
      } catch (err) {
        // The error's name only: a message could carry a person's data.
        logger.error(
          { error: err instanceof Error ? err.name : typeof err },
          'campaign runner: a batch failed; it is taken again',
        );
      }
      if (handed === 0 && !stopping)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      wake = null;
    }
  }

  return {
    runOnce,
    /** Start this instance's loop (idempotent). */
    start(): void {
      if (loop) return;
      stopping = false;
      loop = run();
    },
    /** Stop the loop; resolves once the batch in hand is recorded. */
    async stop(): Promise<void> {
      stopping = true;
      wake?.();
      await loop;
      loop = null;
    },
  };
}

export type CampaignRunner = ReturnType<typeof createCampaignRunner>;
