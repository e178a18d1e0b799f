import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { test } from 'node:test';
import {
  apiTokenHint,
  generateApiToken,
  hashApiToken,
  isWellFormedApiToken,
  TOKEN_LENGTH,
} from '../../src/accounts/api-token.ts';

test('shape: ptk_ + 43 base62 + 6 base62 checksum; every token different', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const token = generateApiToken();
    assert.equal(token.length, TOKEN_LENGTH);
    assert.match(token, /^ptk_[0-9A-Za-z]{49}$/);
    assert.ok(isWellFormedApiToken(token));
    seen.add(token);
  }
  assert.equal(seen.size, 500);
});

test('the checksum is the CRC32 of prefix + random part, in base62 (independent check)', () => {
  const token = generateApiToken();
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  const decoded = [...token.slice(-6)].reduce((n, ch) => n * 62 + alphabet.indexOf(ch), 0);
  assert.equal(decoded, crc32(token.slice(0, -6)));
});

test('any single-character change is caught by the checksum or the shape', () => {
  const token = generateApiToken();
  for (let i = 0; i < token.length; i++) {
    const ch = token[i] === 'x' ? 'y' : 'x';
    assert.equal(
      isWellFormedApiToken(token.slice(0, i) + ch + token.slice(i + 1)),
      false,
      `position ${i}`,
    );
  }
  for (const bad of [
    '',
    'ptk_',
    token + 'a',
    token.slice(1),
    ` ${token}`,
    token.replace('ptk_', 'PTK_'),
  ]) {
    assert.equal(isWellFormedApiToken(bad), false);
  }
});

test('stored forms: SHA-256 hex and a 4-character hint', () => {
  const token = generateApiToken();
  assert.match(hashApiToken(token), /^[0-9a-f]{64}$/);
  assert.notEqual(hashApiToken(token), hashApiToken(generateApiToken()));
  assert.equal(apiTokenHint(token), token.slice(-4));
});
