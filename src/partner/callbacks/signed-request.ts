/**
 * Verification of the provider's `signed_request` (deauthorize and data-deletion callbacks):
 * `base64url(HMAC-SHA256(app_secret, payloadSegment)) "." payloadSegment`, where the payload
 * segment is `base64url(JSON)` and the HMAC covers the encoded segment, not the decoded JSON.
 *
 * Order: shape → canonical signature encoding → signature (constant time) → only then parse
 * the JSON → `algorithm` → `issued_at` window → `user_id`. Nothing of the input is ever echoed
 * in a result.
 *
 * The signature segment must be the one canonical base64url encoding of its bytes (no `=`
 * padding, the unused low bits of the last character zero): Node's decoder accepts several
 * spellings of the same 32 bytes, and one signature must have exactly one accepted spelling
 * (docs/decisions/0012-provider-callbacks.md).
 *
 * @see docs/partner-connection.md "Callbacks from the provider"
 * @see https://developers.facebook.com/docs/games/gamesonfacebook/login#parsingsr
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Largest `signed_request` accepted, in characters (a real one is a few hundred). */
export const SIGNED_REQUEST_MAX_LENGTH = 4096;
/** Seconds `issued_at` may lie in the future (clock skew between us and the provider). */
export const ISSUED_AT_SKEW_S = 60;

const SEGMENT = /^[A-Za-z0-9_-]+={0,2}$/;

export type SignedRequestResult =
  | {
      ok: true;
      userId: string;
      /** Unix time in seconds when the provider signed it. */
      issuedAt: number;
      /**
       * SHA-256 hex of the verified signature bytes: one value per signed payload, whatever
       * its base64url spelling, to remember which requests were processed.
       */
      fingerprint: string;
    }
  | {
      ok: false;
      /** For logs and tests; never shown to the caller beyond a generic 400. */
      reason: 'malformed' | 'signature' | 'algorithm' | 'stale' | 'future' | 'user';
    };

/**
 * Verify a `signed_request`.
 *
 * @param signedRequest the form field as received: `<signature>.<payload>`, both unpadded
 *   base64url, at most {@link SIGNED_REQUEST_MAX_LENGTH} characters.
 * @param appSecret the provider app secret (HMAC-SHA256 key, UTF-8).
 * @param options.nowS current Unix time in seconds; `maxAgeS` how old `issued_at` may be, in
 *   seconds.
 * @returns `{ ok: true, userId, issuedAt }` or `{ ok: false, reason }`; never throws.
 *   A non-canonical signature encoding (padding, non-zero unused bits) is `malformed`.
 * @see https://datatracker.ietf.org/doc/html/rfc4648#section-3.5 (canonical encoding)
 */
export function verifySignedRequest(
  signedRequest: string,
  appSecret: string,
  options: { nowS: number; maxAgeS: number },
): SignedRequestResult {
  if (signedRequest.length === 0 || signedRequest.length > SIGNED_REQUEST_MAX_LENGTH)
    return { ok: false, reason: 'malformed' };
  const parts = signedRequest.split('.');
  if (parts.length !== 2) return { ok: false, reason: 'malformed' };
  const [signatureSegment, payloadSegment] = parts as [string, string];
  if (!SEGMENT.test(signatureSegment) || !SEGMENT.test(payloadSegment))
    return { ok: false, reason: 'malformed' };
  const signature = Buffer.from(signatureSegment, 'base64url');
  // Re-encode and compare: refuses padding and non-zero unused bits, so a signature has one
  // spelling. The segment is the caller's own input, so this check reveals nothing secret.
  if (signature.toString('base64url') !== signatureSegment)
    return { ok: false, reason: 'malformed' };
  const expected = createHmac('sha256', appSecret).update(payloadSegment, 'ascii').digest();
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected))
    return { ok: false, reason: 'signature' };
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(payloadSegment, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof payload !== 'object' || payload === null) return { ok: false, reason: 'malformed' };
  const { algorithm, issued_at: issuedAt, user_id: userId } = payload as Record<string, unknown>;
  if (algorithm !== 'HMAC-SHA256') return { ok: false, reason: 'algorithm' };
  if (typeof issuedAt !== 'number' || !Number.isInteger(issuedAt))
    return { ok: false, reason: 'malformed' };
  if (issuedAt > options.nowS + ISSUED_AT_SKEW_S) return { ok: false, reason: 'future' };
  if (issuedAt < options.nowS - options.maxAgeS) return { ok: false, reason: 'stale' };
  if (typeof userId !== 'string' || !/^[0-9A-Za-z_-]{1,64}$/.test(userId))
    return { ok: false, reason: 'user' };
  const fingerprint = createHash('sha256').update(signature).digest('hex');
  return { ok: true, userId, issuedAt, fingerprint };
}
