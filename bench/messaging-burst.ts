/**
 * `BENCH_ONLY=burst` of `npm run bench:messaging`: BENCH_BURST (2,000) sends of a template, all
 * at once, each on a connection of its own, to Portico in its own process on PostgreSQL (pool of
 * BENCH_BURST_POOL, 10, connections; the delivery workers off, so only the accepts compete).
 * Run twice, on a database each: with the API's admission at its defaults, and with bounds no
 * burst reaches (only the pool's own queue then refuses). Reports the distribution of answer times (from the request's start to the whole answer) and of
 * statuses, how many refusals carried `Retry-After`, and whether the database holds exactly the
 * accepted messages (a refusal writes nothing).
 *
 * @see docs/decisions/0061-back-pressure.md
 */
import { request, Agent } from 'node:http';
import pg from 'pg';
import { body, percentile, startServer } from './messaging-accepted.ts';

const BURST = Number(process.env.BENCH_BURST ?? 2000);
const POOL = Number(process.env.BENCH_BURST_POOL ?? 10);

/** One answer: its status, its time in ms, and whether it carried `Retry-After`. */
interface Answer {
  status: number;
  ms: number;
  retryAfter: boolean;
}

/** What `BENCH_ONLY=burst` reports. */
export interface BurstRunResult {
  /** `default`: the API's admission at its defaults; `off`: bounds the burst never reaches. */
  admission: 'default' | 'off';
  sends: number;
  poolSize: number;
  /** Answers per status (`error` for a connection that failed without one). */
  statuses: Record<string, number>;
  /** Refusals (429 / 503) without `Retry-After`. */
  refusalsWithoutRetryAfter: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers later than 1 s. */
  overOneSecond: number;
  /** The server's CPU time (user + system) for the burst, per answer, µs. */
  serverCpuPerAnswerUs: number;
  /** Messages in the database after the burst, against the 202s. */
  storedMessages: number;
  accepted: number;
}

function post(url: URL, agent: Agent, token: string, payload: string, key: string) {
  return new Promise<Answer>((resolve) => {
    const started = performance.now();
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: token,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          'idempotency-key': key,
        },
      },
      (res) => {
        res.resume();
        res.once('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            ms: performance.now() - started,
            retryAfter: res.headers['retry-after'] !== undefined,
          }),
        );
      },
    );
    req.once('error', () =>
      resolve({ status: 0, ms: performance.now() - started, retryAfter: false }),
    );
    req.setTimeout(60_000, () => req.destroy());
    req.end(payload);
  });
}

/**
 * The burst against a server of its own on the database at `dbUrl`; a V8 CPU profile of the
 * server during the burst written to `profile` when given.
 */
export async function burstRun(
  dbUrl: string,
  admission: 'default' | 'off',
  profile?: string,
): Promise<BurstRunResult> {
  const server = await startServer(dbUrl, 'outside', {
    BENCH_WORKERS: '0',
    DATABASE_POOL_SIZE: String(POOL),
    LOG_LEVEL: 'warn',
    // `off`: bounds no burst reaches, so only the pool's own queue (DATABASE_POOL_QUEUE) refuses.
    ...(admission === 'off' ? { API_CONCURRENCY: '10000', API_QUEUE: '100000' } : {}),
  });
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  try {
    const url = new URL(`${server.url}/api/v1/external/messaging/messages`);
    // A few sends first: the server's first requests compile what the burst then reuses.
    for (let i = 0; i < 20; i++)
      await post(url, agent, server.token, body(server.from, i), `warm-${i}`);
    if (profile) await server.ask({ type: 'profile-start' });
    const cpuBefore = await server.cpuMicros();
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        post(url, agent, server.token, body(server.from, 1000 + i), `burst-${i}`),
      ),
    );
    const cpuMicros = (await server.cpuMicros()) - cpuBefore;
    if (profile) await server.ask({ type: 'profile-stop', path: profile });
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    let stored: number;
    try {
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from messages where direction = 'outbound'`,
      );
      stored = rows[0]!.n - 20;
    } finally {
      await db.end();
    }
    const times = answers.map((a) => a.ms).sort((a, b) => a - b);
    const statuses: Record<string, number> = {};
    for (const a of answers) {
      const k = a.status === 0 ? 'error' : String(a.status);
      statuses[k] = (statuses[k] ?? 0) + 1;
    }
    const result: BurstRunResult = {
      admission,
      sends: BURST,
      poolSize: POOL,
      statuses,
      refusalsWithoutRetryAfter: answers.filter(
        (a) => (a.status === 429 || a.status === 503) && !a.retryAfter,
      ).length,
      p50Ms: percentile(times, 50),
      p99Ms: percentile(times, 99),
      maxMs: times.at(-1)!,
      overOneSecond: times.filter((t) => t > 1000).length,
      serverCpuPerAnswerUs: cpuMicros / BURST,
      storedMessages: stored,
      accepted: statuses['202'] ?? 0,
    };
    console.log('burst', JSON.stringify(result));
    return result;
  } finally {
    agent.destroy();
    await server.stop();
  }
}
