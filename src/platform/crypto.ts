/**
 * Small wrappers around `node:crypto` used across features. Nothing here implements a primitive.
 */
import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import baseX from 'base-x';

export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const base62 = baseX(BASE62_ALPHABET);

/** Base62 text of `bytes` random bytes from the CSPRNG. */
export function randomBase62(bytes: number): string {
  return base62.encode(randomBytes(bytes));
}

/** base64url text of `bytes` random bytes from the CSPRNG (RFC 4648 §5, no padding). */
export function randomBase64Url(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * Lower-case hex SHA-256 of a UTF-8 string (64 characters). One-shot `crypto.hash` (Node ≥
 * 20.12): about half the cost of a `Hash` object, and it runs for every API request.
 *
 * @see https://nodejs.org/docs/latest-v20.x/api/crypto.html#cryptohashalgorithm-data-outputencoding
 */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/**
 * Constant-time equality of two strings. Different lengths compare unequal without leaking
 * where they differ: both sides are hashed first so `timingSafeEqual` always sees 32 bytes.
 */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
