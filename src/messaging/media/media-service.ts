/**
 * Inbound media, served on demand: the bytes of a medium a person sent are fetched from the
 * provider when asked for (`GET /{media-id}`, then its short-lived URL with the portal's token,
 * both inside partner/), held in memory up to `MESSAGING_MEDIA_MAX_BYTES`, checked against the
 * SHA-256 the webhook gave, and only then handed to the caller. Nothing is written to a disk;
 * any instance serves any medium.
 *
 * Invariants: a medium is found by its id within the portal (another portal's id is
 * `not_found`); the provider's URL and the token never reach the caller; bytes whose SHA-256
 * differs from the webhook's (or, when the webhook gave none, from the provider's statement) are
 * never returned.
 *
 * @see docs/decisions/0028-media.md (why the bytes are checked before the first is sent)
 * @see docs/messaging.md "Media"
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Database } from '../../db/client.ts';
import { media } from '../../db/schema/conversations.ts';
import { messages } from '../../db/schema/messages.ts';
import { ConnectionInactiveError } from '../../partner/connections-store.ts';
import { ProviderError } from '../../partner/provider-error.ts';
import { AppError } from '../../platform/errors.ts';
import type { ProviderAdapter } from '../provider/provider-adapter.ts';
import { providerAppError } from '../provider/provider-errors.ts';
import {
  openContent,
  type ContentKeyring,
  type StoredInboundContent,
} from '../store/message-content.ts';
import { attachmentHeader, contentTypeOf, safeFileName } from './media-files.ts';
import { receiveMedium } from './media-intake.ts';
import { uploadMedium, type MediaUploadDeps } from './media-upload.ts';
import { uploadedFileName } from './outbound-media.ts';

/** A medium ready to send: its bytes (checked) and the headers that describe them. */
interface MediumDownload {
  bytes: Buffer;
  /** `Content-Type`: the mime type the webhook gave (or `application/octet-stream`). */
  contentType: string;
  /** The offered file name (safe; see media-files.ts). */
  fileName: string;
  /** `Content-Disposition: attachment; filename=…`. */
  contentDisposition: string;
}

interface MediaServiceDeps {
  db: Database;
  provider: Pick<ProviderAdapter, 'fetchMedium'> & MediaUploadDeps['provider'];
  /** The most bytes served (`MESSAGING_MEDIA_MAX_BYTES`). */
  maxBytes: number;
  /** Opens the message's sealed content, for a document's file name. */
  keyring: ContentKeyring;
}

export type MediaService = ReturnType<typeof createMediaService>;

export function createMediaService(deps: MediaServiceDeps) {
  const { db, provider, maxBytes } = deps;
  return {
    /** Receive and check an uploaded file (media-intake.ts `receiveMedium`). */
    receive: receiveMedium,

    /** Upload a received file to the provider and record it (media-upload.ts `uploadMedium`). */
    upload: (...args: Parameters<typeof uploadMedium> extends [unknown, ...infer A] ? A : never) =>
      uploadMedium(deps, ...args),

    /**
     * The bytes of the portal's medium `id` (`med_…`), fetched from the provider now.
     *
     * @throws AppError `not_found` (unknown id, or another portal's), `media_gone` (410: the
     *   provider no longer has it), `media_too_large` (422: over the cap),
     *   `media_checksum_mismatch` (502), `not_connected` (409), `provider_error` (502),
     *   `provider_timeout` (504).
     */
    async download(portalId: number, id: string): Promise<MediumDownload> {
      const [row] = await db
        .select()
        .from(media)
        .where(and(eq(media.portalId, portalId), eq(media.id, id)));
      if (!row) throw new AppError('not_found', 'No medium with this id.');
      if (row.fileSize !== null && row.fileSize > maxBytes) throw tooLarge();
      const fetched = await provider
        .fetchMedium(portalId, row.providerMediaId, maxBytes)
        .catch((err: unknown) => {
          throw mediaAppError(err);
        });
      if (!fetched.download.ok) throw tooLarge();
      const { bytes, sha256 } = fetched.download;
      const expected = row.sha256 ?? fetched.info.sha256;
      if (expected !== undefined && expected !== sha256)
        throw new AppError(
          'media_checksum_mismatch',
          "The provider's bytes do not match the medium's SHA-256; nothing was sent. Retry later.",
        );
      if (row.fileSize === null)
        await db
          .update(media)
          .set({ fileSize: bytes.length })
          .where(and(eq(media.portalId, portalId), eq(media.id, id), isNull(media.fileSize)));
      const given =
        row.messageId === null
          ? await uploadedFileName(db, deps.keyring, portalId, row.id)
          : await fileNameOf(db, deps.keyring, portalId, row.messageId);
      const fileName = safeFileName(given, row.id, row.mimeType);
      return {
        bytes,
        contentType: contentTypeOf(row.mimeType),
        fileName,
        contentDisposition: attachmentHeader(fileName),
      };
    },
  };
}

/**
 * The file name the person's phone gave a document, from its message's sealed content; undefined
 * when there is none (another type, content expired or erased).
 */
async function fileNameOf(
  db: Database,
  keyring: ContentKeyring,
  portalId: number,
  messageId: string,
): Promise<string | undefined> {
  const [message] = await db
    .select({ content: messages.content })
    .from(messages)
    .where(
      and(
        eq(messages.portalId, portalId),
        eq(messages.id, messageId),
        eq(messages.direction, 'inbound'),
      ),
    );
  const content = openContent<StoredInboundContent>(
    keyring,
    portalId,
    messageId,
    message?.content ?? null,
  );
  return content !== null && 'media' in content ? content.media.filename : undefined;
}

function tooLarge(): AppError {
  return new AppError(
    'media_too_large',
    'The medium is larger than this service serves (MESSAGING_MEDIA_MAX_BYTES).',
  );
}

/**
 * A failed fetch, for the client: the provider no longer has the medium (Graph code 100 on the
 * lookup, or HTTP 404/410 from the download URL) → 410 `media_gone`; everything else as any
 * provider failure (`providerAppError`).
 */
function mediaAppError(err: unknown): unknown {
  if (err instanceof ConnectionInactiveError) return providerAppError(err);
  if (
    err instanceof ProviderError &&
    (err.graphCode === 100 || err.httpStatus === 404 || err.httpStatus === 410)
  )
    return new AppError(
      'media_gone',
      'The provider no longer has this medium; ask the person to send it again.',
      { cause: err },
    );
  return providerAppError(err);
}
