/**
 * The event catalogue of Portico's outbound webhooks: each type and the `data` it carries. A
 * payload is `{type, timestamp, data}` (Standard Webhooks' recommended shape) with ids and the
 * few fields a receiver needs to act or to fetch the rest through the API; never a token or a
 * secret. Content is carried only where the API returns it to the same portal: an inbound
 * message (`message.received`, `message.reaction`: the tenant's own conversations), a member's
 * private note (`conversation.note_added`, its only event) and a support agent's reply to the
 * portal's own ticket (`ticket.comment_added`).
 *
 * @see https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md#payload-structure
 * @see docs/reference/webhook-events.md
 */
import { Type, type Static } from 'typebox';
import { InboundMessageSchema } from '../messaging/store/inbound-schemas.ts';
import { REVOCATION_REASONS, type RevocationReason } from '../partner/revocation/revocation.ts';

/**
 * Why a connection ended: the revocation's reason code, as partner/ sets it on every path
 * (`disconnect`, `deauthorize`, `data_deletion`, `partner_removed`, `dead_token`,
 * `token_expired`); the audit log keeps the plain words.
 */
export type ConnectionRevokedReason = RevocationReason;

/** Every value of `connection.revoked`'s `reason`. */
export const CONNECTION_REVOKED_REASONS: readonly ConnectionRevokedReason[] = REVOCATION_REASONS;

import { ACCOUNT_EVENT_SCHEMAS, Change, Iso, Nullable } from './account-event-schemas.ts';
import { CONVERSATION_EVENT_SCHEMAS } from './conversation-event-schemas.ts';
import { CAMPAIGN_EVENT_SCHEMAS } from './campaign-event-schemas.ts';

/**
 * The `data` of each event type, as schemas: the one definition of the catalogue, from which the
 * TypeScript types below and the reference (docs/reference/webhook-events.md, generated) come.
 * Each schema's `description` says when the event is sent and `examples` holds one `data`.
 * Times are ISO 8601 UTC; money is integer minor units.
 */
export const EVENT_SCHEMAS = {
  'connection.connected': Type.Object(
    { connectedAt: Iso('When the connection was stored.') },
    {
      description: "The portal's main administrator connected the provider account.",
      examples: [{ connectedAt: '2026-11-23T18:00:00.000Z' }],
    },
  ),
  'connection.revoked': Type.Object(
    {
      reason: Type.Enum(REVOCATION_REASONS, {
        description:
          'Why: `disconnect` (Disconnect on /settings), `deauthorize` (the person removed the app ' +
          'at the provider), `data_deletion` (the person asked the provider to delete their data), ' +
          '`partner_removed` (the business removed Portico from its WABA), `dead_token` (the ' +
          'provider reported the token invalid), `token_expired` (it expired and could not be ' +
          'refreshed).',
      }),
      revokedAt: Iso('When the connection ended.'),
    },
    {
      description:
        'The connection ended, on any path; nothing is sent for the portal until it connects again.',
      examples: [{ reason: 'disconnect', revokedAt: '2026-11-23T18:00:00.000Z' }],
    },
  ),
  'message.status': Type.Object(
    {
      messageId: Type.String({ description: 'The message (`msg_…`).' }),
      providerMessageId: Nullable(Type.String(), "The provider's id (wamid), once it has one."),
      status: Type.Enum(['sent', 'delivered', 'read', 'failed'] as const, {
        description: 'The new status; a status never goes backwards.',
      }),
      occurredAt: Iso('When the provider reports it happened.'),
      error: Type.Optional(
        Type.Object(
          {
            code: Type.Union([Type.Integer(), Type.String()], {
              description:
                "As the API's `error.code`: the provider's integer code (e.g. `131026`), or " +
                "Portico's own reason as a string (e.g. `delivery_unknown`).",
            }),
            title: Type.String({ description: 'What it means, in words.' }),
          },
          { description: 'Why it failed (`failed` only).' },
        ),
      ),
    },
    {
      description: 'An outbound message moved to a new status.',
      examples: [
        {
          messageId: 'msg_3kTq9',
          providerMessageId: 'wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI',
          status: 'delivered',
          occurredAt: '2026-11-23T18:00:02.000Z',
        },
      ],
    },
  ),
  'message.received': Type.Object(InboundMessageSchema.properties, {
    description:
      'A person wrote to one of the business numbers: the message as `GET /messaging/messages` ' +
      'returns it, content included (sent only to the portal’s own signed endpoints). Once per ' +
      'message: a repeated provider webhook sends nothing.',
    examples: [
      {
        id: 'msg_5mR2pQ8xLw',
        direction: 'inbound',
        from: '+16505551234',
        contactId: 'ctc_8fJ2a',
        phoneNumberId: '1020345678011',
        providerMessageId: 'wamid.HBgLMTY1MDU1NTEyMzQVAgASGBQ',
        type: 'text',
        text: { body: 'Is my order on its way?' },
        context: null,
        receivedAt: '2026-11-23T18:05:00.000Z',
        readAt: null,
      },
    ],
  }),
  'message.reaction': Type.Object(InboundMessageSchema.properties, {
    description:
      'A person reacted to a message (either direction) with an emoji, or removed their ' +
      'reaction (`reaction.emoji` empty): the reaction as `GET /messaging/messages` returns it.',
    examples: [
      {
        id: 'msg_7hT3kN2bVc',
        direction: 'inbound',
        from: '+16505551234',
        contactId: 'ctc_8fJ2a',
        phoneNumberId: '1020345678011',
        providerMessageId: 'wamid.HBgLMTY1MDU1NTEyMzQVAgASGBYz',
        type: 'reaction',
        reaction: {
          messageId: 'msg_3kTq9',
          providerMessageId: 'wamid.HBgLMTY1MDU1NTEyMzQVAgARGBI',
          emoji: '👍',
        },
        context: null,
        receivedAt: '2026-11-23T18:06:00.000Z',
        readAt: null,
      },
    ],
  }),
  ...ACCOUNT_EVENT_SCHEMAS,
  ...CONVERSATION_EVENT_SCHEMAS,
  ...CAMPAIGN_EVENT_SCHEMAS,
  'credit.low': Type.Object(
    {
      available: Type.Integer({ description: 'Credit available now, minor units.' }),
      threshold: Type.Integer({ description: "The endpoint's threshold, minor units." }),
      currency: Type.String({ description: 'ISO 4217.' }),
    },
    {
      description: "The portal's available credit fell below the endpoint's threshold.",
      examples: [{ available: 450, threshold: 500, currency: 'EUR' }],
    },
  ),
  'ticket.created': Type.Object(
    {
      ticketId: Type.String({ description: 'The ticket (`tkt_…`).' }),
      priority: Type.String({ description: '`low`, `normal`, `high` or `urgent`.' }),
      createdAt: Iso('When.'),
    },
    {
      description: 'A support ticket was opened.',
      examples: [
        { ticketId: 'tkt_4QxY', priority: 'normal', createdAt: '2026-11-23T18:20:00.000Z' },
      ],
    },
  ),
  'ticket.updated': Type.Object(
    {
      ticketId: Type.String({ description: 'The ticket (`tkt_…`).' }),
      changes: Type.Object(
        {
          status: Change(Type.String(), 'The status, before and after.'),
          priority: Change(Type.String(), 'The priority, before and after.'),
          assignee: Change(
            Type.Union([Type.String(), Type.Null()]),
            "The assigned agent's display name (null: nobody), before and after.",
          ),
        },
        { description: 'Only the fields that changed.' },
      ),
      by: Type.Enum(['customer', 'agent', 'system'] as const, {
        description: 'Who: the customer, a support agent, or the system (closing after 7 days).',
      }),
      updatedAt: Iso('When.'),
    },
    {
      description: "A ticket's status, priority or assignee changed.",
      examples: [
        {
          ticketId: 'tkt_4QxY',
          changes: { status: { from: 'open', to: 'pending' } },
          by: 'agent',
          updatedAt: '2026-11-23T18:30:00.000Z',
        },
      ],
    },
  ),
  'ticket.comment_added': Type.Object(
    {
      ticketId: Type.String({ description: 'The ticket (`tkt_…`).' }),
      commentId: Type.String({ description: 'The comment (`cmt_…`).' }),
      author: Type.Object(
        {
          type: Type.Literal('agent'),
          name: Type.String({ description: "The agent's display name." }),
        },
        { description: 'Support, never their email.' },
      ),
      body: Type.String({
        description: 'The text as `GET /support/tickets/{id}/comments` returns it (redacted).',
      }),
      createdAt: Iso('When.'),
    },
    {
      description: 'Support replied on a ticket (internal notes are never sent).',
      examples: [
        {
          ticketId: 'tkt_4QxY',
          commentId: 'cmt_7Hd2',
          author: { type: 'agent', name: 'Lin' },
          body: 'We have found the cause; a fix ships today.',
          createdAt: '2026-11-23T18:30:00.000Z',
        },
      ],
    },
  ),
} as const;

/** The `data` of each event type. */
export type EventData = { [T in keyof typeof EVENT_SCHEMAS]: Static<(typeof EVENT_SCHEMAS)[T]> };

/** Every type an endpoint can subscribe to. */
export type EventType = keyof EventData;

export const EVENT_TYPES = Object.keys(EVENT_SCHEMAS) as EventType[];

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
