/**
 * The messaging service's interface: what routes, pages, the CLI, the drafts and the provider's
 * webhook receiver call. Implemented in messages/messages-service.ts.
 *
 * @see docs/messaging.md
 */
import type { Principal } from '../../accounts/principal.ts';
import type { Actor } from '../../audit/audit-log.ts';
import type {
  Credit,
  CreditTransaction,
  ListMessagesQuery,
  Message,
  SendMessageBody,
  SummaryPeriod,
  SummaryQuery,
} from './messages-schemas.ts';
import type { ProviderWebhookSink } from '../../partner/cloud-api/provider-webhook-events.ts';
import type { DayCounts } from './daily-counts.ts';
import type { CostRow } from './costs.ts';
import type { CostsQuery } from './costs-schemas.ts';

export type PortalOf = Pick<Principal, 'portalId'>;

/** What a send produced, and whether it is a replay of an earlier one. */
export interface SendMessageResult {
  /** HTTP status: 202 for a newly queued message; a replay repeats the first response's. */
  status: number;
  body: { success: true; data: Message };
  /** True when an `Idempotency-Key` matched an earlier request: nothing was queued. */
  replayed: boolean;
}

/** Messaging of one portal at a time; see each method. */
export interface MessagingService {
  /**
   * Queue a message: refusals are checked in the documented order, then the message row, the
   * credit reservation and the delivery job are written in one transaction.
   *
   * @returns 202 and the queued message, or the stored first response with `replayed: true`.
   * @throws AppError `invalid_request` (bad phone, missing text/template, unknown `from`, `from`
   *   needed), `not_found` (unknown `contactId`), `not_connected` (409),
   *   `recipient_opted_out` (422), `outside_service_window` (422), `template_not_approved`, `marketing_stopped`
   *   (422), `messaging_limit_reached` (429, with `Retry-After`; messaging-limit.ts),
   *   `insufficient_credit` (402), `idempotency_conflict` (409), `provider_error` (502),
   *   `provider_timeout` (504).
   */
  sendMessage(args: {
    principal: PortalOf;
    input: SendMessageBody;
    idempotencyKey?: string | undefined;
    requestId?: string | undefined;
    /**
     * Internal, never from a request: the confirmation reply of an opt-out keyword, the one
     * text a person who just opted out receives (docs/messaging.md "Opt-out keywords").
     */
    optOutConfirmation?: boolean | undefined;
  }): Promise<SendMessageResult>;

  /** A page of the portal's messages, newest first. @throws AppError `invalid_request`. */
  listMessages(
    principal: PortalOf,
    query: ListMessagesQuery,
  ): Promise<{ items: Message[]; nextCursor: string | null }>;

  /** @throws AppError `not_found` for an unknown id and another portal's alike. */
  getMessage(principal: PortalOf, id: string): Promise<Message>;

  /** Counts per status, delivery rate and cost per UTC day or hour. */
  summary(principal: PortalOf, query: SummaryQuery): Promise<SummaryPeriod[]>;

  /**
   * What sent messages cost per UTC day, business number and category over `[since, until)`
   * (defaults: the 30 days before now), estimated beside charged (store/costs.ts).
   *
   * @throws AppError `invalid_request` when `until` is not after `since` or 366 days past it.
   */
  costs(
    principal: PortalOf,
    query: CostsQuery,
  ): Promise<{ since: string; until: string; currency: string; rows: CostRow[] }>;

  /**
   * How many messages created on each UTC day of `[since, until)` (`YYYY-MM-DD`) are now sent,
   * delivered, read or failed, oldest day first (days without any absent), from the
   * maintained daily counts: a few rows whatever the number of messages.
   */
  dailyCounts(principal: PortalOf, range: { since: string; until: string }): Promise<DayCounts[]>;

  /** The portal's credit (an account of 0 in the configured currency when never topped up). */
  credit(principal: PortalOf): Promise<Credit>;

  /** A page of the portal's credit transactions, newest first. */
  listCreditTransactions(
    principal: PortalOf,
    query: { limit: number; cursor?: string | undefined },
  ): Promise<{ items: CreditTransaction[]; nextCursor: string | null }>;

  /**
   * Top up a portal's credit (operator), audited `credit.added` (amount and note, no secret).
   *
   * @param amount minor units, positive.
   * @throws UsageError for an unknown portal or a non-positive amount.
   */
  addCredit(args: {
    portalId: number;
    amount: number;
    note: string;
    actor: Actor;
  }): Promise<Credit & { transactionId: string }>;

  /** The provider's webhook events: statuses, inbound messages, template updates. */
  webhookSink: ProviderWebhookSink;
}
