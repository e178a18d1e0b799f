import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  createKeyring,
  DecryptionError,
  developmentKeyFilePath,
  generateKeyEntry,
  loadKeyring,
  parseKeySpec,
} from '../../src/platform/keyring.ts';

const keyring = () => createKeyring(parseKeySpec(`${generateKeyEntry('a')}`));

describe('keyring (AES-256-GCM, portal id as AAD)', () => {
  test('round-trip; a fresh IV per write; the ciphertext is not the plaintext', () => {
    const k = keyring();
    const token = `EAAG${randomBytes(40).toString('base64url')}`;
    const one = k.seal(token, 7);
    const two = k.seal(token, 7);
    assert.equal(k.open(one, 7), token);
    assert.notEqual(one.iv, two.iv);
    assert.notEqual(one.ciphertext, two.ciphertext);
    assert.equal(Buffer.from(one.iv, 'base64').length, 12);
    assert.equal(Buffer.from(one.tag, 'base64').length, 16);
    assert.equal(one.keyId, 'a');
    assert.ok(
      !one.ciphertext.includes(token) &&
        !Buffer.from(one.ciphertext, 'base64').toString('utf8').includes(token),
    );
  });

  test('a value sealed for one purpose never opens as another (webhook secret vs token)', () => {
    const k = keyring();
    const secret = k.seal('whsec_x', 3, 'webhook-secret');
    assert.equal(k.open(secret, 3, 'webhook-secret'), 'whsec_x');
    assert.throws(() => k.open(secret, 3), DecryptionError);
    assert.throws(() => k.open(k.seal('token', 3), 3, 'webhook-secret'), DecryptionError);
  });

  test('a tampered ciphertext, IV or tag fails to decrypt', () => {
    const k = keyring();
    const sealed = k.seal('secret-token', 1);
    const flip = (b64: string) => {
      const b = Buffer.from(b64, 'base64');
      b[0] = b[0]! ^ 1;
      return b.toString('base64');
    };
    for (const bad of [
      { ...sealed, ciphertext: flip(sealed.ciphertext) },
      { ...sealed, iv: flip(sealed.iv) },
      { ...sealed, tag: flip(sealed.tag) },
      { ...sealed, tag: '' },
      { ...sealed, keyId: 'unknown' },
    ])
      assert.throws(() => k.open(bad, 1), DecryptionError);
  });

  test("a ciphertext moved to another portal's row (wrong AAD) fails to decrypt", () => {
    const k = keyring();
    const sealed = k.seal('portal-a-token', 1);
    assert.throws(() => k.open(sealed, 2), DecryptionError);
  });

  test('rotation: the first key seals; older keys still open', () => {
    const oldEntry = generateKeyEntry('old');
    const old = createKeyring(parseKeySpec(oldEntry));
    const sealed = old.seal('t', 3);
    const rotated = createKeyring(parseKeySpec(`${generateKeyEntry('new')},${oldEntry}`));
    assert.equal(rotated.activeKeyId, 'new');
    assert.equal(rotated.open(sealed, 3), 't');
    assert.equal(rotated.seal('t', 3).keyId, 'new');
  });

  test('development key file: generated once, mode 0600, beside (not inside) the database directory', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'portico-keys-'));
    const config = { dataDir, isProduction: false };
    const first = loadKeyring(config);
    const path = developmentKeyFilePath(dataDir);
    assert.ok(existsSync(path));
    assert.ok(!path.startsWith(join(dataDir, 'pglite')));
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const content = readFileSync(path, 'utf8');
    const second = loadKeyring(config);
    assert.equal(readFileSync(path, 'utf8'), content, 'not regenerated');
    assert.equal(second.open(first.seal('x', 1), 1), 'x');
  });

  test('TOKEN_ENCRYPTION_KEY_FILE and TOKEN_ENCRYPTION_KEYS; production never generates', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portico-keyfile-'));
    const file = join(dir, 'keys');
    writeFileSync(file, `# keys\n${generateKeyEntry('f1')}\n${generateKeyEntry('f0')}\n`);
    assert.equal(
      loadKeyring({ TOKEN_ENCRYPTION_KEY_FILE: file, dataDir: dir, isProduction: true })
        .activeKeyId,
      'f1',
    );
    assert.equal(
      loadKeyring({
        TOKEN_ENCRYPTION_KEYS: generateKeyEntry('e'),
        dataDir: dir,
        isProduction: true,
      }).activeKeyId,
      'e',
    );
    assert.throws(() => loadKeyring({ dataDir: dir, isProduction: true }));
    assert.ok(!existsSync(developmentKeyFilePath(dir)));
  });
});
