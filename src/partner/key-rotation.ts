/**
 * Key rotation of the stored provider tokens: every token re-sealed under the keyring's active
 * key (`keys rotate`).
 *
 * @see docs/partner-connection.md "Stored connection"
 */
import { and, eq, isNotNull, ne } from 'drizzle-orm';
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
