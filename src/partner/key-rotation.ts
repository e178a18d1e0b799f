/**
 * Key rotation (`keys rotate`): every stored provider token re-sealed under the keyring's active
 * key, then the other features' sealed values (their `KeyRotationStep`s, given at composition:
 * webhooks' signing secrets), with one audit event.
 *
 * @see docs/partner-connection.md "Stored connection"
 */
import { and, eq, isNotNull, ne } from 'drizzle-orm';
import { recordAuditEvent, type Actor } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import { connections } from '../db/schema/index.ts';
import type { Keyring } from '../platform/keyring.ts';
import { sealedColumns } from './connections-store.ts';

/**
 * Re-seal every stored token under the active key (key rotation). Each row is updated only
 * if it still holds the ciphertext that was read, so a concurrent refresh or revocation is
 * never overwritten.
 *
 * @returns how many tokens were re-encrypted.
 */
export async function resealAllTokens(db: Database, keyring: Keyring): Promise<number> {
  const rows = await db
    .select({
      portalId: connections.portalId,
      ciphertext: connections.tokenCiphertext,
      iv: connections.tokenIv,
      tag: connections.tokenTag,
      keyId: connections.keyId,
    })
    .from(connections)
    .where(and(isNotNull(connections.tokenCiphertext), ne(connections.keyId, keyring.activeKeyId)));
  let count = 0;
  for (const row of rows) {
    if (!row.ciphertext || !row.iv || !row.tag || !row.keyId) continue;
    const token = keyring.open(
      { ciphertext: row.ciphertext, iv: row.iv, tag: row.tag, keyId: row.keyId },
      row.portalId,
    );
    const sealed = keyring.seal(token, row.portalId);
    const updated = await db
      .update(connections)
      .set({ ...sealedColumns(sealed) })
      .where(
        and(
          eq(connections.portalId, row.portalId),
          eq(connections.tokenCiphertext, row.ciphertext),
        ),
      )
      .returning({ portalId: connections.portalId });
    count += updated.length;
  }
  return count;
}

/**
 * A feature's own sealed values, re-sealed under the keyring's active key by `keys rotate`.
 *
 * @returns what it re-sealed, in words for the audit reason and the CLI (`webhook secret(s)`),
 *   and how many.
 */
export type KeyRotationStep = (
  db: Database,
  keyring: Keyring,
) => Promise<{ what: string; count: number }>;

/**
 * Re-seal every provider token, then run the steps; one `encryption_key.rotated` audit event
 * names the counts ("re-encrypted 2 provider token(s) and 1 webhook secret(s) under key k2").
 *
 * @returns the provider tokens re-sealed, the steps' counts (`also`) and the active key id.
 */
export async function rotateKeys(
  db: Database,
  keyring: Keyring,
  steps: readonly KeyRotationStep[],
  actor: Actor,
): Promise<{ reencrypted: number; also: { what: string; count: number }[]; activeKeyId: string }> {
  const reencrypted = await resealAllTokens(db, keyring);
  const also = [];
  for (const step of steps) also.push(await step(db, keyring));
  const counts = [`${reencrypted} provider token(s)`, ...also.map((a) => `${a.count} ${a.what}`)];
  await recordAuditEvent(db, {
    portalId: null,
    actor,
    action: 'encryption_key.rotated',
    reason: `re-encrypted ${counts.join(' and ')} under key ${keyring.activeKeyId}`,
  });
  return { reencrypted, also, activeKeyId: keyring.activeKeyId };
}
