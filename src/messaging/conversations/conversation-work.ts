/**
 * How a team works a conversation: its status (open, pending, resolved, snoozed until a time),
 * its assignee (a member of the portal) and its labels; each member's read mark; and the sweep
 * step that ends snoozes at their time. Every change runs in one transaction that locks the
 * conversation, writes it, announces it (`conversation.work_changed` on messaging's emitter: the
 * tenant's webhooks) and tells the open inboxes of every instance (`notifyConversationChanges`);
 * a reassignment is audited (ids only).
 *
 * Invariants: every statement filters by portal id (the sweep's claim excepted, which only
 * moves snoozes past their end); an assignee is a user of the same portal; a change that changes
 * nothing writes nothing and announces nothing.
 *
 * @see docs/messaging.md "Working a conversation"
 * @see docs/decisions/0064-conversations-worked-by-a-team.md
 */
import { and, eq, lte, sql } from 'drizzle-orm';
import { isActiveUserOfPortal } from '../../accounts/accounts-repository.ts';
import { memberId, memberIdOrNull, parseMemberId } from '../../accounts/member-id.ts';
import { recordAuditEvent } from '../../audit/audit-log.ts';
import type { Database, Transaction } from '../../db/client.ts';
import {
  conversationReads,
  conversations,
  type ConversationStatus,
} from '../../db/schema/conversations.ts';
import { AppError } from '../../platform/errors.ts';
import type {
  ConversationActor,
  ConversationWorkChange,
  MessagingEvents,
} from '../events/messaging-events.ts';
import { notifyConversationChanges } from '../store/conversation-changes.ts';
import type { ConversationUpdate } from './conversations-schemas.ts';

/** The longest snooze: a year (ms). */
export const SNOOZE_MAX_MS = 366 * 24 * 3600_000;

/** Who asks for a change: a member of a portal (`users.id`). */
export interface MemberPrincipal {
  portalId: number;
  userId: number;
}

interface WorkState {
  id: string;
  contactId: string;
  phoneNumberId: string;
  status: ConversationStatus;
  snoozedUntil: Date | null;
  assigneeId: number | null;
  labels: string[];
}

const invalid = (field: string, message: string) =>
  new AppError('invalid_request', `${field} ${message}.`, {
    details: [{ field: `body.${field}`, message }],
  });

/** The labels as stored: trimmed, distinct, sorted (code-point order). */
export function normaliseLabels(labels: readonly string[]): string[] {
  return [...new Set(labels.map((l) => l.trim()).filter((l) => l !== ''))].sort();
}

/**
 * The state after `update` from `current`, checked (the snooze's end, the assignee's shape).
 *
 * @throws AppError `invalid_request`: `snoozed` without a future `snoozedUntil` (at most
 *   {@link SNOOZE_MAX_MS} ahead), `snoozedUntil` with another status, an assignee that is not a
 *   `usr_…` id.
 */
function nextState(current: WorkState, update: ConversationUpdate, now: Date): WorkState {
  const status = update.status ?? (update.snoozedUntil !== undefined ? 'snoozed' : current.status);
  let snoozedUntil: Date | null = null;
  if (status === 'snoozed') {
    if (update.snoozedUntil === undefined) {
      if (current.status !== 'snoozed' || update.status === 'snoozed')
        throw invalid('snoozedUntil', 'is required with status snoozed');
      snoozedUntil = current.snoozedUntil;
    } else {
      snoozedUntil = new Date(update.snoozedUntil);
      const ms = snoozedUntil.getTime() - now.getTime();
      if (!(ms > 0)) throw invalid('snoozedUntil', 'must be in the future');
      if (ms > SNOOZE_MAX_MS) throw invalid('snoozedUntil', 'must be within a year');
    }
  } else if (update.snoozedUntil !== undefined) {
    throw invalid('snoozedUntil', 'is only allowed with status snoozed');
  }
  let assigneeId = current.assigneeId;
  if (update.assigneeId !== undefined) {
    assigneeId = update.assigneeId === null ? null : parseMemberId(update.assigneeId);
    if (assigneeId === null && update.assigneeId !== null)
      throw invalid('assigneeId', 'is not a member id');
  }
  const labels = update.labels === undefined ? current.labels : normaliseLabels(update.labels);
  return { ...current, status, snoozedUntil, assigneeId, labels };
}

/** What changed between two states, as the event tells it (null: nothing). */
function changeOf(
  before: WorkState,
  after: WorkState,
  by: ConversationActor,
  at: Date,
): ConversationWorkChange | null {
  const change: ConversationWorkChange = {
    conversationId: before.id,
    contactId: before.contactId,
    phoneNumberId: before.phoneNumberId,
    by,
    changedAt: at.toISOString(),
  };
  let changed = false;
  if (
    before.status !== after.status ||
    before.snoozedUntil?.getTime() !== after.snoozedUntil?.getTime()
  ) {
    change.status = {
      from: before.status,
      to: after.status,
      snoozedUntil: after.snoozedUntil?.toISOString() ?? null,
    };
    changed = true;
  }
  if (before.assigneeId !== after.assigneeId) {
    change.assignee = {
      from: memberIdOrNull(before.assigneeId),
      to: memberIdOrNull(after.assigneeId),
    };
    changed = true;
  }
  if (before.labels.join('\u0000') !== after.labels.join('\u0000')) {
    change.labels = { from: before.labels, to: after.labels };
    changed = true;
  }
  return changed ? change : null;
}

const workColumns = {
  id: conversations.id,
  contactId: conversations.contactId,
  phoneNumberId: conversations.phoneNumberId,
  status: conversations.status,
  snoozedUntil: conversations.snoozedUntil,
  assigneeId: conversations.assigneeId,
  labels: conversations.labels,
};

/** The conversation's work state, locked for the transaction; null when not the portal's. */
async function lockWork(tx: Transaction, portalId: number, id: string): Promise<WorkState | null> {
  const [row] = await tx
    .select(workColumns)
    .from(conversations)
    .where(and(eq(conversations.portalId, portalId), eq(conversations.id, id)))
    .for('update');
  return row ?? null;
}

/** Announce a change in its transaction: the emitter (webhooks) and the open inboxes. */
async function announce(
  tx: Transaction,
  events: MessagingEvents | undefined,
  portalId: number,
  change: ConversationWorkChange,
): Promise<void> {
  await events?.emitSerial('conversation.work_changed', { tx, portalId, change });
  await notifyConversationChanges(tx, [{ portalId, conversationId: change.conversationId }]);
}

interface WorkDeps {
  db: Database;
  events?: MessagingEvents | undefined;
  now: () => Date;
}

/** The write side of working conversations; see the module comment. */
export function createConversationWork(deps: WorkDeps) {
  const { db } = deps;
  return {
    /**
     * Change a conversation's status, snooze, assignee or labels, as member `principal.userId`.
     *
     * @returns whether anything changed.
     * @throws AppError `not_found` (unknown id, another portal's), `invalid_request` (see
     *   {@link nextState}; an assignee who is not a member of the portal).
     */
    async update(
      principal: MemberPrincipal,
      id: string,
      update: ConversationUpdate,
      requestId?: string,
    ): Promise<boolean> {
      const at = deps.now();
      return db.transaction(async (tx) => {
        const before = await lockWork(tx, principal.portalId, id);
        if (!before) throw new AppError('not_found', 'No conversation with this id.');
        const after = nextState(before, update, at);
        if (
          after.assigneeId !== null &&
          after.assigneeId !== before.assigneeId &&
          !(await isActiveUserOfPortal(tx, after.assigneeId, principal.portalId))
        )
          throw invalid('assigneeId', 'is not an active member of this portal');
        const by: ConversationActor = { type: 'user', id: memberId(principal.userId) };
        const change = changeOf(before, after, by, at);
        if (!change) return false;
        await tx
          .update(conversations)
          .set({
            status: after.status,
            snoozedUntil: after.snoozedUntil,
            assigneeId: after.assigneeId,
            labels: after.labels,
          })
          .where(and(eq(conversations.portalId, principal.portalId), eq(conversations.id, id)));
        if (change.assignee)
          await recordAuditEvent(tx, {
            portalId: principal.portalId,
            actor: { type: 'user', id: String(principal.userId) },
            action: 'conversation.assigned',
            reason: `${id}: ${change.assignee.from ?? 'nobody'} → ${change.assignee.to ?? 'nobody'}`,
            requestId: requestId ?? null,
          });
        await announce(tx, deps.events, principal.portalId, change);
        return true;
      });
    },

    /**
     * Record that member `principal.userId` read the conversation up to now: its inbound
     * messages stored until now no longer count unread for them (the provider's read receipt
     * is another matter: read-receipts.ts).
     *
     * @returns false when the conversation is not the portal's.
     */
    async markReadBy(principal: MemberPrincipal, id: string): Promise<boolean> {
      const at = deps.now();
      return db.transaction(async (tx) => {
        const [row] = await tx
          .select({ id: conversations.id })
          .from(conversations)
          .where(and(eq(conversations.portalId, principal.portalId), eq(conversations.id, id)));
        if (!row) return false;
        await tx
          .insert(conversationReads)
          .values({
            portalId: principal.portalId,
            conversationId: id,
            userId: principal.userId,
            readAt: at,
          })
          .onConflictDoUpdate({
            target: [conversationReads.conversationId, conversationReads.userId],
            set: { readAt: sql`greatest(${conversationReads.readAt}, excluded.read_at)` },
          });
        // The member's other open inboxes show the badge cleared.
        await notifyConversationChanges(tx, [{ portalId: principal.portalId, conversationId: id }]);
        return true;
      });
    },

    /**
     * The sweep's step: every snooze (of every portal) whose end is past becomes `open`, in one
     * claiming statement, each announced as Portico's change.
     *
     * @returns how many snoozes ended.
     */
    async endSnoozes(): Promise<number> {
      const at = deps.now();
      return db.transaction(async (tx) => {
        const woken = await tx
          .update(conversations)
          .set({ status: 'open', snoozedUntil: null })
          .where(and(eq(conversations.status, 'snoozed'), lte(conversations.snoozedUntil, at)))
          .returning({
            portalId: conversations.portalId,
            id: conversations.id,
            contactId: conversations.contactId,
            phoneNumberId: conversations.phoneNumberId,
          });
        for (const w of woken)
          await announce(tx, deps.events, w.portalId, {
            conversationId: w.id,
            contactId: w.contactId,
            phoneNumberId: w.phoneNumberId,
            status: { from: 'snoozed', to: 'open', snoozedUntil: null },
            by: { type: 'system' },
            changedAt: at.toISOString(),
          });
        return woken.length;
      });
    },
  };
}

export type ConversationWork = ReturnType<typeof createConversationWork>;
