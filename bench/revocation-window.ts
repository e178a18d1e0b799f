/**
 * How long a regenerated token keeps working on ANOTHER instance (`bench:revocation`, and the
 * guard of `npm run bench`).
 *
 * Two app instances (A and B, separate child processes, verification cache on) share one
 * PostgreSQL database. For each trial:
 *
 * 1. B verifies the current token twice, so it is cached there;
 * 2. this process polls B with that token every `pollIntervalMs` (one keep-alive connection);
 * 3. A regenerates the token in-process (its services, as its admin socket or a settings page
 *    would) and reports the monotonic time at which the call returned;
 * 4. A is asked with the old token at once: it must refuse on that first request;
 * 5. the window is the send time of the first poll B refused minus the time A's call returned
 *    (0 when B already refused then: the notification is delivered at commit, before A returns).
 *
 * Clocks: `process.hrtime.bigint()` is CLOCK_MONOTONIC, shared by every process on the machine.
 */
import { Agent, request } from 'node:http';
import { BENCH_RATE_LIMITS, startServer, type BenchServer } from './child.ts';

/** A poll loop that has not seen a refusal after this long counts as a failed trial. */
const SAFETY_NET_MS = 5_000;
const VERIFY = '/api/v1/external/auth/verify';

export interface RevocationWindows {
  trials: number;
  /** The window of each trial that saw a refusal, in milliseconds. */
  windowsMs: number[];
  /** Trials in which A refused the old token on the very next request. */
  refusedAtOnceOnA: number;
  /** Trials in which B had the token cached before the regeneration. */
  cachedOnB: number;
  /** 200s B gave to the old token after A's call had returned. */
  staleAnswersOnB: number;
  /** Trials that never saw B refuse within the safety net. */
  failed: number;
}

export async function measureRevocationWindows(options: {
  databaseUrl: string;
  trials: number;
  pollIntervalMs: number;
}): Promise<RevocationWindows> {
  const agents = new Map<number, Agent>();
  /** GET verify on `port` with `token`; resolves with the status code. */
  const verify = (port: number, token: string): Promise<number> => {
    let agent = agents.get(port);
    if (!agent) agents.set(port, (agent = new Agent({ keepAlive: true, maxSockets: 2 })));
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: VERIFY, agent, headers: { authorization: token } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
  };
  let a: BenchServer | undefined;
  let b: BenchServer | undefined;
  try {
    a = await startServer('app', {
      env: { DATABASE_URL: options.databaseUrl, BENCH_CREATE_PORTAL: '1', ...BENCH_RATE_LIMITS },
    });
    b = await startServer('app', {
      env: { DATABASE_URL: options.databaseUrl, ...BENCH_RATE_LIMITS },
    });
    await untilTrusted(a);
    await untilTrusted(b);
    const portalCode = a.portalCode!;
    const bPort = b.port;
    let token = a.token!;
    const out: RevocationWindows = {
      trials: options.trials,
      windowsMs: [],
      refusedAtOnceOnA: 0,
      cachedOnB: 0,
      staleAnswersOnB: 0,
      failed: 0,
    };
    for (let trial = 0; trial < options.trials; trial++) {
      // 1. B has the token cached.
      const hitsBefore = (await b.ask({ type: 'stats' }, 'stats')).cache!.hits;
      if ((await verify(b.port, token)) !== 200 || (await verify(b.port, token)) !== 200) {
        throw new Error(`trial ${trial}: B refused the current token`);
      }
      if ((await b.ask({ type: 'stats' }, 'stats')).cache!.hits > hitsBefore) out.cachedOnB++;

      // 2. Poll B until it refuses.
      const old = token;
      let returnedAtNs = -1n;
      const polling = (async () => {
        const start = process.hrtime.bigint();
        for (;;) {
          const sentAtNs = process.hrtime.bigint();
          const status = await verify(bPort, old);
          if (status === 401) return sentAtNs;
          if (status !== 200) throw new Error(`B answered ${status}`);
          if (returnedAtNs >= 0n && sentAtNs > returnedAtNs) out.staleAnswersOnB++;
          if (sentAtNs - start > BigInt(SAFETY_NET_MS) * 1_000_000n) return null;
          // A short pause keeps this poller from taking a core of its own away from B and
          // PostgreSQL; it sets the measurement's resolution.
          await new Promise((resolve) => setTimeout(resolve, options.pollIntervalMs));
        }
      })();

      // 3. A regenerates; 4. A refuses the old token on the very next request.
      const regenerated = await a.ask({ type: 'regenerate', portalCode }, 'regenerated');
      returnedAtNs = BigInt(regenerated.returnedAtNs);
      if ((await verify(a.port, old)) === 401) out.refusedAtOnceOnA++;
      token = regenerated.token;

      // 5. The window on B.
      const refusedSentAtNs = await polling;
      if (refusedSentAtNs === null) {
        out.failed++;
        continue;
      }
      const ns = refusedSentAtNs > returnedAtNs ? refusedSentAtNs - returnedAtNs : 0n;
      out.windowsMs.push(Number(ns) / 1e6);
      if ((await verify(b.port, token)) !== 200) throw new Error('B refused the new token');
    }
    return out;
  } finally {
    for (const agent of agents.values()) agent.destroy();
    await a?.stop();
    await b?.stop();
  }
}

async function untilTrusted(server: BenchServer): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { cache } = await server.ask({ type: 'stats' }, 'stats');
    if (cache?.trusted) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the instance never started listening for token changes');
}
