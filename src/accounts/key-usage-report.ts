/**
 * The usage report of one API key, from `api_key_usage` (written by key-usage.ts): requests per
 * UTC day by status class, and by operation.
 *
 * @see docs/decisions/0037-api-keys.md
 */
import { and, eq, gte } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { apiKeyUsage } from '../db/schema/index.ts';

/** Most days of usage one read returns. */
export const MAX_USAGE_DAYS = 90;

/** Requests of one day, by status class. */
export interface UsageDay {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  requests: number;
  byStatusClass: { '2xx': number; '3xx': number; '4xx': number; '5xx': number };
}

export interface ApiKeyUsage {
  keyId: number;
  days: UsageDay[];
  /** Requests over the period by operation and status class, busiest first. */
  operations: { operation: string; statusClass: string; requests: number }[];
  lastUsedAt: string | null;
  lastUsedIp: string | null;
}

/**
 * Read a key's usage over `days` days ending today (UTC), one entry per day (0 when unused).
 *
 * @param key the key, already checked to be of the caller's portal.
 * @param now Unix ms.
 */
export async function readKeyUsage(
  db: Database,
  key: { id: number; lastUsedAt: string | null; lastUsedIp: string | null },
  days: number,
  now: number,
): Promise<ApiKeyUsage> {
  const keyId = key.id;
  const today = Math.floor(now / 86_400_000) * 86_400_000;
  const dayList = Array.from({ length: days }, (_, i) =>
    new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
  const rows = await db
    .select({
      day: apiKeyUsage.day,
      operation: apiKeyUsage.operation,
      statusClass: apiKeyUsage.statusClass,
      requests: apiKeyUsage.requests,
    })
    .from(apiKeyUsage)
    .where(and(eq(apiKeyUsage.keyId, keyId), gte(apiKeyUsage.day, dayList[0]!)));
  const byDay = new Map<string, UsageDay>(
    dayList.map((day) => [
      day,
      { day, requests: 0, byStatusClass: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } },
    ]),
  );
  const byOperation = new Map<
    string,
    { operation: string; statusClass: string; requests: number }
  >();
  for (const r of rows) {
    const d = byDay.get(r.day);
    if (!d) continue;
    d.requests += r.requests;
    const cls = r.statusClass as keyof UsageDay['byStatusClass'];
    if (cls in d.byStatusClass) d.byStatusClass[cls] += r.requests;
    const k = `${r.operation} ${r.statusClass}`;
    const o = byOperation.get(k) ?? {
      operation: r.operation,
      statusClass: r.statusClass,
      requests: 0,
    };
    o.requests += r.requests;
    byOperation.set(k, o);
  }
  return {
    keyId,
    days: [...byDay.values()],
    operations: [...byOperation.values()].sort(
      (a, b) => b.requests - a.requests || a.operation.localeCompare(b.operation),
    ),
    lastUsedAt: key.lastUsedAt,
    lastUsedIp: key.lastUsedIp,
  };
}
