/**
 * `/messaging/messages`, `/messaging/conversations`, `/messaging/reports/summary`,
 * `/messaging/reports/costs` and `/messaging/credit` under the external API: parse → service → shape the response.
 *
 * @see docs/messaging.md
 * @see docs/messaging.md
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../api-kit/request-principal.ts';
import { errorResponses, typed, type ApiInstance } from '../../api-kit/schema-kit.ts';
import {
  AnyMessageEnvelopeSchema,
  CreditEnvelopeSchema,
  CreditTransactionPageSchema,
  ListMessagesQuerySchema,
  MessageEnvelopeSchema,
  MessagePageSchema,
  MessageParamsSchema,
  PageQuerySchema,
  SendMessageBodySchema,
  SummaryQuerySchema,
  SummarySchema,
  type SummaryQuery,
} from '../store/messages-schemas.ts';
import { summaryPeriod } from './messages-service.ts';
import { CostsQuerySchema, CostsSchema } from '../store/costs-schemas.ts';
import type { MessagingService } from '../store/messaging-types.ts';
import { conversationRoutes } from '../conversations/conversations-routes.ts';
import type { ConversationsService } from '../conversations/conversations-service.ts';

const TAGS = ['Messaging'];
const SEND = { requiredScopes: ['messaging:send'] as const };
const REPORTS = { requiredScopes: ['messaging:reports:read'] as const };
const CREDIT = { requiredScopes: ['messaging:credit:read'] as const };

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Optional, 1–255 characters. A retry with the same key and body within 24 hours ' +
        'returns the first response and queues nothing; the same key with another body is 409 ' +
        '`idempotency_conflict`.',
    }),
  ),
});

/** POST and GET /messaging/messages, GET /messaging/messages/{id}. */
function messageRoutes(
  api: ApiInstance,
  messaging: MessagingService,
  conversations: ConversationsService,
): void {
  api.post(
    '/messaging/messages',
    {
      config: SEND,
      schema: {
        summary: 'Send a WhatsApp message',
        description:
          'Queues a message of one kind (`type`): text, image, video, audio, document, ' +
          'sticker, location, interactive (reply buttons, a list, a URL button) or reaction ' +
          'inside the 24-hour service window, or an approved template; `context` quotes a ' +
          'message. To `to` (an E.164 phone, or the WhatsApp user id (BSUID) of a person who ' +
          'wrote without one) or `contactId`, from `from` (a phone number id; required ' +
          'only when the account has several). Refused before anything is queued, in this ' +
          'order: 400 (naming the field), 409 `not_connected`, 409 `number_not_ready` (the sender ' +
          'number not onboarded: the message says what is missing), 422 `recipient_opted_out`, 422 ' +
          '`outside_service_window`, 404 (an unknown medium, or a quoted or reacted-to message ' +
          'not in the conversation), 422 ' +
          '`template_not_approved`, 422 `marketing_stopped` (a marketing template to a person who ' +
          'stopped marketing from the sender number in WhatsApp), 422 `recipient_needs_phone` ' +
          '(an authentication template to a person known only by their WhatsApp user id), 422 ' +
          '`invalid_template_parameters` (kinds and counts checked ' +
          "against the template's definition), 402 `insufficient_credit`, 429 " +
          '`messaging_limit_reached` (a template to a person outside a service window, not yet ' +
          "counted, when the business portfolio's messaging limit of people in 24 hours is " +
          "reached; `Retry-After` in seconds). The message's price is reserved " +
          'from the credit, captured when the provider sends it and released if it fails. ' +
          'Follow its status with GET /messaging/messages/{id}.',
        tags: TAGS,
        headers: IdempotencyHeaders,
        body: SendMessageBodySchema,
        response: {
          202: {
            ...MessageEnvelopeSchema,
            description:
              'The message, `queued`. A replay of an earlier request with the same ' +
              'Idempotency-Key carries `Idempotent-Replayed: true`.',
          },
          ...errorResponses([
            'invalid_request',
            'insufficient_credit',
            'not_found',
            'not_connected',
            'number_not_ready',
            'idempotency_conflict',
            'payload_too_large',
            'unsupported_media_type',
            'recipient_opted_out',
            'outside_service_window',
            'template_not_approved',
            'marketing_stopped',
            'recipient_needs_phone',
            'invalid_template_parameters',
            // The shared 429 as well: this route's 429 replaces it in the OpenAPI document.
            'rate_limited',
            'messaging_limit_reached',
            'provider_error',
            'provider_timeout',
          ]),
        },
      },
    },
    async (request, reply) => {
      const result = await messaging.sendMessage({
        principal: principalOf(request),
        input: request.body,
        idempotencyKey: request.headers['idempotency-key'],
        requestId: request.id,
      });
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      // A replay repeats the stored first response, and only a 202 is ever stored.
      return reply.code(result.status as 202).send(result.body);
    },
  );

  api.get(
    '/messaging/messages',
    {
      config: REPORTS,
      schema: {
        summary: 'List messages',
        description:
          "The portal's messages in both directions, newest first, a page at a time: outbound " +
          '(`direction: "outbound"`, with each status\'s time) and inbound (`"inbound"`, ' +
          'with its content). Filters: `direction`, `contactId`, `phoneNumberId`, ' +
          '`since`/`until`; `status` and `to` (E.164) concern outbound messages only.',
        tags: TAGS,
        querystring: ListMessagesQuerySchema,
        response: {
          200: { ...MessagePageSchema, description: 'A page of messages, newest first.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await conversations.listMessages(principalOf(request), request.query),
    }),
  );

  api.get(
    '/messaging/messages/:id',
    {
      config: REPORTS,
      schema: {
        summary: 'Read a message',
        description:
          "One message of the token's portal, either direction: an outbound one with its " +
          'delivery report (`status` queued → sent → delivered → read, or failed with `error`, ' +
          "each status's time, `price`), an inbound one with its content.",
        tags: TAGS,
        params: MessageParamsSchema,
        response: {
          200: { ...AnyMessageEnvelopeSchema, description: 'The message.' },
          ...errorResponses(['invalid_request', 'not_found']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await conversations.getMessage(principalOf(request), request.params.id),
    }),
  );
}

/** The summary and the credit routes. */
function reportRoutes(api: ApiInstance, messaging: MessagingService): void {
  api.get(
    '/messaging/reports/summary',
    {
      config: REPORTS,
      schema: {
        summary: 'Summarise messages per day or hour',
        description:
          'Per UTC day or hour of `[since, until)`: messages queued, their counts by current ' +
          'status, the delivery rate and the cost (captured prices).',
        tags: TAGS,
        querystring: SummaryQuerySchema,
        response: {
          200: { ...SummarySchema, description: 'Buckets with messages, oldest first.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => {
      // Defaults filled in once, so the answer names exactly the period it summarises.
      const query = { ...request.query, ...periodOf(request.query) };
      const periods = await messaging.summary(principalOf(request), query);
      return {
        success: true as const,
        data: { since: query.since, until: query.until, granularity: query.granularity, periods },
      };
    },
  );

  api.get(
    '/messaging/reports/costs',
    {
      config: REPORTS,
      schema: {
        summary: 'Report message costs per day, number and category',
        description:
          'Per UTC day of `[since, until)`, business number and category: the messages sent, ' +
          "how many the provider's status webhooks priced and billed, Portico's estimate " +
          '(prices reserved at send time) and what was charged once the provider said which ' +
          'category it bills (nothing for a message it does not bill), in minor units.',
        tags: TAGS,
        querystring: CostsQuerySchema,
        response: {
          200: { ...CostsSchema, description: 'Rows with sent messages, oldest day first.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await messaging.costs(principalOf(request), request.query),
    }),
  );

  api.get(
    '/messaging/credit',
    {
      config: CREDIT,
      schema: {
        summary: 'Read the credit',
        description:
          "The portal's messaging credit in minor units: `balance` (owned) and `reserved` " +
          '(held by queued messages); what can be spent is balance − reserved.',
        tags: TAGS,
        response: { 200: { ...CreditEnvelopeSchema, description: 'The credit.' } },
      },
    },
    async (request) => ({
      success: true as const,
      data: await messaging.credit(principalOf(request)),
    }),
  );

  api.get(
    '/messaging/credit/transactions',
    {
      config: CREDIT,
      schema: {
        summary: 'List credit transactions',
        description:
          'What moved the credit, newest first: topup (operator), reserve (a send), capture ' +
          '(sent), release (failed).',
        tags: TAGS,
        querystring: PageQuerySchema,
        response: {
          200: { ...CreditTransactionPageSchema, description: 'A page, newest first.' },
          ...errorResponses(['invalid_request']),
        },
      },
    },
    async (request) => ({
      success: true as const,
      data: await messaging.listCreditTransactions(principalOf(request), request.query),
    }),
  );
}

/** The route plugin; pass it in the external API's `routes` option. */
export function messagingRoutes(messaging: MessagingService, conversations: ConversationsService) {
  return async function routes(app: FastifyInstance): Promise<void> {
    const api = typed(app);
    messageRoutes(api, messaging, conversations);
    conversationRoutes(api, conversations);
    reportRoutes(api, messaging);
  };
}

/** `since` and `until` of a summary query as ISO 8601 instants, defaults filled in. */
function periodOf(query: SummaryQuery): { since: string; until: string } {
  const { since, until } = summaryPeriod(query);
  return { since: since.toISOString(), until: until.toISOString() };
}
