/**
 * The steps through which other features' changes become webhook events, each run inside the
 * transaction of its change (given to those features at composition, in services.ts; none of
 * them imports this folder). Each builds the event's `data`: ids and the few fields a receiver
 * needs, never a token or a secret; an inbound message's content only in its own events.
 *
 * @see docs/webhooks.md "Event catalogue"
 */
import type { RevocationReason } from '../partner/revocation/revocation.ts';
import type { CAMPAIGN_EVENT_SCHEMAS } from './campaign-event-schemas.ts';
import type { EventData } from './webhook-events.ts';
import type { Tx, WebhooksService } from './webhooks-service.ts';

/** The steps, typed structurally so that no feature imports this folder. */
export function webhookEventSteps(webhooks: Pick<WebhooksService, 'emit' | 'emitMany'>) {
  return {
    connected: (tx: Tx, c: { portalId: number; connectedAt: Date }) =>
      webhooks.emit(tx, c.portalId, 'connection.connected', {
        connectedAt: c.connectedAt.toISOString(),
      }),
    /** The revocation's reason code as it is (the audit log has its words). */
    revoked: (tx: Tx, r: { portalId: number; reason: RevocationReason }) =>
      webhooks.emit(tx, r.portalId, 'connection.revoked', {
        reason: r.reason,
        revokedAt: new Date().toISOString(),
      }),
    ticketCreated: (
      tx: Tx,
      t: { portalId: number; ticketId: string; priority: string; createdAt: Date },
    ) =>
      webhooks.emit(tx, t.portalId, 'ticket.created', {
        ticketId: t.ticketId,
        priority: t.priority,
        createdAt: t.createdAt.toISOString(),
      }),
    /** For tickets' changes of status, priority or assignee. */
    ticketUpdated: (
      tx: Tx,
      u: {
        portalId: number;
        ticketId: string;
        changes: EventData['ticket.updated']['changes'];
        by: EventData['ticket.updated']['by'];
        updatedAt: Date;
      },
    ) =>
      webhooks.emit(tx, u.portalId, 'ticket.updated', {
        ticketId: u.ticketId,
        changes: u.changes,
        by: u.by,
        updatedAt: u.updatedAt.toISOString(),
      }),
    /** For support's public replies (never an internal note: those have no step). */
    ticketCommentAdded: (
      tx: Tx,
      c: {
        portalId: number;
        ticketId: string;
        commentId: string;
        authorName: string;
        body: string;
        createdAt: Date;
      },
    ) =>
      webhooks.emit(tx, c.portalId, 'ticket.comment_added', {
        ticketId: c.ticketId,
        commentId: c.commentId,
        author: { type: 'agent', name: c.authorName },
        body: c.body,
        createdAt: c.createdAt.toISOString(),
      }),
    optedOut: (
      tx: Tx,
      o: { portalId: number; contactId: string; source: string; optedOutAt: Date },
    ) =>
      webhooks.emit(tx, o.portalId, 'contact.opted_out', {
        contactId: o.contactId,
        source: o.source,
        optedOutAt: o.optedOutAt.toISOString(),
      }),
    /** For messaging's conversations: a service window closes in an hour (once per window). */
    windowClosing: (tx: Tx, portalId: number, data: EventData['conversation.window_closing']) =>
      webhooks.emit(tx, portalId, 'conversation.window_closing', data),
    /**
     * For messaging's conversations worked by a team: one change becomes up to three events
     * (`conversation.status_changed`, `.assigned`, `.labelled`), in that order.
     */
    conversationWorkChanged: (tx: Tx, portalId: number, c: ConversationWorkData) =>
      conversationWorkEvents(webhooks, tx, portalId, c),
    /** For messaging's private notes: the note's own event, the only one carrying it. */
    conversationNoteAdded: (tx: Tx, portalId: number, data: EventData['conversation.note_added']) =>
      webhooks.emit(tx, portalId, 'conversation.note_added', data),
    /** For messaging's status events (every status change; never on a duplicate). */
    messageStatus: (tx: Tx, portalId: number, data: EventData['message.status']) =>
      webhooks.emit(tx, portalId, 'message.status', data),
    /** The same for a provider webhook's batch of statuses, in the order they were applied. */
    messageStatuses: (tx: Tx, portalId: number, data: readonly EventData['message.status'][]) =>
      webhooks.emitMany(tx, portalId, 'message.status', data),
    /** For messaging's new inbound messages of a batch: the API's view, content included. */
    messageReceived: (tx: Tx, portalId: number, data: readonly EventData['message.received'][]) =>
      webhooks.emitMany(tx, portalId, 'message.received', data),
    /** For messaging's new inbound reactions of a batch (added or removed). */
    messageReaction: (tx: Tx, portalId: number, data: readonly EventData['message.reaction'][]) =>
      webhooks.emitMany(tx, portalId, 'message.reaction', data),
    /** For messaging's account signals: a number's quality rating or tier. */
    phoneNumberQualityUpdated: (
      tx: Tx,
      portalId: number,
      data: EventData['phone_number.quality_updated'],
    ) => webhooks.emit(tx, portalId, 'phone_number.quality_updated', data),
    /** For messaging's account signals: a template's category changed (or will). */
    templateCategoryChanged: (
      tx: Tx,
      portalId: number,
      data: EventData['template.category_changed'],
    ) => webhooks.emit(tx, portalId, 'template.category_changed', data),
    /** For messaging's campaigns: a lifecycle move, as its `campaign.*` event. */
    campaignChanged: (
      tx: Tx,
      portalId: number,
      change: { type: keyof typeof CAMPAIGN_EVENT_SCHEMAS } & EventData['campaign.started'],
    ) => {
      const { type, ...data } = change;
      return webhooks.emit(tx, portalId, type, data);
    },
    /** For messaging's account signals: a person stopped or resumed marketing from a number. */
    marketingPreferenceChanged: (
      tx: Tx,
      portalId: number,
      data: EventData['contact.marketing_preference_changed'],
    ) => webhooks.emit(tx, portalId, 'contact.marketing_preference_changed', data),
    /** For messaging's account-standing signals: alerts, restrictions, capabilities, names. */
    accountStanding: (
      tx: Tx,
      portalId: number,
      e: {
        type:
          | 'account.alert'
          | 'account.updated'
          | 'account.capability_updated'
          | 'phone_number.name_updated';
        data: Record<string, unknown>;
      },
    ) => webhooks.emit(tx, portalId, e.type, e.data as EventData[typeof e.type]),
    /** For messaging's template status updates and template quality signals. */
    templateStatusUpdated: (tx: Tx, portalId: number, data: EventData['template.status_updated']) =>
      webhooks.emit(tx, portalId, 'template.status_updated', data),
  };
}

/** A change of how a conversation is worked, as messaging's event gives it. */
interface ConversationWorkData {
  conversationId: string;
  contactId: string;
  phoneNumberId: string;
  status?: { from: string; to: string; snoozedUntil: string | null };
  assignee?: { from: string | null; to: string | null };
  labels?: { from: readonly string[]; to: readonly string[] };
  by: EventData['conversation.assigned']['by'];
  changedAt: string;
}

/** The tenant events of one change: status, then assignee, then labels (each when changed). */
async function conversationWorkEvents(
  webhooks: Pick<WebhooksService, 'emit'>,
  tx: Tx,
  portalId: number,
  c: ConversationWorkData,
): Promise<void> {
  const about = {
    conversationId: c.conversationId,
    contactId: c.contactId,
    phoneNumberId: c.phoneNumberId,
  };
  const when = { by: c.by, changedAt: c.changedAt };
  type Status = EventData['conversation.status_changed']['to'];
  if (c.status)
    await webhooks.emit(tx, portalId, 'conversation.status_changed', {
      ...about,
      from: c.status.from as Status,
      to: c.status.to as Status,
      snoozedUntil: c.status.snoozedUntil,
      ...when,
    });
  if (c.assignee)
    await webhooks.emit(tx, portalId, 'conversation.assigned', {
      ...about,
      from: c.assignee.from,
      to: c.assignee.to,
      ...when,
    });
  if (c.labels) {
    const { from, to } = c.labels;
    await webhooks.emit(tx, portalId, 'conversation.labelled', {
      ...about,
      labels: [...to],
      added: to.filter((l) => !from.includes(l)),
      removed: from.filter((l) => !to.includes(l)),
      ...when,
    });
  }
}
