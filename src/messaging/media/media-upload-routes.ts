/**
 * `POST /messaging/media` under the external API: a multipart upload (`file`, and
 * `phoneNumberId` when the account has several numbers) received as a stream into a temporary
 * file, checked by its content, uploaded to the provider and answered with our medium id. Thin:
 * parts → service (receive, upload) → envelope; the temporary file is deleted in every case.
 * Multipart is parsed in this route's context only (the API reads JSON everywhere else).
 *
 * @see docs/messaging.md "Media"
 * @see docs/decisions/0030-media-upload.md
 */
import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { principalOf } from '../../api-kit/request-principal.ts';
import { Envelope, errorResponses, Iso, typed } from '../../api-kit/schema-kit.ts';
import { AppError } from '../../platform/errors.ts';
import { ACCEPTED_IN_WORDS, MAX_MEDIUM_BYTES } from './media-kinds.ts';
import type { ReceivedMedium } from './media-intake.ts';
import type { MediaService } from './media-service.ts';

/** The form's fields, for the document (multipart is read by hand, not validated by schema). */
const UploadFormSchema = Type.Object(
  {
    file: Type.String({
      format: 'binary',
      description: 'The medium. Its type is read from its content, not from its name.',
    }),
    phoneNumberId: Type.Optional(
      Type.String({
        description:
          'The business number to upload through (`GET /messaging/numbers`); required when ' +
          'the account has several.',
      }),
    ),
  },
  {
    title: 'MediaUpload',
    examples: [{ file: 'invoice-1042.pdf', phoneNumberId: '106540352242922' }],
  },
);

const UploadedMediumSchema = Type.Object(
  {
    id: Type.String({ description: 'Our medium id, `med_…`: a send names it as `mediaId`.' }),
    mimeType: Type.String({ description: 'The type read from the content.' }),
    size: Type.Integer({ description: 'Bytes.' }),
    expiresAt: Iso('When the provider forgets the medium: 30 days after the upload.'),
  },
  { title: 'UploadedMedium' },
);

/** Fields other than the file: one, short. */
const FIELD_LIMITS = { files: 1, fields: 1, parts: 2, fieldSize: 64, fieldNameSize: 32 };

const invalid = (field: string, message: string) =>
  new AppError('invalid_request', `\`${field}\` ${message}.`, {
    details: [{ field: `body.${field}`, message }],
  });

/** The upload route; registered by `mediaRoutes` in a context of its own. */
export function mediaUploadRoute(media: Pick<MediaService, 'receive' | 'upload'>) {
  return async function routes(app: FastifyInstance): Promise<void> {
    await app.register(fastifyMultipart, {
      // One byte over the largest medium: the intake's own count refuses first, naming the limit.
      limits: { fileSize: MAX_MEDIUM_BYTES + 1, ...FIELD_LIMITS },
    });
    const api = typed(app);
    api.post(
      '/messaging/media',
      {
        config: { requiredScopes: ['messaging:send'] as const },
        // The body is a stream the handler reads; the schema documents the form.
        validatorCompiler: () => () => true,
        schema: {
          summary: 'Upload a medium',
          description:
            'A multipart form (`multipart/form-data`) with the file in `file`, and ' +
            '`phoneNumberId` when the account has several numbers. The type is read from the ' +
            `content and must be one WhatsApp sends: ${ACCEPTED_IN_WORDS}; anything else (a ` +
            '`.pdf` that is an executable) is 415 `unsupported_media_type`. Each kind has its ' +
            'limit: images 5 MB, videos and audio 16 MB, documents 100 MB, stickers 100 KB ' +
            '(500 KB animated); over it is 422 `media_too_large` naming the limit, refused as ' +
            'soon as the bytes pass it. The provider keeps an uploaded medium 30 days ' +
            '(`expiresAt`); send it by its `id` as `mediaId`.',
          tags: ['Messaging'],
          consumes: ['multipart/form-data'],
          body: UploadFormSchema,
          response: {
            201: {
              ...Envelope(UploadedMediumSchema, { title: 'UploadedMediumEnvelope' }),
              description: 'Uploaded.',
            },
            ...errorResponses([
              'invalid_request',
              'not_connected',
              'media_too_large',
              'unsupported_media_type',
              'provider_error',
              'provider_timeout',
            ]),
          },
        },
      },
      async (request, reply) => {
        const { portalId } = principalOf(request);
        const form = await readForm(request, media);
        try {
          const uploaded = await media.upload(portalId, form.medium, {
            fileName: form.fileName,
            phoneNumberId: form.phoneNumberId,
          });
          return reply.code(201).send({
            success: true as const,
            data: { ...uploaded, expiresAt: uploaded.expiresAt.toISOString() },
          });
        } finally {
          await form.medium.dispose();
        }
      },
    );
  };
}

/**
 * Read the form: the file into a checked temporary file, and `phoneNumberId`, in either order.
 *
 * @throws AppError `invalid_request` (not multipart, no file, an unknown field, limits),
 *   `media_too_large`, `unsupported_media_type`; the temporary file is deleted before.
 */
async function readForm(
  request: FastifyRequest,
  media: Pick<MediaService, 'receive'>,
): Promise<{ medium: ReceivedMedium; fileName: string; phoneNumberId: string | undefined }> {
  if (!request.isMultipart())
    throw new AppError(
      'unsupported_media_type',
      'Send the medium as multipart/form-data with the file in `file`.',
    );
  let medium: ReceivedMedium | undefined;
  let fileName = '';
  let phoneNumberId: string | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file' && part.fieldname === 'file' && medium === undefined) {
        fileName = part.filename;
        medium = await media.receive(part.file, part.filename);
      } else if (part.type === 'field' && part.fieldname === 'phoneNumberId') {
        phoneNumberId = String(part.value) || undefined;
      } else {
        if (part.type === 'file') part.file.resume();
        throw invalid(part.fieldname, 'is not a field of this form (`file`, `phoneNumberId`)');
      }
    }
  } catch (err) {
    await medium?.dispose();
    throw formError(err);
  }
  if (medium === undefined) throw invalid('file', 'is required: the medium to upload');
  return { medium, fileName, phoneNumberId };
}

/**
 * What the multipart parser (busboy, under `@fastify/multipart`) throws for a body that is not
 * the form its header announces: no boundary, another boundary, a body cut short or garbage.
 * These carry no code, only their message.
 */
const MALFORMED_FORM =
  /^(Multipart: Boundary not found|Unexpected end of (multipart data|form|file)|Malformed part header)/;

/** A multipart parser failure (limits, malformed) as the API's 400; others unchanged. */
function formError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (err instanceof Error && MALFORMED_FORM.test(err.message))
    return new AppError('invalid_request', 'The multipart form could not be read.', {
      cause: err,
    });
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^FST_(PARTS|FILES|FIELDS)_LIMIT$/.test(code))
    return new AppError(
      'invalid_request',
      'The form has more than `file` and `phoneNumberId` (one each).',
      { cause: err },
    );
  if (typeof code === 'string' && code.startsWith('FST_'))
    return new AppError('invalid_request', 'The multipart form could not be read.', {
      cause: err,
    });
  return err;
}
