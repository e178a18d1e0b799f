/**
 * A response body that does not change while the process runs (the API reference page's script,
 * the OpenAPI document), served compressed and with validators: its bytes are made once, each
 * content coding (`br`, `gzip`) is compressed once at its first request and kept, and every
 * representation has its own strong `ETag`, so a conditional request naming it gets 304 without
 * the body. Compressing per request (what `@fastify/compress` does for dynamic answers) would
 * cost about a quarter of a second of CPU for each load of the 3.6 MB script.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-8.8.3 (ETag; one per representation)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.1.2 (If-None-Match, weak comparison)
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-12.5.3 (Accept-Encoding)
 * @see https://www.rfc-editor.org/rfc/rfc9111#section-5.2.2 (Cache-Control)
 * @see docs/decisions/0041-compressed-cached-reference.md
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { Negotiator } from '@fastify/accept-negotiator';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The content codings offered, in the server's order of preference. */
export const CONTENT_CODINGS = ['br', 'gzip'] as const;
type Coding = (typeof CONTENT_CODINGS)[number];

const compressors: Record<Coding, (bytes: Buffer) => Promise<Buffer>> = {
  // Quality 6 of 11: 3.6 MB of script in about 0.6 s once (quality 11 takes 18 s for 10 % less).
  br: (bytes) =>
    promisify(brotliCompress)(bytes, {
      params: {
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_QUALITY]: 6,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }),
  gzip: (bytes) => promisify(gzip)(bytes, { level: 6 }),
};

// No cache of answers: its keys would be whatever headers clients send.
const negotiator = new Negotiator<Coding>({ supportedValues: [...CONTENT_CODINGS] });

export interface CachedBodyOptions {
  /** The `Content-Type` of every representation. */
  contentType: string;
  /** The `Cache-Control` of a 200 and a 304 (of this request: a versioned URL may say more). */
  cacheControl: string | ((request: FastifyRequest) => string);
}

export interface CachedBody {
  /**
   * Answer `request` with the representation its `Accept-Encoding` prefers (or the identity),
   * or 304 when its `If-None-Match` names that representation's `ETag`.
   */
  send(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  /** The identity representation's `ETag` (a quoted SHA-256, base64url). */
  etag(): string;
}

/** Whether an `If-None-Match` list names `etag` (weak comparison: `W/` is ignored) or is `*`. */
function namesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

/**
 * A body made by `produce` at its first use (never again), served by {@link CachedBody.send}.
 *
 * @param produce the bytes (a string is UTF-8); it must return the same bytes whenever called.
 */
export function cachedBody(produce: () => string | Buffer, options: CachedBodyOptions): CachedBody {
  let identity: { bytes: Buffer; hash: string } | undefined;
  const encoded = new Map<Coding, Promise<Buffer>>();
  const source = () => {
    if (!identity) {
      const made = produce();
      const bytes = typeof made === 'string' ? Buffer.from(made, 'utf8') : made;
      identity = { bytes, hash: createHash('sha256').update(bytes).digest('base64url') };
    }
    return identity;
  };
  const etag = () => `"${source().hash}"`;

  return {
    etag,
    async send(request, reply) {
      const { bytes, hash } = source();
      const coding = negotiator.negotiate(request.headers['accept-encoding'] ?? '');
      const tag = coding ? `"${hash}-${coding}"` : `"${hash}"`;
      reply
        .header('vary', 'accept-encoding')
        .header('etag', tag)
        .header(
          'cache-control',
          typeof options.cacheControl === 'string'
            ? options.cacheControl
            : options.cacheControl(request),
        );
      if (namesEtag(request.headers['if-none-match'], tag)) return reply.code(304).send();
      reply.header('content-type', options.contentType);
      if (!coding) return reply.send(bytes);
      let body = encoded.get(coding);
      if (!body) {
        body = compressors[coding](bytes);
        encoded.set(coding, body);
        // A failed compression is not kept: the next request tries again.
        body.catch(() => encoded.delete(coding));
      }
      return reply.header('content-encoding', coding).send(await body);
    },
  };
}

/**
 * `@fastify/compress`'s options for the contexts that compress their dynamic answers (the
 * external API's JSON, the reference page's HTML): the same codings as {@link cachedBody}, only
 * bodies of 1 KiB or more, and request bodies never decompressed (a compressed request body
 * would slip past the body limit's meaning; clients send JSON as is).
 *
 * @see https://github.com/fastify/fastify-compress#readme
 */
export const RESPONSE_COMPRESSION = {
  encodings: [...CONTENT_CODINGS],
  threshold: 1024,
  globalDecompression: false,
};
