/**
 * What the Cloud API accepts as a medium to send, by kind: the mime types and the largest size
 * of each (its table of supported media types), and which kind a detected type is. Pure.
 *
 * Sizes are in bytes, decimal (1 MB = 1,000,000 bytes, 1 KB = 1,000): the provider states its
 * limits in MB and KB, and the smaller reading never lets through a file it refuses.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types
 * @see docs/decisions/0030-media-upload.md
 */
import type { MEDIA_KINDS } from '../../db/schema/conversations.ts';

export type MediaKind = (typeof MEDIA_KINDS)[number];

const MB = 1_000_000;
const KB = 1_000;

/** The largest medium of each kind, in bytes, and how a refusal names it. */
const KIND_LIMITS: Readonly<Record<MediaKind, { bytes: number; words: string }>> = {
  image: { bytes: 5 * MB, words: 'images are limited to 5 MB' },
  video: { bytes: 16 * MB, words: 'videos are limited to 16 MB' },
  audio: { bytes: 16 * MB, words: 'audio files are limited to 16 MB' },
  document: { bytes: 100 * MB, words: 'documents are limited to 100 MB' },
  sticker: { bytes: 500 * KB, words: 'animated stickers are limited to 500 KB' },
};

/** A static sticker (WebP without animation) is smaller still. */
const STATIC_STICKER = { bytes: 100 * KB, words: 'static stickers are limited to 100 KB' };

/** The most bytes any medium has: an upload is cut off past it. */
export const MAX_MEDIUM_BYTES = Math.max(...Object.values(KIND_LIMITS).map((l) => l.bytes));

/**
 * Each accepted type as the file-type library names it, mapped to the Cloud API's type and kind.
 * `audio/x-m4a` is MPEG-4 audio (`audio/mp4`); Ogg only with the Opus codec.
 */
const BY_DETECTED: Readonly<Record<string, { mimeType: string; kind: MediaKind }>> = {
  'image/jpeg': { mimeType: 'image/jpeg', kind: 'image' },
  'image/png': { mimeType: 'image/png', kind: 'image' },
  'video/mp4': { mimeType: 'video/mp4', kind: 'video' },
  'video/3gpp': { mimeType: 'video/3gpp', kind: 'video' },
  'audio/aac': { mimeType: 'audio/aac', kind: 'audio' },
  'audio/amr': { mimeType: 'audio/amr', kind: 'audio' },
  'audio/mpeg': { mimeType: 'audio/mpeg', kind: 'audio' },
  'audio/mp4': { mimeType: 'audio/mp4', kind: 'audio' },
  'audio/x-m4a': { mimeType: 'audio/mp4', kind: 'audio' },
  'audio/ogg; codecs=opus': { mimeType: 'audio/ogg', kind: 'audio' },
  'application/pdf': { mimeType: 'application/pdf', kind: 'document' },
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': {
    mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    kind: 'document',
  },
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': {
    mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    kind: 'document',
  },
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': {
    mimeType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    kind: 'document',
  },
  'image/webp': { mimeType: 'image/webp', kind: 'sticker' },
};

/**
 * The legacy Office formats share one container (OLE compound file, `application/x-cfb`): the
 * content says "an Office file", the name's extension says which.
 */
const CFB_BY_EXTENSION: Readonly<Record<string, string>> = {
  doc: 'application/msword',
  xls: 'application/vnd.ms-excel',
  ppt: 'application/vnd.ms-powerpoint',
};

/** What a file is to the Cloud API: its type and kind; or the reason it is not accepted. */
type Classified =
  { ok: true; mimeType: string; kind: MediaKind } | { ok: false; detected: string | undefined };

/**
 * Classify a file by its content.
 *
 * @param detected the mime type file-type found in the bytes; undefined when it found none.
 * @param fileName the uploaded name (only to tell the legacy Office formats apart).
 * @param plainText whether the bytes are UTF-8 text without control characters other than tab,
 *   line feed, form feed and carriage return (then, without a signature, `text/plain`).
 */
export function classify(
  detected: string | undefined,
  fileName: string,
  plainText: boolean,
): Classified {
  if (detected === undefined)
    return plainText
      ? { ok: true, mimeType: 'text/plain', kind: 'document' }
      : { ok: false, detected };
  if (detected === 'application/x-cfb') {
    const ext = /\.([a-z0-9]{1,8})$/i.exec(fileName)?.[1]?.toLowerCase() ?? '';
    const mimeType = CFB_BY_EXTENSION[ext];
    return mimeType ? { ok: true, mimeType, kind: 'document' } : { ok: false, detected };
  }
  const known = BY_DETECTED[detected];
  return known ? { ok: true, ...known } : { ok: false, detected };
}

/**
 * The limit a medium of `kind` is held to; a sticker's depends on whether it is animated.
 *
 * @param head the first bytes of the file (for a WebP's animation flag).
 */
export function limitOf(kind: MediaKind, head: Uint8Array): { bytes: number; words: string } {
  if (kind === 'sticker' && !isAnimatedWebp(head)) return STATIC_STICKER;
  return KIND_LIMITS[kind];
}

/**
 * Whether a WebP is animated: an extended header (`VP8X` chunk right after the RIFF header)
 * with its animation flag (bit 1 of the flags byte) set.
 *
 * @see https://developers.google.com/speed/webp/docs/riff_container#extended_file_format
 */
function isAnimatedWebp(head: Uint8Array): boolean {
  const chunk = String.fromCharCode(...head.subarray(12, 16));
  return chunk === 'VP8X' && head.length > 20 && (head[20]! & 0x02) !== 0;
}

/** The Cloud API's accepted types, in words for a refusal and the docs. */
export const ACCEPTED_IN_WORDS =
  'images (JPEG, PNG), videos (MP4, 3GPP), audio (AAC, AMR, MP3, MP4 audio, Ogg Opus), ' +
  'documents (PDF, Word, Excel, PowerPoint, plain text) and stickers (WebP)';
