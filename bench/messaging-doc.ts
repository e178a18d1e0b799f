/**
 * The messaging section of docs/performance.md, drawn from one `npm run bench:messaging` run's
 * results (bench/messaging.ts): accepted sends per placement of the sandbox with the same run's
 * `pgbench` references, the end-to-end latency, the kill run, and inbound ingestion.
 */
import type { InboundRunResult } from './messaging-inbound.ts';
import { figure, table } from './performance-doc.ts';

interface PgbenchFigure {
  tps?: number;
  missing?: string;
}

/** One placement's accepted run, as messaging-accepted.ts returns it. */
export interface AcceptedRunResult {
  placement: 'inside' | 'outside';
  accepted: { perSecond: number; p50Ms: number; p99Ms: number; serverCpuPerSendUs: number };
  pgbenchSingleInserts: PgbenchFigure;
  ratio: number | null;
  endToEnd?: { messages: number; p50Ms: number; p99Ms: number };
  pgbenchAcceptStatement?: PgbenchFigure;
}

export interface KillRunResult {
  queued: number;
  killedAtSends: number;
  /** Sends answered 503 `unavailable` and retried with the same key. */
  retriedUnavailable: number;
  delivered: number;
  lost: number;
  duplicatedAtProvider: number;
  errorLogLines: number[];
}

const where = (p: AcceptedRunResult['placement']) =>
  p === 'inside' ? "inside the server's process" : 'in a process of its own';
const tps = (r: PgbenchFigure | undefined) =>
  r?.tps === undefined ? `no pgbench: ${r?.missing ?? 'not run'}` : `${figure(r.tps)}/s`;

/** The section's Markdown below the run line (`line`: RunContext.line of the run). */
export function messagingSection(
  line: string,
  accepted: AcceptedRunResult[],
  kill: KillRunResult | undefined,
  inbound?: InboundRunResult,
): string {
  const rows = accepted.map((r) => [
    `sandbox ${where(r.placement)}`,
    `${figure(r.accepted.perSecond)}/s`,
    `${figure(r.accepted.p50Ms)} / ${figure(r.accepted.p99Ms)} ms`,
    `${figure(r.accepted.serverCpuPerSendUs)} µs`,
    tps(r.pgbenchSingleInserts),
    r.ratio === null ? 'n/a' : `${r.ratio.toFixed(3)}×`,
  ]);
  const statement = accepted.find((r) => r.pgbenchAcceptStatement)?.pgbenchAcceptStatement;
  const e2e = accepted.find((r) => r.endToEnd)?.endToEnd;
  return [
    line,
    'PostgreSQL, one portal, 50 connections for 10 s of `POST /messaging/messages` (a template), ' +
      'the delivery workers on; right after each, `pgbench` with 50 clients inserting single rows into a throwaway table for as long.',
    table(
      [
        'placement',
        'accepted',
        'p50 / p99',
        'server CPU per send',
        '`pgbench` inserts',
        'accepted ÷ inserts',
      ],
      rows,
      [false, true, true, true, true, true],
    ),
    ...(statement
      ? [
          `\`pgbench\` running the send's own statement (message, reservation from an escrow block, job) with 50 clients: ${tps(statement)}.`,
        ]
      : []),
    ...(e2e
      ? [
          `202 → \`delivered\`, ${e2e.messages} messages at 20/s (the sandbox reports delivered 400 ms after a send): p50 ${figure(e2e.p50Ms)} ms, p99 ${figure(e2e.p99Ms)} ms.`,
        ]
      : []),
    ...(kill
      ? [
          `${kill.queued.toLocaleString('en-US')} messages to two instances, one killed with SIGKILL at ${kill.killedAtSends.toLocaleString('en-US')} sends: ${kill.delivered.toLocaleString('en-US')} delivered, ${kill.lost} lost, ${kill.duplicatedAtProvider} duplicated at the provider, ${kill.errorLogLines.reduce((a, b) => a + b, 0)} error log lines; ${kill.retriedUnavailable} sends answered 503 and retried with their key.`,
        ]
      : []),
    ...(inbound ? [inboundLine(inbound)] : []),
  ].join('\n\n');
}

/** The inbound ingestion figures, one paragraph and a one-row table. */
function inboundLine(r: InboundRunResult): string {
  return [
    `Inbound (Portico in its own process, the sandbox in the bench's): the sandbox sends signed webhooks of ${r.batchSize} messages (texts, 1 in 20 an image, 1 in 20 a reaction, 1 in 10 a reply), ${r.inFlight} in flight, for ${figure(r.durationS)} s; stored rows counted at the end, each webhook timed from the sandbox; \`pgbench\` with ${r.inFlight} clients inserting single rows right after.`,
    table(
      [
        'messages stored',
        'stored/s',
        'webhook p50 / p99',
        'answers',
        'content sealed',
        '`pgbench` inserts',
      ],
      [
        [
          `${r.stored.toLocaleString('en-US')} of ${r.sent.toLocaleString('en-US')}`,
          `${figure(r.storedPerSecond)}/s`,
          `${figure(r.webhookP50Ms)} / ${figure(r.webhookP99Ms)} ms`,
          Object.entries(r.answers)
            .map(([status, n]) => `${n} × ${status}`)
            .join(', '),
          r.sealedSample.sealed && !r.sealedSample.plaintextInRow ? 'yes' : 'NO',
          tps(r.pgbenchSingleInserts),
        ],
      ],
      [true, true, true, false, false, true],
    ),
  ].join('\n\n');
}
