/**
 * The sandbox's media: the files people send to a business (a bundled sample or an upload), kept
 * in memory only, bounded by total size (the least recently used go first beyond
 * `MEDIA_CAP_BYTES`), each under a Graph-looking numeric media id, and the short-lived download
 * links `GET /{media-id}` hands out (`/whatsapp_business/attachments/?mid&ext&hash`, like the
 * provider's lookaside URLs; `ext` is the link's expiry in Unix seconds, `hash` a random key the
 * sandbox remembers until it expires).
 *
 * The webhook gives a medium's SHA-256 in base64 and `GET /{media-id}` in hex, as the provider's
 * payloads do; both are of the same bytes.
 *
 * @see https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** Total bytes of media the sandbox keeps before it forgets the least recently used. */
export const MEDIA_CAP_BYTES = 64 * 1024 * 1024;

/** A medium a person sent. */
export interface SandboxMedium {
  /** The media id (digits, as Graph's). */
  id: string;
  mimeType: string;
  bytes: Buffer;
  /** SHA-256 of `bytes`, hex. */
  sha256Hex: string;
  /** SHA-256 of `bytes`, base64 (as the webhook carries it). */
  sha256Base64: string;
  /** The WABA whose number received it (who may fetch it). */
  wabaId: string;
}

/** An issued download link. */
interface MediaLink {
  mediaId: string;
  /** When it stops working, ms on the sandbox clock. */
  expiresAt: number;
}

/** The media and their links; see the file comment. */
export class MediaStore {
  readonly #media: LRUCache<string, SandboxMedium>;
  readonly #links = new Map<string, MediaLink>();

  constructor(capBytes = MEDIA_CAP_BYTES) {
    this.#media = new LRUCache<string, SandboxMedium>({
      maxSize: capBytes,
      sizeCalculation: (m) => Math.max(m.bytes.length, 1),
    });
  }

  /** Keep `bytes` as a new medium of `wabaId`; it, with its id and digests. */
  add(bytes: Buffer, mimeType: string, wabaId: string): SandboxMedium {
    const digest = createHash('sha256').update(bytes).digest();
    const medium: SandboxMedium = {
      id: `${randomInt(100_000_000, 999_999_999)}${randomInt(1_000_000, 9_999_999)}`,
      mimeType,
      bytes,
      sha256Hex: digest.toString('hex'),
      sha256Base64: digest.toString('base64'),
      wabaId,
    };
    this.#media.set(medium.id, medium);
    return medium;
  }

  /** The medium `id`, unless it was deleted or evicted. */
  get(id: string): SandboxMedium | undefined {
    return this.#media.get(id);
  }

  /** Forget a medium (the provider no longer has it); whether it was there. */
  delete(id: string): boolean {
    return this.#media.delete(id);
  }

  /**
   * A new download link for medium `mediaId`, valid `ttlMs` from `nowMs`.
   *
   * @returns the link's query: `mid`, `ext` (expiry, Unix seconds) and `hash`.
   */
  issueLink(mediaId: string, nowMs: number, ttlMs: number) {
    for (const [hash, link] of this.#links) if (link.expiresAt <= nowMs) this.#links.delete(hash);
    const hash = randomBytes(24).toString('base64url');
    const expiresAt = nowMs + ttlMs;
    this.#links.set(hash, { mediaId, expiresAt });
    return { mid: mediaId, ext: String(Math.floor(expiresAt / 1000)), hash };
  }

  /**
   * The medium a link leads to at `nowMs`.
   *
   * @returns the medium; `expired` for a link past its expiry; undefined for an unknown link or
   *   a medium that is gone.
   */
  resolveLink(hash: string, mid: string, nowMs: number): SandboxMedium | 'expired' | undefined {
    const link = this.#links.get(hash);
    if (!link || link.mediaId !== mid) return undefined;
    if (link.expiresAt <= nowMs) {
      this.#links.delete(hash);
      return 'expired';
    }
    return this.#media.get(mid);
  }
}
