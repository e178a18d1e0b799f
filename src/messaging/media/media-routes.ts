/**
 * `GET /messaging/media/{id}` under the external API: a medium's bytes, fetched from the
 * provider on demand and checked (media-service.ts). Thin: principal → service → bytes and their
 * headers. And `POST /messaging/media`, the upload (media-upload-routes.ts, in its own context).
 *
 * @see docs/messaging.md "Media"
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../api-kit/request-principal.ts';
import { errorResponses, typed } from '../../api-kit/schema-kit.ts';
import type { MediaService } from './media-service.ts';
import { mediaUploadRoute } from './media-upload-routes.ts';

const MediaParamsSchema = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'Medium id (`med_…`).',
    examples: ['med_9wQe4TzR1bNc'],
  }),
});

/**
 * The `Content-Type`s a download answers with: the mime type the provider gave for the medium,
 * one of the Cloud API's supported media types, or `application/octet-stream` when it gave none
 * that is well-formed.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types
 */
const DOWNLOAD_TYPES = [
  'image/jpeg',
  'image/png',
  'image/webp',
  'audio/aac',
  'audio/amr',
  'audio/mpeg',
  'audio/mp4',
  'audio/ogg',
  'video/mp4',
  'video/3gpp',
  'application/pdf',
  'text/plain',
  'application/msword',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.ms-excel',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/octet-stream',
] as const;

/** The route plugin; pass it in the external API's `routes` option. */
export function mediaRoutes(mediaService: Pick<MediaService, 'download' | 'receive' | 'upload'>) {
  return async function routes(app: FastifyInstance): Promise<void> {
    await app.register(mediaUploadRoute(mediaService));
    const api = typed(app);
    api.get(
      '/messaging/media/:id',
      {
        config: { requiredScopes: ['messaging:reports:read'] as const },
        schema: {
          summary: 'Download an inbound medium',
          description:
            'The bytes of an image, audio, video, document or sticker a person sent (the ' +
            '`media.id` of an inbound message), fetched from the provider now and checked against ' +
            "the SHA-256 of the provider's webhook before the first byte is sent. Answers with " +
            '`Content-Type` (the mime type), `Content-Length` and `Content-Disposition: ' +
            "attachment` with a safe file name (the document's name, or the id and an extension). " +
            '410 `media_gone` when the provider no longer has it; 422 `media_too_large` above ' +
            '`MESSAGING_MEDIA_MAX_BYTES` (100 MiB by default); 502 `media_checksum_mismatch` when ' +
            "the provider's bytes do not match.",
          tags: ['Messaging'],
          params: MediaParamsSchema,
          response: {
            200: {
              description: 'The bytes, with their `Content-Type` and `Content-Disposition`.',
              content: Object.fromEntries(
                DOWNLOAD_TYPES.map((type) => [
                  type,
                  { schema: Type.String({ format: 'binary', description: 'The medium.' }) },
                ]),
              ),
            },
            ...errorResponses([
              'not_found',
              'not_connected',
              'media_gone',
              'media_too_large',
              'provider_error',
              'media_checksum_mismatch',
              'provider_timeout',
            ]),
          },
        },
      },
      async (request, reply) => {
        const { portalId } = principalOf(request);
        const medium = await mediaService.download(portalId, request.params.id);
        // Bytes, not the schema's JSON: the plain reply type (the 200 schema only documents them).
        return (reply as FastifyReply)
          .header('content-type', medium.contentType)
          .header('content-length', String(medium.bytes.length))
          .header('content-disposition', medium.contentDisposition)
          .header('cache-control', 'private, no-store')
          .header('x-content-type-options', 'nosniff')
          .send(medium.bytes);
      },
    );
  };
}
