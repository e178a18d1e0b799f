/**
 * A value shown to a session exactly once, across a POST-redirect-GET: the POST stashes it,
 * the page it redirects to takes it. It is kept server-side in the session's row (never in a
 * URL or a cookie), sealed with AES-256-GCM under a key derived from the session id. Only the
 * visitor's cookie holds that id (the row keeps its SHA-256), so a copy of the table does not
 * reveal the value; the session's id hash is the additional authenticated data, so a sealed
 * value moved to another row fails to open.
 *
 * @see https://nodejs.org/api/crypto.html#cryptocreatecipherivalgorithm-key-iv-options
 * @see docs/decisions/0009-pages.md
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { sessions } from '../db/schema/index.ts';
import { sha256Hex } from '../platform/crypto.ts';

/** The derivation label: the session id keys this use and no other. */
const LABEL = 'portico one-time secret v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

function keyOf(sessionId: string): Buffer {
  return createHmac('sha256', sessionId).update(LABEL).digest();
}

/** `base64url(iv ‖ tag ‖ ciphertext)` of `value`, bound to the session. */
export function sealForSession(sessionId: string, value: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(sessionId), iv);
  cipher.setAAD(Buffer.from(sha256Hex(sessionId)));
  const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

/** The value sealed by {@link sealForSession} for this session, or null if it does not open. */
export function openForSession(sessionId: string, sealed: string): string | null {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(sessionId), raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(sha256Hex(sessionId)));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([
      decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return null;
  }
}

export interface OneTimeSecrets {
  /** Keep `value` for the session's next {@link OneTimeSecrets.take}, replacing any earlier. */
  stash(sessionId: string, value: string): Promise<void>;
  /**
   * The stashed value, cleared in the same step (compare-and-clear: two concurrent reads get it
   * once between them); null when none is stashed or it was taken already.
   */
  take(sessionId: string): Promise<string | null>;
}

export function createOneTimeSecrets(db: Database): OneTimeSecrets {
  return {
    async stash(sessionId, value) {
      await db
        .update(sessions)
        .set({ oneTimeSecret: sealForSession(sessionId, value) })
        .where(eq(sessions.idHash, sha256Hex(sessionId)));
    },
    async take(sessionId) {
      const idHash = sha256Hex(sessionId);
      const [row] = await db
        .select({ sealed: sessions.oneTimeSecret })
        .from(sessions)
        .where(eq(sessions.idHash, idHash));
      if (!row?.sealed) return null;
      const cleared = await db
        .update(sessions)
        .set({ oneTimeSecret: null })
        .where(and(eq(sessions.idHash, idHash), eq(sessions.oneTimeSecret, row.sealed)))
        .returning({ idHash: sessions.idHash });
      return cleared.length === 1 ? openForSession(sessionId, row.sealed) : null;
    },
  };
}
