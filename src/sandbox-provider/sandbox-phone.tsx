/**
 * The sandbox phone: the people's side of WhatsApp, for developers and tests.
 *
 * - `GET  /sandbox/phone`        every person's thread and what they can send (phone-page.tsx);
 *   its forms post to `/sandbox/phone/*` (phone-forms.ts).
 * - `GET  /sandbox/phone/media/{media-id}` a medium's bytes for the phone page's thumbnails and
 *   links (a JPEG, PNG, WebP or GIF inline, anything else as an `application/octet-stream`
 *   attachment; 404 for a medium the sandbox does not have).
 * - `POST /sandbox/inbound`      JSON `{"phoneNumberId", "from", "text", "name"?}` or
 *   `{"phoneNumberId", "from", "message": {…}, "name"?}` where `message` is a Cloud API inbound
 *   message object without `id`, `from` and `timestamp` (inbound-message.ts; a medium without an
 *   `id` gets a bundled sample file) → 200 `{"wamid", "deliveries"}` once every app answered
 *   200; 502 with the deliveries otherwise; 404 `{"error"}` for an unknown number or one no
 *   app's grant covers; 400 `{"error", "message"?}` for a malformed body or an unknown media id.
 * - `GET  /sandbox/stats`        sends, distinct and duplicated `biz_opaque_callback_data`.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/webhooks/payload-examples
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { writeIn } from './cloud-inbound.ts';
import { InboundMessage } from './inbound-message.ts';
import { phoneFormRoutes } from './phone-forms.ts';
import { failureStatus, phoneHtml } from './phone-page.tsx';
import { HtmlResponse, type SurfaceOptions } from './surface.ts';
import { BSUID_PATTERN } from './sandbox-people.ts';

const Inbound = Type.Object({
  phoneNumberId: Type.String({ pattern: '^[0-9]{1,30}$' }),
  // A person with a phone; or one who writes with a username (no phone sent), named by their
  // business-scoped user id (given, or derived from the username).
  // @see https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/
  from: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{6,14}$' })),
  userId: Type.Optional(Type.String({ pattern: BSUID_PATTERN, maxLength: 135 })),
  username: Type.Optional(Type.String({ pattern: '^[a-z0-9._]{3,35}$' })),
  text: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  message: Type.Optional(InboundMessage),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});

const MediaParams = Type.Object({ mediaId: Type.String({ pattern: '^[0-9]{1,30}$' }) });
const INLINE_IMAGES = /^image\/(jpeg|png|webp|gif)$/;

/** The sandbox phone surface. */
export async function sandboxPhoneRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  const { state } = options;
  // The JSON route's malformed bodies get its own envelope (the forms have theirs).
  app.setErrorHandler((err: { statusCode?: number; message?: string }, _request, reply) =>
    reply
      .code(err.statusCode && err.statusCode < 500 ? err.statusCode : 400)
      .send({ error: 'invalid_request', message: err.message }),
  );

  app.get('/sandbox/phone', { schema: { response: HtmlResponse } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(phoneHtml(state)),
  );

  app.get(
    '/sandbox/phone/media/:mediaId',
    { schema: { params: MediaParams } },
    async (request, reply) => {
      const { mediaId } = request.params as Static<typeof MediaParams>;
      const medium = state.cloud.media.get(mediaId);
      if (!medium) return reply.code(404).send({ error: 'unknown_media' });
      // Bytes people and businesses upload are untrusted: only raster images show inline; all
      // else downloads, and nothing in them may run on the sandbox's origin.
      const inline = INLINE_IMAGES.test(medium.mimeType);
      return reply
        .type(inline ? medium.mimeType : 'application/octet-stream')
        .header('content-disposition', inline ? 'inline' : 'attachment')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, no-store')
        .send(medium.bytes);
    },
  );

  await app.register(phoneFormRoutes, options);

  app.post(
    '/sandbox/inbound',
    {
      schema: {
        body: Inbound,
        response: {
          200: Type.Record(Type.String(), Type.Unknown()),
          '4xx': Type.Record(Type.String(), Type.Unknown()),
          502: Type.Record(Type.String(), Type.Unknown()),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as Static<typeof Inbound>;
      if ((body.text === undefined) === (body.message === undefined))
        return reply
          .code(400)
          .send({ error: 'invalid_request', message: 'give either text or message' });
      if (body.from === undefined && body.userId === undefined && body.username === undefined)
        return reply
          .code(400)
          .send({ error: 'invalid_request', message: 'give from, or username or userId' });
      const outcome = await writeIn(state, body);
      if (!outcome.ok)
        return reply.code(failureStatus(outcome.reason)).send({ error: outcome.reason });
      const acknowledged = outcome.deliveries.every((d) => d.status === 200);
      return reply
        .code(acknowledged ? 200 : 502)
        .send({ wamid: outcome.wamid, deliveries: outcome.deliveries });
    },
  );

  app.get('/sandbox/stats', async () => state.cloud.stats());
}
