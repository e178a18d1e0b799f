/**
 * An uploaded file, received as a stream into a temporary file and checked by its content: the
 * bytes are counted as they arrive and the read stops the moment they pass the limit of the kind
 * the first bytes show (or, before that is known, the largest limit of all: 100 MB); then the
 * file-type library reads the file's signature, and the Cloud API's table decides
 * (media-kinds.ts). A file without a signature is a plain-text document when its bytes are UTF-8
 * without control characters. The name the client gave is never used to decide what a file is,
 * except to tell the legacy Office formats apart (one container for the three).
 *
 * Invariants: no more than one chunk and the first 64 KiB are in memory at once; the temporary
 * file is deleted when the caller disposes of the medium, and at once on any refusal.
 *
 * @see docs/decisions/0030-media-upload.md
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media#supported-media-types
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileTypeFromBuffer, fileTypeFromFile } from 'file-type';
import { AppError } from '../../platform/errors.ts';
import {
  ACCEPTED_IN_WORDS,
  classify,
  limitOf,
  MAX_MEDIUM_BYTES,
  type MediaKind,
} from './media-kinds.ts';

/** The first bytes kept to sniff the kind early (and a WebP's animation flag). */
const HEAD_BYTES = 64 * 1024;
/** C0 controls other than tab, line feed, form feed and carriage return; and DEL. */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const CONTROL = /[\u0000-\u0008\u000B\u000E-\u001F\u007F]/;

/** A received, accepted medium in a temporary file; `dispose` deletes it. */
export interface ReceivedMedium {
  path: string;
  /** Bytes. */
  size: number;
  /** The Cloud API's mime type of its content. */
  mimeType: string;
  kind: MediaKind;
  dispose(): Promise<void>;
}

/** What the stream showed: its size, its first bytes, and whether it is plain UTF-8 text. */
interface Counted {
  size: number;
  head: Buffer;
  plainText: boolean;
}

/**
 * Receive `stream` (the multipart part's bytes) into a temporary file and check it.
 *
 * @param fileName the client's name for the file (for the legacy Office formats only).
 * @throws AppError `invalid_request` (an empty file), `media_too_large` (422: over its kind's
 *   limit, named in the message; the read stops there), `unsupported_media_type` (415: a type
 *   the Cloud API does not take, whatever the name says).
 */
export async function receiveMedium(stream: Readable, fileName: string): Promise<ReceivedMedium> {
  const dir = await mkdtemp(join(tmpdir(), 'portico-upload-'));
  const dispose = () => rm(dir, { recursive: true, force: true });
  try {
    const path = join(dir, 'medium');
    const counted = await countInto(stream, path);
    if (counted.size === 0)
      throw new AppError('invalid_request', 'The file is empty.', {
        details: [{ field: 'body.file', message: 'is empty' }],
      });
    const detected = (await fileTypeFromFile(path))?.mime;
    const found = classify(detected, fileName, counted.plainText);
    if (!found.ok) throw unsupported();
    const limit = limitOf(found.kind, counted.head);
    if (counted.size > limit.bytes) throw tooLarge(limit.words);
    return { path, size: counted.size, mimeType: found.mimeType, kind: found.kind, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/**
 * Write `stream` to `path`, counting, keeping the head, and checking UTF-8 as it goes; stop with
 * `media_too_large` past the limit (the largest, until the head names a kind).
 */
async function countInto(stream: Readable, path: string): Promise<Counted> {
  let size = 0;
  let limit: { bytes: number; words: string } = {
    bytes: MAX_MEDIUM_BYTES,
    words: `no medium is over ${MAX_MEDIUM_BYTES / 1_000_000} MB (documents)`,
  };
  const headChunks: Buffer[] = [];
  let headSize = 0;
  let sniffed = false;
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let plainText = true;
  const text = (chunk?: Buffer) => {
    if (!plainText) return;
    try {
      const decoded = chunk ? utf8.decode(chunk, { stream: true }) : utf8.decode();
      if (CONTROL.test(decoded)) plainText = false;
    } catch {
      plainText = false;
    }
  };
  const head = () => Buffer.concat(headChunks, headSize);
  /** Once the head is in: the limit of the kind its signature shows, if it shows one. */
  const sniff = async () => {
    sniffed = true;
    const kind = classify((await fileTypeFromBuffer(head()))?.mime, '', false);
    if (kind.ok && kind.kind !== 'document') limit = limitOf(kind.kind, head());
  };
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (headSize < HEAD_BYTES) {
        const part = chunk.subarray(0, HEAD_BYTES - headSize);
        headChunks.push(part);
        headSize += part.length;
      }
      text(chunk);
      const check = () => (size > limit.bytes ? done(tooLarge(limit.words)) : done(null, chunk));
      if (!sniffed && headSize >= HEAD_BYTES) sniff().then(check, done);
      else check();
    },
    flush(done) {
      text();
      done();
    },
  });
  // Piped (not in the pipeline) so that a refusal leaves the part readable: the rest of it is
  // read and dropped (the multipart limit bounds it), the request ends, and the client reads the
  // refusal instead of waiting on a body nobody reads.
  stream.on('error', (err) => counter.destroy(err));
  stream.pipe(counter);
  try {
    await pipeline(counter, createWriteStream(path));
  } catch (err) {
    stream.unpipe(counter);
    stream.resume();
    throw err;
  }
  return { size, head: head(), plainText };
}

function tooLarge(words: string): AppError {
  return new AppError('media_too_large', `The file is too large: ${words}.`);
}

function unsupported(): AppError {
  return new AppError(
    'unsupported_media_type',
    `The file's content is not a type WhatsApp sends; it takes ${ACCEPTED_IN_WORDS}. ` +
      'The type is read from the content, not from the file name.',
  );
}
