/**
 * Part 4 of `npm run bench:messaging` (see bench/messaging.ts): inbound ingestion on PostgreSQL.
 * Portico runs in a process of its own (bench/messaging-server.ts, the workers on), the sandbox
 * provider in this process, as the real provider is remote. BENCH_INBOUND_IN_FLIGHT (6) senders
 * each call the sandbox's `writeInBatch` back to back for BENCH_DURATION_S (10) seconds: one
 * signed webhook of BENCH_INBOUND_BATCH (100) messages to Portico's `/api/provider/webhooks`,
 * from 2,000 people, mostly texts, with 1 in 20 an image, 1 in 20 a reaction and 1 in 10 a
 * reply (`context.id`) to an earlier message. Then:
 *
 * - messages stored per second: the inbound rows of `messages` at the end ÷ the run's seconds;
 * - the webhook's p50 / p99, ms: each `writeInBatch` call timed (the sandbox making the batch,
 *   signing it, POSTing it, and Portico answering it; Portico answers once stored);
 * - the webhooks Portico answered other than 200;
 * - a sample text row: its content is a sealed value and holds no plaintext body;
 * - the same run's `pgbench` single-insert rate (as many clients as batches in flight, as long).
 */
import pg from 'pg';
import type { InboundInput } from '../src/sandbox-provider/cloud-inbound.ts';
import { percentile, startServer } from './messaging-accepted.ts';
import { pgbenchSingleInserts, type PgbenchResult } from './pgbench.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const IN_FLIGHT = Number(process.env.BENCH_INBOUND_IN_FLIGHT ?? 6);
const BATCH = Number(process.env.BENCH_INBOUND_BATCH ?? 100);
const PEOPLE = 2000;
/** A marker in every text, looked for in a stored row's content. */
const MARKER = 'bench-plaintext-marker';

/** What `inboundRun` returns (the messaging section of docs/performance.md draws it). */
export interface InboundRunResult {
  inFlight: number;
  batchSize: number;
  durationS: number;
  batches: number;
  /** Messages the sandbox wrote in (and Portico was sent). */
  sent: number;
  /** Inbound rows of `messages` at the end. */
  stored: number;
  storedPerSecond: number;
  webhookP50Ms: number;
  webhookP99Ms: number;
  /** Webhook answers by HTTP status (or `error`). */
  answers: Record<string, number>;
  /** A stored text row: sealed (`ciphertext`, `iv`, `tag`, `keyId`) and no plaintext in it. */
  sealedSample: { sealed: boolean; plaintextInRow: boolean };
  pgbenchSingleInserts: PgbenchResult;
}

/** The `i`th message of a batch: a text, an image, a reaction or a reply. */
function input(n: number, earlier: string[]): Omit<InboundInput, 'phoneNumberId'> {
  const from = String(16_505_000_000 + (n % PEOPLE));
  const name = `Person ${n % PEOPLE}`;
  const target = earlier.length > 0 ? earlier[n % earlier.length] : undefined;
  if (n % 20 === 7) return { from, name, message: { type: 'image', image: { caption: 'photo' } } };
  if (n % 20 === 13 && target)
    return {
      from,
      name,
      message: { type: 'reaction', reaction: { message_id: target, emoji: '👍' } },
    };
  if (n % 10 === 3 && target)
    return {
      from,
      name,
      message: { type: 'text', text: { body: `${MARKER} reply ${n}` }, context: { id: target } },
    };
  return { from, name, text: `${MARKER} message ${n}` };
}

/** Run the part on the (throwaway) database at `dbUrl`. */
export async function inboundRun(dbUrl: string): Promise<InboundRunResult> {
  const server = await startServer(dbUrl, 'outside');
  let stopped = false;
  try {
    const sandbox = server.sandbox!;
    const latencies: number[] = [];
    const answers: Record<string, number> = {};
    const earlier: string[] = [];
    let next = 0;
    let batches = 0;
    const started = performance.now();
    const until = started + DURATION_S * 1000;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() < until) {
          const inputs = Array.from({ length: BATCH }, () => input(next++, earlier));
          const t0 = performance.now();
          const outcome = await sandbox.cloud.writeInBatch(server.from, inputs);
          latencies.push(performance.now() - t0);
          if (!outcome.ok) throw new Error(`writeInBatch: ${outcome.reason}`);
          batches++;
          for (const d of outcome.deliveries)
            answers[String(d.status)] = (answers[String(d.status)] ?? 0) + 1;
          // A few wamids of each batch for later reactions and replies.
          if (earlier.length < 1000) earlier.push(...outcome.wamids.slice(0, 10));
        }
      }),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    let stored: number;
    let sealedSample: InboundRunResult['sealedSample'];
    try {
      stored = Number(
        (
          await db.query<{ n: string }>(
            "select count(*) as n from messages where direction = 'inbound'",
          )
        ).rows[0]!.n,
      );
      const { rows } = await db.query<{ row: string; content: Record<string, unknown> | null }>(
        `select row_to_json(m)::text as row, content from messages m
         where direction = 'inbound' and type = 'text' limit 1`,
      );
      const content = rows[0]?.content;
      sealedSample = {
        sealed:
          !!content &&
          ['ciphertext', 'iv', 'tag', 'keyId'].every((k) => typeof content[k] === 'string'),
        plaintextInRow: !rows[0] || rows[0].row.includes(MARKER),
      };
    } finally {
      await db.end();
    }
    latencies.sort((a, b) => a - b);
    const sent = batches * BATCH;
    await server.stop();
    stopped = true;
    const inserts = await pgbenchSingleInserts(dbUrl, {
      clients: IN_FLIGHT,
      durationS: DURATION_S,
    });
    return {
      inFlight: IN_FLIGHT,
      batchSize: BATCH,
      durationS: elapsedS,
      batches,
      sent,
      stored,
      storedPerSecond: stored / elapsedS,
      webhookP50Ms: percentile(latencies, 50),
      webhookP99Ms: percentile(latencies, 99),
      answers,
      sealedSample,
      pgbenchSingleInserts: inserts,
    };
  } finally {
    if (!stopped) await server.stop();
  }
}
