/**
 * The keyring that encrypts provider tokens at rest: AES-256-GCM from `node:crypto`, a random
 * 96-bit IV per write, the portal id as additional authenticated data (a ciphertext moved to
 * another tenant's row fails to decrypt), and the key id stored beside the ciphertext so keys
 * can rotate.
 *
 * Keys come from TOKEN_ENCRYPTION_KEYS (`kid:base64key,…`, first active), from
 * TOKEN_ENCRYPTION_KEY_FILE (same entries, one per line or comma-separated), or — in
 * development and test only — from a key file generated on first use at
 * `${DATA_DIR}/keys/token-keys` (mode 0600), beside and never inside the database directory
 * `${DATA_DIR}/pglite`. Never from the database.
 *
 * @see docs/partner-connection.md "Stored connection"
 * @see NIST SP 800-38D (GCM; 96-bit IV, 128-bit tag)
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ALGORITHM = 'aes-256-gcm';
/** Bytes of an AES-256 key. */
export const KEY_BYTES = 32;
/** Bytes of a GCM IV (96 bits, the size GCM is specified for). */
const IV_BYTES = 12;
/** Bytes of the GCM authentication tag (128 bits). */
const TAG_BYTES = 16;
const KID = /^[A-Za-z0-9_-]{1,32}$/;

/** One sealed value: what is stored in the row, base64 text. */
export interface SealedValue {
  ciphertext: string;
  iv: string;
  tag: string;
  keyId: string;
}

/** Thrown when a value cannot be decrypted (tampered, wrong tenant, unknown key). No detail. */
export class DecryptionError extends Error {
  constructor(message = 'The stored value cannot be decrypted.') {
    super(message);
    this.name = 'DecryptionError';
  }
}

/** Thrown when a key specification is malformed. Never contains key material. */
export class KeySpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeySpecError';
  }
}

export interface Keyring {
  /** The key id new values are sealed with (the first key). */
  readonly activeKeyId: string;
  /** Every key id the keyring can open. */
  readonly keyIds: readonly string[];
  /**
   * Seal `plaintext` for `portalId` under the active key.
   *
   * @param portalId bound into the ciphertext as additional authenticated data.
   * @param purpose also bound (default `connection`, the provider token): a value sealed for
   *   one purpose (e.g. `webhook-secret`) never opens as another.
   * @param subject also bound when given (e.g. a message id, 1–128 characters): a value sealed
   *   for one subject never opens as another's.
   */
  seal(plaintext: string, portalId: number, purpose?: SealPurpose, subject?: string): SealedValue;
  /**
   * Open a value sealed for `portalId`.
   *
   * @throws DecryptionError when the tag does not verify (tampered, sealed for another portal)
   *   or the key id is unknown.
   */
  open(sealed: SealedValue, portalId: number, purpose?: SealPurpose, subject?: string): string;
}

/**
 * What a sealed value is: a provider token (`connection`), a webhook signing secret, a
 * message's content (`message-content`, with the message id as its subject), or an outbound
 * webhook event's `data` (`webhook-event`, with the event id as its subject), or a message
 * draft's message and recipients (`message-draft`, with the draft id as its subject), or a
 * phone number's registration PIN (`registration-pin`, with its onboarding row id), or a
 * member's private note in a conversation (`conversation-note`, with the note id), or a
 * campaign's template parameters (`campaign-template`, with the campaign id). Every
 * sealed column is listed in db/sealed-columns.ts, so `keys rotate` re-seals it.
 */
export type SealPurpose =
  | 'connection'
  | 'webhook-secret'
  | 'message-content'
  | 'webhook-event'
  | 'message-draft'
  | 'registration-pin'
  | 'conversation-note'
  | 'campaign-template';

/**
 * The additional authenticated data binding a ciphertext to its tenant, purpose and (when given)
 * subject. A subject is length-prefixed, so no two (purpose, subject) pairs share a text.
 */
function aadFor(portalId: number, purpose: SealPurpose, subject: string | undefined): Buffer {
  const base = `portico:${purpose}:portal:${portalId}`;
  return Buffer.from(
    subject === undefined ? base : `${base}:subject:${subject.length}:${subject}`,
    'utf8',
  );
}

/**
 * Parse `kid:base64key` entries separated by commas or new lines.
 *
 * @throws KeySpecError naming the entry (by position and key id, never its value) that is wrong.
 */
export function parseKeySpec(spec: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  const entries = spec
    .split(/[,\n]/)
    .map((e) => e.trim())
    .filter((e) => e !== '' && !e.startsWith('#'));
  if (entries.length === 0) throw new KeySpecError('no key given');
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const kid = colon === -1 ? '' : entry.slice(0, colon);
    if (!KID.test(kid))
      throw new KeySpecError(
        `key ${index + 1}: expected kid:base64key with a kid of [A-Za-z0-9_-]`,
      );
    const key = Buffer.from(entry.slice(colon + 1), 'base64');
    if (key.length !== KEY_BYTES)
      throw new KeySpecError(
        `key ${kid}: expected ${KEY_BYTES} bytes of base64, got ${key.length}`,
      );
    if (keys.has(kid)) throw new KeySpecError(`key ${kid}: the key id appears twice`);
    keys.set(kid, key);
  });
  return keys;
}

/** A keyring over parsed keys; the first entry of the map is active. */
export function createKeyring(keys: Map<string, Buffer>): Keyring {
  const [first] = keys.keys();
  if (first === undefined) throw new KeySpecError('no key given');
  const activeKeyId = first;
  return {
    activeKeyId,
    keyIds: [...keys.keys()],
    seal(plaintext, portalId, purpose = 'connection', subject) {
      const key = keys.get(activeKeyId)!;
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(aadFor(portalId, purpose, subject));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return {
        ciphertext: ciphertext.toString('base64'),
        iv: iv.toString('base64'),
        tag: cipher.getAuthTag().toString('base64'),
        keyId: activeKeyId,
      };
    },
    open(sealed, portalId, purpose = 'connection', subject) {
      const key = keys.get(sealed.keyId);
      if (!key) throw new DecryptionError('The stored value was sealed with an unknown key.');
      const iv = Buffer.from(sealed.iv, 'base64');
      const tag = Buffer.from(sealed.tag, 'base64');
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new DecryptionError();
      try {
        const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(aadFor(portalId, purpose, subject));
        decipher.setAuthTag(tag);
        return Buffer.concat([
          decipher.update(Buffer.from(sealed.ciphertext, 'base64')),
          decipher.final(),
        ]).toString('utf8');
      } catch (cause) {
        throw Object.assign(new DecryptionError(), { cause });
      }
    },
  };
}

/** Where development and test keep their generated key file: beside the database, not in it. */
export function developmentKeyFilePath(dataDir: string): string {
  return join(dataDir, 'keys', 'token-keys');
}

/**
 * The keyring for a configuration.
 *
 * Order: TOKEN_ENCRYPTION_KEYS; else TOKEN_ENCRYPTION_KEY_FILE (must exist); else, outside
 * production only, `${DATA_DIR}/keys/token-keys`, generated (one random key, mode 0600) when
 * absent.
 *
 * @throws KeySpecError when the keys are malformed, the key file is missing, or production has
 *   no keys (config already refuses that).
 */
export function loadKeyring(config: {
  TOKEN_ENCRYPTION_KEYS?: string | undefined;
  TOKEN_ENCRYPTION_KEY_FILE?: string | undefined;
  dataDir: string;
  isProduction: boolean;
}): Keyring {
  if (config.TOKEN_ENCRYPTION_KEYS)
    return createKeyring(parseKeySpec(config.TOKEN_ENCRYPTION_KEYS));
  if (config.TOKEN_ENCRYPTION_KEY_FILE) {
    if (!existsSync(config.TOKEN_ENCRYPTION_KEY_FILE))
      throw new KeySpecError('TOKEN_ENCRYPTION_KEY_FILE: the file does not exist');
    return createKeyring(parseKeySpec(readFileSync(config.TOKEN_ENCRYPTION_KEY_FILE, 'utf8')));
  }
  if (config.isProduction) throw new KeySpecError('TOKEN_ENCRYPTION_KEYS: required in production');
  const path = developmentKeyFilePath(config.dataDir);
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const kid = `dev${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`;
    try {
      // 'wx': never overwrite a key file another process created meanwhile.
      writeFileSync(path, `${kid}:${randomBytes(KEY_BYTES).toString('base64')}\n`, {
        mode: 0o600,
        flag: 'wx',
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    chmodSync(path, 0o600);
  }
  return createKeyring(parseKeySpec(readFileSync(path, 'utf8')));
}

/** A fresh `kid:base64key` entry (for operators: `keys generate`-style use and tests). */
export function generateKeyEntry(kid: string): string {
  if (!KID.test(kid)) throw new KeySpecError('key id: expected [A-Za-z0-9_-]{1,32}');
  return `${kid}:${randomBytes(KEY_BYTES).toString('base64')}`;
}
