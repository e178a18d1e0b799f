/**
 * The Cloud API's media calls: what the provider knows of a medium (`GET /{media-id}`: a
 * short-lived download URL, the mime type, the SHA-256 and the size), the download of that URL
 * with the token, and the upload of a business's medium from a file
 * (`POST /{phone-number-id}/media`). Used by cloud-api.ts, inside partner's outbound-call path.
 *
 * Invariants: the token travels only in the `Authorization` header, and only to an `https:` URL
 * or to the Graph base's own origin (the sandbox); redirects are refused; the download URL (it
 * holds the provider's signature of the medium) never appears in an error message; the bytes are
 * read as a stream, counted and hashed as they arrive, and the read stops the moment they pass
 * `maxBytes`; nothing touches a disk. An upload streams its file from the disk (never whole in
 * memory).
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#retrieve-media-url
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#download-media
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#upload-media
 */
import { createHash } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { asNumber, asString, graphCall } from '../graph-call.ts';
import { ProviderError } from '../provider-error.ts';

/** What `GET /{media-id}` says of a medium. */
export interface MediaInfo {
  /** The download URL: valid for 5 minutes, only with the token. Never shown to anyone. */
  url: string;
  mimeType: string;
  /** Lower-case hex SHA-256 of the bytes, as the provider states it; undefined if it does not. */
  sha256: string | undefined;
  /** Bytes, as the provider states it; undefined if it does not. */
  fileSize: number | undefined;
}

/** A finished download: every byte in memory, hashed; or refused for its size. */
export type MediaDownload =
  | {
      ok: true;
      bytes: Buffer;
      /** Lower-case hex SHA-256 of `bytes`, computed here. */
      sha256: string;
      /** The response's `Content-Type` (may carry parameters), when sent. */
      contentType: string | undefined;
    }
  | { ok: false; reason: 'too_large' };

/** A file to upload: on the disk, already checked by the caller. */
export interface MediaFile {
  /** Its path; read as a stream while the request is sent. */
  path: string;
  /** The Cloud API's mime type of it (the multipart `type` field and the part's type). */
  mimeType: string;
  /** The name the part carries. */
  fileName: string;
  /** Bytes. */
  size: number;
}

const GRAPH_ID = /^[0-9]{1,30}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;
/** The slowest transfer an upload is given time for: 1 MB a second, on top of the timeout. */
const UPLOAD_BYTES_PER_SECOND = 1_000_000;

/**
 * Upload `file` for `phoneNumberId` (`POST /{phone-number-id}/media`, multipart:
 * `messaging_product=whatsapp`, `type`, `file`). The deadline is `timeoutMs` plus a second per
 * MB of the file (a transfer of at least 1 MB/s).
 *
 * @returns the provider's media id (valid 30 days).
 * @throws ProviderError only: `other` (before any I/O) for a phone number id that is not a Graph
 *   id; the kinds of `graphCall` (Graph code 100 for a file it does not take); `other` for an
 *   answer without an id.
 */
export async function uploadMedia(
  base: string,
  timeoutMs: number,
  call: { token: string; signal?: AbortSignal | undefined },
  phoneNumberId: string,
  file: MediaFile,
): Promise<{ id: string }> {
  if (!GRAPH_ID.test(phoneNumberId))
    throw new ProviderError('other', 'phone number id is not a Graph id');
  const form = new FormData();
  form.set('messaging_product', 'whatsapp');
  form.set('type', file.mimeType);
  form.set('file', await openAsBlob(file.path, { type: file.mimeType }), file.fileName);
  const deadline = timeoutMs + Math.ceil(file.size / UPLOAD_BYTES_PER_SECOND) * 1000;
  const body = await graphCall(deadline, 'media upload', `${base}/${phoneNumberId}/media`, {
    bearer: call.token,
    form,
    ...(call.signal && { signal: call.signal }),
  });
  const id = asString(body.id);
  if (!id || !GRAPH_ID.test(id))
    throw new ProviderError('other', 'media upload: answered without a media id');
  return { id };
}

/**
 * `GET /{media-id}` with the token.
 *
 * @throws ProviderError only: `other` (before any I/O) for an id that is not a Graph id; Graph's
 *   code 100 (the provider no longer has the medium, or never had it for this token); the kinds
 *   of `graphCall`; `other` for an answer without a URL or mime type.
 */
export async function mediaInfo(
  base: string,
  timeoutMs: number,
  call: { token: string; signal?: AbortSignal | undefined },
  mediaId: string,
): Promise<MediaInfo> {
  if (!GRAPH_ID.test(mediaId)) throw new ProviderError('other', 'media id is not a Graph id');
  const body = await graphCall(timeoutMs, 'media lookup', `${base}/${mediaId}`, {
    bearer: call.token,
    method: 'GET',
    ...(call.signal && { signal: call.signal }),
  });
  const url = asString(body.url);
  const mimeType = asString(body.mime_type);
  if (!url || !mimeType)
    throw new ProviderError('other', 'media lookup: answered without a URL or mime type');
  const sha256 = asString(body.sha256)?.toLowerCase();
  const size = asNumber(body.file_size) ?? asNumber(Number(asString(body.file_size)));
  return {
    url,
    mimeType,
    sha256: sha256 !== undefined && HEX_SHA256.test(sha256) ? sha256 : undefined,
    fileSize: size !== undefined && Number.isSafeInteger(size) && size >= 0 ? size : undefined,
  };
}

/**
 * Download a medium's `url` (from `mediaInfo`) with the token, into memory.
 *
 * @param base the Graph base (`{graph}/{version}`): the one `http:` origin the token may go to.
 * @param timeoutMs the longest wait for the answer's headers, and then between two chunks.
 * @param maxBytes the most bytes read: a declared `Content-Length` above it refuses before the
 *   body is read, and the read stops as soon as the bytes pass it.
 * @returns the bytes and their SHA-256, or `too_large`.
 * @throws ProviderError only: `other` (before any I/O) for a URL the token must not go to;
 *   `unavailable` for a network failure, a timeout or a 5xx; `other` with the HTTP status for
 *   any other failure (404 and 410: the provider no longer has the medium, or the URL expired).
 */
export async function downloadMedia(
  base: string,
  timeoutMs: number,
  call: { token: string; signal?: AbortSignal | undefined },
  url: string,
  maxBytes: number,
): Promise<MediaDownload> {
  if (!mayCarryToken(base, url))
    throw new ProviderError('other', 'media download: the URL is not one the token may go to');
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), timeoutMs);
  const signal = call.signal ? AbortSignal.any([idle.signal, call.signal]) : idle.signal;
  try {
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${call.token}` },
        redirect: 'error',
        signal,
      });
    } catch {
      throw unreachable(idle.signal.aborted, timeoutMs);
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new ProviderError(
        res.status >= 500 ? 'unavailable' : 'other',
        `media download: the provider answered HTTP ${res.status}`,
        { httpStatus: res.status },
      );
    }
    const declared = Number(res.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      return { ok: false, reason: 'too_large' };
    }
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let total = 0;
    const reader = res.body?.getReader();
    try {
      for (;;) {
        const next = reader ? await reader.read() : { done: true as const };
        if (next.done) break;
        const chunk = next.value;
        clearTimeout(timer);
        timer = setTimeout(() => idle.abort(), timeoutMs);
        total += chunk.byteLength;
        if (total > maxBytes) {
          await reader?.cancel().catch(() => undefined);
          return { ok: false, reason: 'too_large' };
        }
        hash.update(chunk);
        chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      }
    } catch {
      throw unreachable(idle.signal.aborted, timeoutMs);
    }
    return {
      ok: true,
      bytes: Buffer.concat(chunks, total),
      sha256: hash.digest('hex'),
      contentType: res.headers.get('content-type') ?? undefined,
    };
  } finally {
    clearTimeout(timer);
  }
}

/** The token goes over `https:` only, or to the Graph base's own origin (the sandbox's `http:`). */
function mayCarryToken(base: string, url: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  if (target.username !== '' || target.password !== '') return false;
  return target.protocol === 'https:' || target.origin === new URL(base).origin;
}

function unreachable(timedOut: boolean, timeoutMs: number): ProviderError {
  return new ProviderError(
    'unavailable',
    timedOut
      ? `media download: the provider sent nothing for ${timeoutMs} ms`
      : 'media download: the provider could not be reached',
  );
}
