/**
 * Usage per API key, recorded off the token check's path: each answered request adds one to an
 * in-memory count (key, UTC day, operation, status class) and notes the key's last use (time
 * and client address); a timer writes what accumulated every `flushMs` in one statement for the
 * counts and one per used key for *last used*. A request never waits for a write.
 *
 * Also here: the audit of refused keys (expired, or used from outside the allow-list), at most
 * one row per key, reason and minute per instance, so that a misconfigured client hammering the
 * API cannot fill the audit log. Nothing here ever sees a secret or its hash.
 *
 * Invariants: counts of a key revoked before the flush are dropped (the insert joins the live
 * keys); *last used* only moves forward; a failed write is logged (no key material) and its
 * counts dropped — usage is an estimate for people, never a bill. Shutdown flushes.
 *
 * @see docs/decisions/0037-api-keys.md
 */
import { sql } from 'drizzle-orm';
import { recordAuditEvent } from '../audit/audit-log.ts';
import type { Database } from '../db/client.ts';
import type { Logger } from '../platform/logger.ts';

/** How often accumulated usage is written, in milliseconds. */
export const KEY_USAGE_FLUSH_MS = 10_000;
/** Refusals of one key for one reason audited at most once per this many milliseconds. */
const REFUSAL_AUDIT_MS = 60_000;
/** Count rows per statement. */
const CHUNK = 500;
/** Distinct counters held before an early flush. */
const MAX_COUNTERS = 50_000;
const DAY_MS = 86_400_000;

/** Why a key was refused. */
export type KeyRefusal = 'expired' | 'ip_not_allowed';

export interface KeyUsage {
  /**
   * Count one answered request of key `keyId`: `operation` as `GET /auth/verify`, `status` the
   * HTTP status sent, `address` the client address. Returns at once.
   */
  record(keyId: number, operation: string, status: number, address: string): void;
  /** Audit a refusal (throttled; see the module comment). Returns at once. */
  refused(
    key: { portalId: number; keyId: number; keyName: string },
    reason: KeyRefusal,
    address: string,
    requestId: string,
  ): void;
  /** Write everything accumulated so far, and wait for every write started (tests, shutdown). */
  settled(): Promise<void>;
  /** Stop the timer and flush. */
  close(): Promise<void>;
}

interface LastUse {
  at: number;
  address: string;
}

export function createKeyUsage(deps: {
  db: Database;
  logger: Logger;
  flushMs?: number;
  now?: () => number;
}): KeyUsage {
  const { db, logger } = deps;
  const now = deps.now ?? Date.now;
  let counts = new Map<string, number>();
  let lastUse = new Map<number, LastUse>();
  const refusalsAudited = new Map<string, number>();
  const pending = new Set<Promise<void>>();

  const track = (work: Promise<unknown>, what: string): void => {
    const done = work
      .then(
        () => undefined,
        (err: unknown) => {
          logger.warn({ error: err instanceof Error ? err.name : typeof err }, what);
        },
      )
      .finally(() => pending.delete(done));
    pending.add(done);
  };

  async function write(c: Map<string, number>, l: Map<number, LastUse>): Promise<void> {
    // Sorted, so that instances flushing at once lock rows in the same order (no deadlock).
    const rows = [...c.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (let i = 0; i < rows.length; i += CHUNK) {
      const values = rows.slice(i, i + CHUNK).map(([key, n]) => {
        const [keyId, day, operation, statusClass] = key.split('\u0000') as [
          string,
          string,
          string,
          string,
        ];
        return sql`(${Number(keyId)}::integer, ${day}::date, ${operation}::text, ${statusClass}::text, ${n}::integer)`;
      });
      await db.execute(sql`
        insert into api_key_usage (key_id, day, operation, status_class, requests)
        select v.key_id, v.day, v.operation, v.status_class, v.requests
        from (values ${sql.join(values, sql`, `)}) as v(key_id, day, operation, status_class, requests)
        where exists (select 1 from api_tokens t where t.id = v.key_id)
        on conflict (key_id, day, operation, status_class)
        do update set requests = api_key_usage.requests + excluded.requests`);
    }
    for (const [keyId, use] of [...l.entries()].sort(([a], [b]) => a - b)) {
      const at = new Date(use.at);
      await db.execute(sql`
        update api_tokens set last_used_at = ${at}, last_used_ip = ${use.address}
        where id = ${keyId} and (last_used_at is null or last_used_at < ${at})`);
    }
  }

  function flush(): void {
    if (counts.size === 0 && lastUse.size === 0) return;
    const c = counts;
    const l = lastUse;
    counts = new Map();
    lastUse = new Map();
    track(write(c, l), 'could not record API key usage');
  }

  const timer = setInterval(flush, deps.flushMs ?? KEY_USAGE_FLUSH_MS);
  timer.unref();

  return {
    record(keyId, operation, status, address) {
      const t = now();
      const day = new Date(t - (t % DAY_MS)).toISOString().slice(0, 10);
      const key = `${keyId}\u0000${day}\u0000${operation}\u0000${Math.floor(status / 100)}xx`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      const last = lastUse.get(keyId);
      if (last) {
        last.at = t;
        last.address = address;
      } else lastUse.set(keyId, { at: t, address });
      if (counts.size >= MAX_COUNTERS) flush();
    },

    refused(key, reason, address, requestId) {
      const t = now();
      const throttle = `${key.keyId}:${reason}`;
      const last = refusalsAudited.get(throttle);
      if (last !== undefined && t - last < REFUSAL_AUDIT_MS) return;
      if (refusalsAudited.size >= 10_000) refusalsAudited.clear();
      refusalsAudited.set(throttle, t);
      const why =
        reason === 'expired'
          ? 'the key has expired'
          : `request from ${address}, outside the key's allowed addresses`;
      track(
        recordAuditEvent(db, {
          portalId: key.portalId,
          actor: { type: 'system', id: 'api' },
          action: 'api_key.refused',
          reason: `API key ${key.keyId} (${key.keyName}) refused: ${why}`,
          requestId,
        }),
        'could not audit a refused API key',
      );
    },

    async settled() {
      flush();
      await Promise.all([...pending]);
    },

    async close() {
      clearInterval(timer);
      flush();
      await Promise.all([...pending]);
    },
  };
}
