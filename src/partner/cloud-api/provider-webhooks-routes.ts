/**
 * The provider's webhooks (WhatsApp Business Account subscriptions):
 *
 * - `GET  /api/provider/webhooks?hub.mode=subscribe&hub.verify_token=…&hub.challenge=…`
 *   echoes `hub.challenge` as text/plain for the configured verify token; anything else 403.
 * - `POST /api/provider/webhooks` with `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret,
 *   raw body)>`: verified on the raw bytes before anything is parsed; a bad or missing
 *   signature is 401 and changes nothing. Then each entry is routed by its WABA id to the portal
 *   of the active connection covering it (an unknown WABA is acknowledged and ignored), its
 *   events handed to the sink, `PARTNER_REMOVED` revokes; then 200. Statuses are only stored
 *   before the answer (one job a change, when the sink queues them) and applied after it, so a
 *   batch of thousands is answered as fast as one (docs/decisions/0040-status-batches.md).
 *
 * Registered in a context of its own (app.ts): its JSON parser keeps the body as a Buffer, and
 * no cookie, form or page-header hook runs here. Nothing of a body is ever logged: counts only.
 *
 * @see https://developers.facebook.com/docs/graph-api/webhooks/getting-started
 * @see docs/partner-connection.md "WhatsApp Cloud API"
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { PROVIDER_WEBHOOKS_PATH } from '../../config.ts';
import { ErrorEnvelopeSchema, sendError } from '../../platform/error-envelope.ts';
import { AppError } from '../../platform/errors.ts';
import type { PartnerService } from '../partner-service.ts';
import type { ProviderWebhookSink } from './provider-webhook-events.ts';
import { parseProviderWebhook, type WebhookChange } from './provider-webhook-payload.ts';

/**
 * Largest webhook body, in bytes (8 MiB): room for 10,000 statuses as the Cloud API sends them
 * (some 300–700 bytes each with `conversation`, `pricing` and `errors`), so a large batch is
 * answered rather than refused whole (docs/decisions/0060-status-sets.md).
 */
const WEBHOOK_BODY_LIMIT = 8 * 1024 * 1024;

const Verification = Type.Object({
  'hub.mode': Type.Optional(Type.String({ maxLength: 32 })),
  'hub.verify_token': Type.Optional(Type.String({ maxLength: 512 })),
  'hub.challenge': Type.Optional(Type.String({ maxLength: 256 })),
});

export interface ProviderWebhooksOptions {
  partner: Pick<
    PartnerService,
    | 'verifyWebhookSubscription'
    | 'verifyWebhookSignature'
    | 'portalOfWaba'
    | 'partnerRemoved'
    | 'partnerAdded'
  >;
  /** Messaging's events (partner/ imports no other feature). */
  sink: ProviderWebhookSink;
}

export async function providerWebhooksRoutes(
  app: FastifyInstance,
  { partner, sink }: ProviderWebhooksOptions,
): Promise<void> {
  // The signature is over the exact bytes: keep them (this context only).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT },
    (_request, body, done) => done(null, body),
  );

  app.get(
    PROVIDER_WEBHOOKS_PATH,
    {
      schema: {
        querystring: Verification,
        response: { 200: Type.String(), 403: Type.String() },
      },
    },
    async (request, reply) => {
      const q = request.query as Static<typeof Verification>;
      const challenge = q['hub.challenge'];
      reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store');
      if (
        challenge === undefined ||
        !partner.verifyWebhookSubscription(q['hub.mode'], q['hub.verify_token'])
      ) {
        request.log.warn('provider webhook verification refused');
        return reply.code(403).send('Forbidden');
      }
      return challenge;
    },
  );

  app.post(
    PROVIDER_WEBHOOKS_PATH,
    {
      bodyLimit: WEBHOOK_BODY_LIMIT,
      schema: {
        response: {
          200: Type.Object({ success: Type.Literal(true) }),
          '4xx': ErrorEnvelopeSchema,
        },
      },
    },
    async (request, reply) => {
      const raw = request.body;
      if (!Buffer.isBuffer(raw))
        return sendError(reply, new AppError('invalid_request', 'Send the notification as JSON.'));
      const signature = request.headers['x-hub-signature-256'];
      if (
        !partner.verifyWebhookSignature(raw, typeof signature === 'string' ? signature : undefined)
      ) {
        request.log.warn({ bytes: raw.length }, 'provider webhook refused: bad signature');
        return sendError(
          reply,
          new AppError('invalid_signature', 'The X-Hub-Signature-256 signature is not valid.'),
        );
      }
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return sendError(reply, new AppError('invalid_request', 'The body is not valid JSON.'));
      }
      const parsed = parseProviderWebhook(body);
      if (!parsed.ok)
        return sendError(
          reply,
          new AppError('invalid_request', 'Not a WhatsApp Business Account notification.'),
        );
      const outcome = await dispatch(parsed.changes, partner, sink, request.id);
      request.log.info(
        {
          changes: parsed.changes.length,
          skipped: parsed.skipped,
          // The provider's ids only: a skipped item's other fields may hold a phone or text.
          ...(parsed.skippedIds.length > 0 && { skippedIds: parsed.skippedIds }),
          ...outcome,
        },
        'provider webhook handled',
      );
      return { success: true as const };
    },
  );
}

/**
 * Route each change to its portal and hand it on, in order. The portal of a WABA is looked up
 * once per delivery.
 *
 * @returns counts for the log line: changes dispatched, ignored (unknown WABA), portals revoked.
 */
async function dispatch(
  changes: WebhookChange[],
  partner: ProviderWebhooksOptions['partner'],
  sink: ProviderWebhookSink,
  requestId: string,
): Promise<{ dispatched: number; ignored: number; revoked: number }> {
  const portals = new Map<string, number | null>();
  const counts = { dispatched: 0, ignored: 0, revoked: 0 };
  for (const change of changes) {
    if (change.kind === 'partner_added') {
      await partner.partnerAdded(change.wabaId);
      continue;
    }
    if (change.kind === 'partner_removed') {
      const revoked = await partner.partnerRemoved(change.wabaId, change.time, requestId);
      counts.revoked += revoked.length;
      continue;
    }
    if (!portals.has(change.wabaId))
      portals.set(change.wabaId, await partner.portalOfWaba(change.wabaId));
    const portalId = portals.get(change.wabaId);
    if (portalId === null || portalId === undefined) {
      counts.ignored++;
      continue;
    }
    if (change.kind === 'statuses')
      await (sink.queueStatuses ?? sink.messageStatuses).call(
        sink,
        portalId,
        change.phoneNumberId,
        change.events,
      );
    else if (change.kind === 'inbound')
      await sink.inboundMessages(portalId, change.phoneNumberId, change.events);
    else if (change.kind === 'phone_quality')
      await sink.phoneNumberQualityUpdated?.(portalId, change.event);
    else if (change.kind === 'template_quality')
      await sink.templateQualityUpdated?.(portalId, change.event);
    else if (change.kind === 'template_category')
      await sink.templateCategoryChanged?.(portalId, change.event);
    else if (change.kind === 'user_ids') await sink.userIdsChanged?.(portalId, change.events);
    else if (change.kind === 'user_preferences')
      await sink.userPreferencesChanged?.(portalId, change.events);
    else if (change.kind === 'account_standing')
      await sink.accountStanding?.(portalId, change.event);
    else await sink.templateStatusUpdated(portalId, change.event);
    counts.dispatched++;
  }
  return counts;
}
