/**
 * Key rotation (`keys rotate`, `keys check`): every sealed value of the database (the registry in
 * db/sealed-columns.ts: provider tokens, webhook secrets, message content, media file names,
 * webhook event data, drafts) re-sealed under the keyring's active key, in batches, with one
 * audit event per run.
 *
 * @see docs/how-to/rotate-keys.md
 */
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import {
  countKeyUses,
  resealAll,
  type ColumnReseal,
  type KeyUse,
  type ResealResult,
} from '../db/sealing.ts';
import type { Keyring } from '../platform/keyring.ts';

/**
 * Re-seal what is under another key and seal what is still in clear, at most `max` values
 * (all when absent); one `encryption_key.rotated` audit event names the count, the active key
 * and what is left ("re-sealed 1200 value(s) under key k2; 0 left under other keys").
 *
 * @param onProgress called after each batch (counts only).
 * @returns the counts per column and what is left (`remaining`); run again while it is not 0.
 */
export async function rotateKeys(
  db: Database,
  keyring: Keyring,
  actor: Actor,
  options: { max?: number | undefined; onProgress?: (p: ColumnReseal) => void } = {},
): Promise<ResealResult> {
  const result = await resealAll(db, keyring, {
    ...(options.max !== undefined && { max: options.max }),
    ...(options.onProgress && { onProgress: options.onProgress }),
  });
  const done = result.columns.reduce((n, c) => n + c.resealed + c.sealed, 0);
  const unreadable = result.columns.reduce((n, c) => n + c.unreadable, 0);
  await recordAuditEvent(db, {
    portalId: null,
    actor,
    action: 'encryption_key.rotated',
    reason:
      `re-sealed ${done} value(s) under key ${keyring.activeKeyId}; ` +
      `${result.remaining} left under other keys or in clear` +
      (unreadable > 0 ? `; ${unreadable} could not be opened` : ''),
  });
  return result;
}

/** What `keys check` reports: the values per column and key, and which keys may be removed. */
export interface KeyCheck {
  activeKeyId: string;
  uses: (KeyUse & { known: boolean })[];
  /** Listed keys, other than the active one, that no value uses: safe to remove. */
  removable: string[];
  /** Values not under the active key (under an older key, an unknown one, or in clear). */
  remaining: number;
}

/**
 * Count the sealed values per column and key (`keys check`).
 *
 * @returns the uses, whether each key is in the keyring, and the listed keys nothing uses.
 */
export async function checkKeys(db: Database, keyring: Keyring): Promise<KeyCheck> {
  const uses = (await countKeyUses(db)).map((u) => ({
    ...u,
    known: u.keyId !== null && keyring.keyIds.includes(u.keyId),
  }));
  const used = new Set(uses.map((u) => u.keyId));
  return {
    activeKeyId: keyring.activeKeyId,
    uses,
    removable: keyring.keyIds.filter((k) => k !== keyring.activeKeyId && !used.has(k)),
    remaining: uses.filter((u) => u.keyId !== keyring.activeKeyId).reduce((n, u) => n + u.rows, 0),
  };
}
