/**
 * Key rotation of the stored webhook signing secrets (`keys rotate`, partner/'s
 * `KeyRotationStep`, given in services.ts): every live secret sealed under another key than the
 * keyring's active one is re-sealed under it, so the old key can leave TOKEN_ENCRYPTION_KEYS.
 * A previous secret past its overlap is never opened again and is left as it is.
 *
 * @see docs/webhooks.md "Endpoints"
 */
import { and, eq, gt, isNotNull, ne, or } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { webhookEndpoints } from '../db/schema/index.ts';
import type { Keyring, SealedValue } from '../platform/keyring.ts';
import {
  previousSecretColumns,
  PURPOSE,
  sealedPreviousSecret,
  sealedSecret,
  secretColumns,
} from './webhook-endpoints.ts';

/**
 * Re-seal the secrets (current, and previous while it still signs) that are not under the
 * active key. Each row is updated only if it still holds the current ciphertext that was read,
 * so a concurrent secret rotation is never overwritten.
 *
 * @returns how many endpoints had a secret re-sealed, for the audit reason and the CLI.
 */
export async function resealWebhookSecrets(
  db: Database,
  keyring: Keyring,
  now = new Date(),
): Promise<{ what: string; count: number }> {
  const active = keyring.activeKeyId;
  const t = webhookEndpoints;
  const previousLive = and(isNotNull(t.previousSecretKeyId), gt(t.previousSecretExpiresAt, now));
  const rows = await db
    .select()
    .from(t)
    .where(or(ne(t.secretKeyId, active), and(previousLive, ne(t.previousSecretKeyId, active))));
  const reseal = (value: SealedValue, portalId: number) =>
    keyring.seal(keyring.open(value, portalId, PURPOSE), portalId, PURPOSE);
  let count = 0;
  for (const row of rows) {
    const current = sealedSecret(row);
    const previous = sealedPreviousSecret(row, now.getTime());
    const changes = {
      ...(current.keyId !== active && secretColumns(reseal(current, row.portalId))),
      ...(previous &&
        previous.keyId !== active &&
        previousSecretColumns(reseal(previous, row.portalId))),
    };
    if (Object.keys(changes).length === 0) continue;
    const updated = await db
      .update(t)
      .set(changes)
      .where(and(eq(t.id, row.id), eq(t.secretCiphertext, row.secretCiphertext)))
      .returning({ id: t.id });
    count += updated.length;
  }
  return { what: 'webhook secret(s)', count };
}
