/**
 * Messaging's domain events: one typed emitter (emittery) that the inbound ingestion, the
 * provider's webhook events, the send path and the conversations' sweep emit on, and that other
 * modules subscribe to at composition (services.ts): the webhooks turn them into tenant events,
 * the consent module reads opt-out and opt-in keywords from `inbound.text`. No producer knows
 * its subscribers, and no subscriber is called through a closure of the messaging service.
 *
 * Every event here is emitted inside the transaction that records its change and carries it
 * (`tx`): it is emitted with `emitSerial`, so each listener runs in turn, awaited, in that
 * transaction, and a listener that throws undoes the change with it (exactly as a step would).
 * Work that must wait for the commit (a keyword's confirmation reply) is handed back through
 * `afterCommit`.
 *
 * @see https://github.com/sindresorhus/emittery#emitserialeventname-data
 * @see docs/architecture.md "messaging/"
 * @see docs/decisions/0052-messaging-inner-walls.md
 */
import Emittery from 'emittery';
import type { Transaction as Tx } from '../../db/client.ts';
import type { TemplateStatusEvent } from '../../partner/cloud-api/provider-webhook-events.ts';
import type { InboundMessage } from '../store/inbound-schemas.ts';

/** The transaction of the change an event reports, and the portal it belongs to. */
interface InTx {
  tx: Tx;
  portalId: number;
}

/** A message's status change, as the `message.status` event tells it. */
export interface StatusChangedEvent {
  messageId: string;
  providerMessageId: string | null;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  occurredAt: string;
  /** The provider's integer code, or Portico's own reason (`delivery_unknown`). */
  error?: { code: number | string; title: string };
}

/** A new inbound text, as `inbound.text` gives it (inside the batch's transaction). */
interface InboundText {
  portalId: number;
  contactId: string;
  /** Our message (`msg_…`). */
  messageId: string;
  body: string;
  phoneNumberId: string;
  receivedAt: Date;
}

/** The tenant event of an account-standing signal: its type and `data`. */
type StandingEventData =
  | { type: 'phone_number.name_updated'; data: Record<string, unknown> & { wabaId: string } }
  | {
      type: 'account.alert' | 'account.updated' | 'account.capability_updated';
      data: Record<string, unknown> & { wabaId: string };
    };

/** A change of one value, before and after. */
interface Change<T> {
  from: T;
  to: T;
}

/**
 * Who changed a conversation: a member of the portal (`usr_<id>`, through the inbox or an API
 * key they own), or Portico itself (a new inbound message reopening it, a snooze ending).
 */
export type ConversationActor = { type: 'user'; id: string } | { type: 'system' };

/** How the team works a conversation, as one change tells it (only what changed is present). */
export interface ConversationWorkChange {
  conversationId: string;
  contactId: string;
  phoneNumberId: string;
  /** The status (`open`, `pending`, `resolved`, `snoozed`), with the snooze's end after it. */
  status?: Change<string> & { snoozedUntil: string | null };
  /** The assignee (`usr_<id>`, null: nobody). */
  assignee?: Change<string | null>;
  /** The labels, sorted. */
  labels?: Change<readonly string[]>;
  by: ConversationActor;
  /** ISO 8601 UTC. */
  changedAt: string;
}

/** A member's private note, as `conversation.note_added` tells it (the tenant's own event). */
export interface ConversationNoteAdded {
  conversationId: string;
  contactId: string;
  noteId: string;
  /** The author (`usr_<id>`). */
  authorId: string;
  body: string;
  /** ISO 8601 UTC. */
  createdAt: string;
}

/** Each event's name and payload. */
interface MessagingEventMap {
  /** A status changed one message (never a duplicate): a send's failure, a provider status. */
  'message.status_changed': InTx & { change: StatusChangedEvent };
  /** A webhook's batch of statuses: the changes in the order they were applied. */
  'message.statuses_changed': InTx & { changes: readonly StatusChangedEvent[] };
  /** New inbound messages but reactions, in the webhook's order, with their API view. */
  'inbound.received': InTx & { messages: readonly InboundMessage[] };
  /** New reactions (or their removal, `emoji` empty). */
  'inbound.reacted': InTx & { messages: readonly InboundMessage[] };
  /**
   * A new inbound text (never a replay): where opt-out and opt-in keywords are read. A listener
   * may leave work for after the commit with `afterCommit`; that work must not throw.
   */
  'inbound.text': {
    tx: Tx;
    text: InboundText;
    afterCommit: (work: () => Promise<void>) => void;
  };
  /** A template's new status at the provider. */
  'template.status_updated': InTx & { event: TemplateStatusEvent };
  /**
   * A send reserved credit that may have taken the available credit (balance − reserved) below
   * the portal's `credit.low` threshold: from `availableBefore` to `availableAfter`, minor units
   * of `currency`, exactly (the sends that can cross the threshold run one at a time).
   */
  'credit.reserved': InTx & { availableBefore: number; availableAfter: number; currency: string };
  /** A service window closes within the hour (once per window; the conversations' sweep). */
  'conversation.window_closing': InTx & {
    conversationId: string;
    contactId: string;
    phoneNumberId: string;
    expiresAt: string;
  };
  'phone_number.quality_updated': InTx & {
    phoneNumberId: string | null;
    displayPhoneNumber: string;
    wabaId: string;
    event: string;
    messagingLimitTier: string | null;
    previousMessagingLimitTier?: string;
  };
  'template.quality_updated': InTx & {
    templateId: string;
    name: string;
    language: string;
    wabaId: string;
    qualityScore: { from: string; to: string };
  };
  'template.category_changed': InTx & {
    templateId: string;
    name: string;
    language: string;
    wabaId: string;
    previousCategory: string | null;
    category: string;
    effectiveAt: string;
    impending: boolean;
  };
  'contact.marketing_preference_changed': InTx & {
    contactId: string;
    phoneNumberId: string;
    preference: 'stopped' | 'resumed';
    changedAt: string;
  };
  /**
   * A conversation's status, assignee or labels changed (a member, or Portico: a new inbound
   * message reopened it, a snooze ended).
   */
  'conversation.work_changed': InTx & { change: ConversationWorkChange };
  /** A member added a private note (never sent to the person). */
  'conversation.note_added': InTx & { note: ConversationNoteAdded };
  /** `account.alert`, `account.updated`, `account.capability_updated`, `phone_number.name_updated`. */
  'account.standing': InTx & { standing: StandingEventData };
  /** A campaign moved along its lifecycle (campaigns/campaigns-service.ts, campaign-runner.ts). */
  'campaign.changed': InTx & { change: CampaignChange };
}

/** A campaign's lifecycle move, as its `campaign.*` tenant event tells it. */
export interface CampaignChange {
  type:
    | 'campaign.scheduled'
    | 'campaign.started'
    | 'campaign.paused'
    | 'campaign.resumed'
    | 'campaign.completed'
    | 'campaign.cancelled';
  campaignId: string;
  status: string;
  /** Why it paused by itself (`insufficient_credit`, …); null for a move someone asked for. */
  reason: string | null;
  occurredAt: string;
}

/** The emitter of messaging's events (emit with `emitSerial`: listeners write in `tx`). */
export type MessagingEvents = Emittery<MessagingEventMap>;

/**
 * A new emitter with no listener; services.ts makes the one of a process. Emittery's debug
 * output (`DEBUG=emittery` or `DEBUG=*`) would print each payload, message bodies included: its
 * logger here prints nothing.
 */
export function createMessagingEvents(): MessagingEvents {
  return new Emittery<MessagingEventMap>({
    debug: { name: 'messaging', enabled: false, logger: () => undefined },
  });
}
