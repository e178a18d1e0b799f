/**
 * The event catalogue of Portico's outbound webhooks: each type and the `data` it carries. A
 * payload is `{type, timestamp, data}` (Standard Webhooks' recommended shape) with ids and the
 * few fields a receiver needs to act or to fetch the rest through the API; never a token, a
 * secret, a message's text or a contact's personal data. The one text carried is a support
 * agent's reply to the portal's own ticket (`ticket.comment_added`), as the API returns it.
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#payload-structure
 * @see docs/webhooks.md "Event catalogue"
 */
import { REVOCATION_REASONS, type RevocationReason } from '../partner/partner-service.ts';

/**
 * Why a connection ended: the revocation's reason code, as partner/ sets it on every path
 * (`disconnect`, `deauthorize`, `data_deletion`, `partner_removed`, `dead_token`,
 * `token_expired`); the audit log keeps the plain words.
 */
export type ConnectionRevokedReason = RevocationReason;

/** Every value of `connection.revoked`'s `reason`. */
export const CONNECTION_REVOKED_REASONS: readonly ConnectionRevokedReason[] = REVOCATION_REASONS;

/** The `data` of each event type. Times are ISO 8601 UTC; money is integer minor units. */
export interface EventData {
  'connection.connected': { connectedAt: string };
  'connection.revoked': { reason: ConnectionRevokedReason; revokedAt: string };
  'message.status': {
    messageId: string;
    providerMessageId: string | null;
    status: 'sent' | 'delivered' | 'read' | 'failed';
    occurredAt: string;
    error?: { code: number | string; title: string };
  };
  'message.received': {
    providerMessageId: string;
    contactId: string | null;
    phoneNumberId: string;
    type: string;
    receivedAt: string;
  };
  'template.status_updated': {
    templateId: string;
    name: string;
    language: string;
    status: string;
    wabaId: string;
    reason?: string;
  };
  'contact.opted_out': { contactId: string; source: string; optedOutAt: string };
  'credit.low': { available: number; threshold: number; currency: string };
  'ticket.created': { ticketId: string; priority: string; createdAt: string };
  'ticket.updated': {
    ticketId: string;
    /** Only the fields that changed; `assignee` is a display name or null. */
    changes: {
      status?: { from: string; to: string };
      priority?: { from: string; to: string };
      assignee?: { from: string | null; to: string | null };
    };
    /** `customer`, `agent`, or `system` (a solved ticket closing after 7 days). */
    by: 'customer' | 'agent' | 'system';
    updatedAt: string;
  };
  'ticket.comment_added': {
    ticketId: string;
    commentId: string;
    author: { type: 'agent'; name: string };
    /** The comment's text as `GET /support/tickets/{id}/comments` returns it (redacted). */
    body: string;
    createdAt: string;
  };
}

/** Every type an endpoint can subscribe to. */
export type EventType = keyof EventData;

export const EVENT_TYPES = [
  'connection.connected',
  'connection.revoked',
  'message.status',
  'message.received',
  'template.status_updated',
  'contact.opted_out',
  'credit.low',
  'ticket.created',
  'ticket.updated',
  'ticket.comment_added',
] as const satisfies readonly EventType[];

/** Sent only by *Send test event*, to the one endpoint tested, whatever it subscribes to. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The body of one webhook: exactly what is signed and sent. */
export interface WebhookPayload<T extends string = string> {
  type: T;
  /** ISO 8601 UTC: when the change happened. */
  timestamp: string;
  data: Record<string, unknown>;
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}
