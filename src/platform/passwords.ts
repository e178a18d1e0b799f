/**
 * Password hashing with scrypt from `node:crypto`. The stored form carries its own parameters
 * and salt, so the cost can be raised later without invalidating existing hashes:
 *
 *     scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>
 *
 * @see https://www.rfc-editor.org/rfc/rfc7914 (scrypt)
 * @see https://www.rfc-editor.org/rfc/rfc7914 (scrypt)
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Cost parameters for new hashes (N=2^15, r=8, p=1: ~32 MiB, OWASP's scrypt minimum or above). */
const COST = { N: 2 ** 15, r: 8, p: 1 } as const;
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/** Shortest and longest password accepted (characters). Longer inputs are refused, not cut. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

const ENCODED =
  /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{16,64})\$([A-Za-z0-9_-]{16,128})$/;

function derive(password: string, salt: Buffer, keylen: number, options: ScryptOptions) {
  return new Promise<Buffer>((resolve, reject) => {
    // maxmem must cover 128 * N * r bytes (plus slack), or node refuses the parameters.
    const maxmem = 256 * (options.N ?? COST.N) * (options.r ?? COST.r);
    scrypt(password.normalize('NFC'), salt, keylen, { ...options, maxmem }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/**
 * Hash a password for storage.
 *
 * @returns `scrypt$N$r$p$salt$hash` (base64url parts).
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, COST);
  return [
    'scrypt',
    COST.N,
    COST.r,
    COST.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

/**
 * Check a password against a stored hash in constant time (with respect to the hash).
 *
 * @param stored the value of `users.password_hash`; null or malformed → false.
 * @returns true only when the password matches.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (password.length > PASSWORD_MAX_LENGTH) return false;
  const m = stored ? ENCODED.exec(stored) : null;
  if (!m) {
    // Spend the same work as a real check so that "no password set" is not faster.
    await derive(password, randomBytes(SALT_BYTES), KEY_BYTES, COST);
    return false;
  }
  const [, n, r, p, salt, hash] = m;
  const N = Number(n);
  // Refuse parameters we would never write (a tampered row must not make us burn memory).
  if (!Number.isInteger(Math.log2(N)) || N < 2 ** 14 || N > 2 ** 20) return false;
  if (Number(r) < 1 || Number(r) > 32 || Number(p) < 1 || Number(p) > 16) return false;
  const expected = Buffer.from(hash!, 'base64url');
  // scrypt's output for a shorter length is a prefix of the longer one: insist on the full key.
  if (expected.length !== KEY_BYTES) return false;
  const actual = await derive(password, Buffer.from(salt!, 'base64url'), KEY_BYTES, {
    N,
    r: Number(r),
    p: Number(p),
  });
  return timingSafeEqual(actual, expected);
}

/**
 * Why a new password is not acceptable, or null when it is.
 */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH)
    return `A password has at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH)
    return `A password has at most ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}
