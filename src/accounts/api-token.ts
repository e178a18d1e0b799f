/**
 * The API token format: `ptk_` + 43 base62 characters (32 random bytes) + a 6-character base62
 * CRC32 checksum of everything before it. 53 characters in all.
 *
 * The checksum rejects typos and garbage without a database read, and lets secret scanners
 * recognise a leaked Portico token. Only the SHA-256 and the last 4 characters are stored.
 *
 * @see docs/reference/external-api.md
 */
import { crc32 } from 'node:zlib';
import { BASE62_ALPHABET, randomBase62, sha256Hex } from '../platform/crypto.ts';

export const TOKEN_PREFIX = 'ptk_';
const RANDOM_LENGTH = 43; // ceil(256 bits / log2(62))
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32
export const TOKEN_LENGTH = TOKEN_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;

/** Matches a token anywhere in a text (for secret scanning); the checksum is checked apart. */
export const TOKEN_PATTERN = new RegExp(
  `${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}`,
  'g',
);
const EXACT = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62_ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A new random token (the only time it exists in clear). */
export function generateApiToken(): string {
  const random = randomBase62(32).padStart(RANDOM_LENGTH, '0');
  const body = TOKEN_PREFIX + random;
  return body + checksum(body);
}

/** True when `value` has the token's exact shape and a matching checksum. No I/O. */
export function isWellFormedApiToken(value: string): boolean {
  if (value.length !== TOKEN_LENGTH || !EXACT.test(value)) return false;
  const body = value.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === value.slice(-CHECKSUM_LENGTH);
}

/** The stored form of a token: SHA-256 hex. */
export function hashApiToken(token: string): string {
  return sha256Hex(token);
}

/** The last 4 characters, shown to people to tell tokens apart. */
export function apiTokenHint(token: string): string {
  return token.slice(-4);
}
