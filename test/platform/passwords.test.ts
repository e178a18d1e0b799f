import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { hashPassword, passwordProblem, verifyPassword } from '../../src/platform/passwords.ts';

describe('passwords (scrypt)', () => {
  test('hash carries its parameters and salt; verify accepts only the password', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    assert.match(a, /^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a, b, 'a fresh salt each time');
    assert.equal(await verifyPassword('correct horse battery staple', a), true);
    assert.equal(await verifyPassword('correct horse battery stapl', a), false);
    assert.equal(await verifyPassword('', a), false);
  });

  test('Unicode is normalised (NFC) so the same text always matches', async () => {
    const hash = await hashPassword('caf\u00e9 au lait pour moi');
    assert.equal(await verifyPassword('cafe\u0301 au lait pour moi', hash), true);
  });

  test('null, malformed or tampered hashes never verify', async () => {
    const good = await hashPassword('correct horse battery staple');
    for (const stored of [
      null,
      '',
      'plain',
      good.replace('$32768$', '$1073741824$'), // absurd cost: refused, not computed
      good.replace('$32768$', '$1000$'), // not a power of two
      good.replace('$8$1$', '$999$1$'),
      good.slice(0, -2),
    ]) {
      assert.equal(
        await verifyPassword('correct horse battery staple', stored),
        false,
        String(stored),
      );
    }
  });

  test('length rules', () => {
    assert.ok(passwordProblem('short'));
    assert.equal(passwordProblem('twelve chars'), null);
    assert.ok(passwordProblem('x'.repeat(1025)));
  });
});
