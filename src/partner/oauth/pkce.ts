/**
 * PKCE (Proof Key for Code Exchange) with the S256 method: a code verifier kept on the server,
 * its challenge in the authorization request, the verifier in the code exchange. A code stolen
 * on its way back (a leaked callback URL) cannot be redeemed without the verifier.
 *
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.1 (verifier: 43–128 unreserved characters)
 * @see https://www.rfc-editor.org/rfc/rfc7636#section-4.2 (S256 challenge)
 * @see https://www.rfc-editor.org/rfc/rfc9700#section-2.1.1
 */
import { createHash } from 'node:crypto';
import { randomBase64Url } from '../../platform/crypto.ts';

/** Random bytes in a code verifier: 32 bytes are 43 base64url characters (RFC 7636 §4.1). */
export const CODE_VERIFIER_BYTES = 32;

/** `BASE64URL(SHA256(ASCII(code_verifier)))`, the S256 challenge of a verifier. */
export function codeChallengeOf(codeVerifier: string): string {
  return createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
}

/** A fresh verifier (43 base64url characters from node:crypto) and its S256 challenge. */
export function createPkcePair(): { codeVerifier: string; codeChallenge: string } {
  const codeVerifier = randomBase64Url(CODE_VERIFIER_BYTES);
  return { codeVerifier, codeChallenge: codeChallengeOf(codeVerifier) };
}
