import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { verifySignedRequest } from '../../src/partner/callbacks/signed-request.ts';

/**
 * Computed outside Node with OpenSSL:
 *   P=$(printf '%s' '{"algorithm":"HMAC-SHA256","issued_at":1700000000,"user_id":"10203040"}' \
 *       | openssl base64 -A | tr '+/' '-_' | tr -d '=')
 *   printf '%s' "$P" | openssl dgst -sha256 -hmac 'portico-test-app-secret' -binary \
 *       | openssl base64 -A | tr '+/' '-_' | tr -d '='
 */
const SECRET = 'portico-test-app-secret';
const VECTOR =
  'efwAh6fPUbGUSremFZgvMGgQ7rYkW3Qjl7S4xh6_Qok.eyJhbGdvcml0aG0iOiJITUFDLVNIQTI1NiIsImlzc3VlZF9hdCI6MTcwMDAwMDAwMCwidXNlcl9pZCI6IjEwMjAzMDQwIn0';
const NOW = { nowS: 1_700_000_100, maxAgeS: 900 };

describe('signed_request verification', () => {
  test('the independently computed vector verifies', () => {
    assert.deepEqual(verifySignedRequest(VECTOR, SECRET, NOW), {
      ok: true,
      userId: '10203040',
      issuedAt: 1_700_000_000,
      // sha256 of the decoded signature (openssl base64 -d | openssl dgst -sha256).
      fingerprint: createHash('sha256')
        .update(Buffer.from(VECTOR.split('.')[0]!, 'base64url'))
        .digest('hex'),
    });
  });

  test('refusals', () => {
    const [sig, payload] = VECTOR.split('.') as [string, string];
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}.${payload}`;
    const cases: [string, string, Record<string, number>, string][] = [
      ['wrong secret', VECTOR, NOW, 'signature'],
      ['flipped signature', flipped, NOW, 'signature'],
      ['stale', VECTOR, { nowS: 1_700_000_000 + 901, maxAgeS: 900 }, 'stale'],
      ['future', VECTOR, { nowS: 1_700_000_000 - 3600, maxAgeS: 900 }, 'future'],
      ['three segments', `${VECTOR}.x`, NOW, 'malformed'],
      ['one segment', payload, NOW, 'malformed'],
      ['empty', '', NOW, 'malformed'],
      ['not base64url', `${sig}.${payload}!`, NOW, 'malformed'],
      ['huge', `${sig}.${'A'.repeat(10_000)}`, NOW, 'malformed'],
    ];
    for (const [name, input, now, reason] of cases) {
      const secret = name === 'wrong secret' ? 'another-secret' : SECRET;
      assert.deepEqual(
        verifySignedRequest(input, secret, now as typeof NOW),
        { ok: false, reason },
        name,
      );
    }
  });

  test('only the canonical encoding of the signature is accepted', () => {
    const [sig, payload] = VECTOR.split('.') as [string, string];
    const bytes = Buffer.from(sig, 'base64url');
    assert.equal(bytes.toString('base64url'), sig, 'the vector itself is canonical');
    // 32 bytes = 43 characters; the last one carries 4 bits and 2 unused low bits.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(sig.slice(-1));
    const respellings = [1, 2, 3].map((low) => `${sig.slice(0, -1)}${alphabet[last | low]}`);
    const variants = [`${sig}=`, `${sig}==`, ...respellings];
    for (const variant of variants) {
      assert.deepEqual(
        Buffer.from(variant, 'base64url'),
        bytes,
        `${variant} decodes to the same bytes`,
      );
      assert.deepEqual(
        verifySignedRequest(`${variant}.${payload}`, SECRET, NOW),
        { ok: false, reason: 'malformed' },
        variant,
      );
    }
  });
});
