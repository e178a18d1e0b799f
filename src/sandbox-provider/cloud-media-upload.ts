/**
 * A business's media upload, as the Cloud API takes it: `POST /{version}/{phone-number-id}/media`,
 * multipart with `messaging_product=whatsapp`, `type` (the mime type) and `file`, with
 * `whatsapp_business_messaging` on the number's WABA → `{"id": "<media id>"}`. The bytes are kept
 * in the sandbox's media store (cloud-media-store.ts), so `GET /{media-id}` and its download
 * link serve them as they serve a person's media. A file larger than the store's whole cap is
 * answered with an id and not kept (as if evicted at once).
 *
 * Refusals (Graph's envelope, HTTP 400, code 100): no `messaging_product=whatsapp`, no `file`, a
 * `type` the Cloud API does not take, a file over its type's limit (images 5 MB, video and audio
 * 16 MB, documents 100 MB, stickers 500 KB; decimal). A file whose name contains
 * `sandbox-refuse` is refused with 131053 ("Media upload error"), for tests of that path.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#upload-media
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types
 */
import { randomInt } from 'node:crypto';
import fastifyMultipart, { type Multipart } from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { MESSAGING, wabaAccess } from './cloud-auth.ts';
import { MEDIA_CAP_BYTES } from './cloud-media-store.ts';
import { wabaOfPhoneNumber } from './cloud-state.ts';
import { GraphError, graphError, type GraphFault } from './graph-errors.ts';
import type { SurfaceOptions } from './surface.ts';

const MB = 1_000_000;
/** The Cloud API's accepted types and the largest file of each, in bytes. */
const LIMITS: Readonly<Record<string, number>> = {
  'image/jpeg': 5 * MB,
  'image/png': 5 * MB,
  'video/mp4': 16 * MB,
  'video/3gpp': 16 * MB,
  'audio/aac': 16 * MB,
  'audio/amr': 16 * MB,
  'audio/mpeg': 16 * MB,
  'audio/mp4': 16 * MB,
  'audio/ogg': 16 * MB,
  'text/plain': 100 * MB,
  'application/pdf': 100 * MB,
  'application/msword': 100 * MB,
  'application/vnd.ms-excel': 100 * MB,
  'application/vnd.ms-powerpoint': 100 * MB,
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 100 * MB,
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 100 * MB,
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 100 * MB,
  'image/webp': 500_000,
};
const LARGEST = 100 * MB;

const Params = Type.Object({
  version: Type.String({ pattern: '^v[0-9]+\\.[0-9]+$' }),
  phoneNumberId: Type.String({ maxLength: 40 }),
});

const invalid = (message: string): GraphFault => ({ code: 100, message: `(#100) ${message}` });
const REFUSED: GraphFault = {
  code: 131053,
  message: 'Media upload error',
  details: 'Unable to upload the media used in the message.',
};

/** What the form carried. */
interface Upload {
  fields: Record<string, string>;
  file: { bytes: Buffer | undefined; size: number; filename: string } | undefined;
}

/** The upload surface. */
export async function cloudMediaUploadRoutes(
  app: FastifyInstance,
  options: SurfaceOptions,
): Promise<void> {
  const { state } = options;
  await app.register(fastifyMultipart, {
    limits: { fileSize: LARGEST + 1, files: 1, fields: 4, fieldSize: 200, parts: 5 },
  });
  app.setErrorHandler((_err, _request, reply) =>
    graphError(reply, 400, invalid('Invalid parameter')),
  );
  app.post(
    '/:version/:phoneNumberId/media',
    {
      schema: {
        params: Params,
        response: { 200: Type.Object({ id: Type.String() }), '4xx': GraphError },
      },
    },
    async (request, reply) => {
      const { phoneNumberId } = request.params as Static<typeof Params>;
      const wabaId = wabaOfPhoneNumber(phoneNumberId) ?? '';
      const access = wabaAccess(request, options, wabaId, [MESSAGING]);
      if ('fault' in access) return graphError(reply, access.status, access.fault);
      if (!request.isMultipart())
        return graphError(reply, 400, invalid('The parameter file is required.'));
      const upload = await readUpload(request.parts());
      const fault = check(upload);
      if (fault) return graphError(reply, 400, fault);
      const { bytes } = upload.file!;
      const type = upload.fields.type!;
      const id = bytes
        ? state.cloud.media.add(bytes, type, wabaId).id
        : `${randomInt(100_000_000, 999_999_999)}${randomInt(1_000_000, 9_999_999)}`;
      return { id };
    },
  );
}

/** The form's fields and file; the file's bytes only while they fit the store's cap. */
async function readUpload(parts: AsyncIterable<Multipart>): Promise<Upload> {
  const upload: Upload = { fields: {}, file: undefined };
  for await (const part of parts) {
    if (part.type === 'field') {
      upload.fields[part.fieldname] = String(part.value);
      continue;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of part.file as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= MEDIA_CAP_BYTES) chunks.push(chunk);
    }
    upload.file = {
      bytes: size <= MEDIA_CAP_BYTES ? Buffer.concat(chunks, size) : undefined,
      size: part.file.truncated ? LARGEST + 1 : size,
      filename: part.filename,
    };
  }
  return upload;
}

/** The Cloud API's checks of an upload; undefined when it is accepted. */
function check({ fields, file }: Upload): GraphFault | undefined {
  if (fields.messaging_product !== 'whatsapp')
    return invalid('The parameter messaging_product is required.');
  if (!file || file.size === 0) return invalid('The parameter file is required.');
  const type = fields.type ?? '';
  const limit = LIMITS[type];
  if (limit === undefined)
    return invalid(
      `Param file must be a file with one of the following types: ${Object.keys(LIMITS).join(', ')}. Received file of type '${type.slice(0, 100)}'.`,
    );
  if (file.size > limit)
    return invalid(`File size too large (${type} is limited to ${limit} bytes).`);
  if (file.filename.includes('sandbox-refuse')) return REFUSED;
  return undefined;
}
