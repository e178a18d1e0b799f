/**
 * How an inbound medium is named and typed on its way to a client: the `Content-Type` (the
 * webhook's mime type when it is one, else `application/octet-stream`) and the
 * `Content-Disposition: attachment` header (the `content-disposition` library) with a safe file
 * name: the person's document name reduced to one harmless path segment, or the medium's id with
 * the extension of its mime type. Pure.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types
 * @see https://www.rfc-editor.org/rfc/rfc6266 (Content-Disposition)
 * @see docs/messaging.md "Media"
 */
import { create as contentDisposition } from 'content-disposition';

/**
 * The extension of each media type the Cloud API accepts (its table of supported types), without
 * parameters; any other type downloads as `.bin`.
 */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'audio/aac': '.aac',
  'audio/amr': '.amr',
  'audio/mpeg': '.mp3',
  'audio/mp4': '.m4a',
  'audio/ogg': '.ogg',
  'text/plain': '.txt',
  'application/pdf': '.pdf',
  'application/msword': '.doc',
  'application/vnd.ms-excel': '.xls',
  'application/vnd.ms-powerpoint': '.ppt',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': '.docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': '.xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': '.pptx',
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'image/webp': '.webp',
  'video/3gpp': '.3gp',
  'video/mp4': '.mp4',
};

/** `type/subtype` and optional `; name=value` parameters of plain tokens (RFC 9110 §8.3.1). */
const MIME_TYPE =
  /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;\s*[a-z0-9_-]{1,32}=[a-z0-9_.+-]{1,64}){0,4}$/i;
/** Control (Cc), format and bidirectional characters, and path separators: never in a name. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}/\\:*?"<>|]/gu;
/** Most characters (code points) kept of a person's file name, the extension included. */
const MAX_NAME = 150;

/** The `Content-Type` to send: the stored mime type when well-formed, else octet-stream. */
export function contentTypeOf(mimeType: string): string {
  return MIME_TYPE.test(mimeType) ? mimeType : 'application/octet-stream';
}

/** The extension of a mime type (parameters ignored), `.bin` for one the table lacks. */
function extensionOf(mimeType: string): string {
  const bare = mimeType.split(';')[0]!.trim().toLowerCase();
  return EXTENSIONS[bare] ?? '.bin';
}

/**
 * The file name a download offers: `filename` (the person's, untrusted) reduced to its last path
 * segment without control, format or reserved characters, leading dots or surrounding spaces,
 * cut to 150 characters keeping its extension; when nothing usable remains (or none was given),
 * `{mediaId}{extension of mimeType}`.
 */
export function safeFileName(
  filename: string | undefined,
  mediaId: string,
  mimeType: string,
): string {
  const fallback = `${mediaId}${extensionOf(mimeType)}`;
  if (filename === undefined) return fallback;
  const segment = filename.split(/[/\\]/).pop() ?? '';
  const cleaned = segment
    .normalize('NFC')
    .replace(UNSAFE, '_')
    .trim()
    .replace(/^[.\s]+/, '');
  if (cleaned === '' || /^_*$/.test(cleaned)) return fallback;
  const chars = [...cleaned];
  if (chars.length <= MAX_NAME) return cleaned;
  const dot = cleaned.lastIndexOf('.');
  const ext = dot > 0 ? [...cleaned.slice(dot)].slice(0, 16).join('') : '';
  return chars.slice(0, MAX_NAME - [...ext].length).join('') + ext;
}

/** `attachment; filename="…"` (plus `filename*` in UTF-8 for a name beyond ASCII). */
export function attachmentHeader(fileName: string): string {
  return contentDisposition(fileName, { type: 'attachment' });
}
