/**
 * `npm run bench:webhooks`: how many tenant webhook events a second Portico delivers to one
 * endpoint, on PostgreSQL and PGlite, beside a `node:http` floor in the same run.
 *
 * The receiver is a `node:http` server in a worker thread (its own event loop, as a tenant's
 * server would be) answering every POST with 204 and counting requests and TCP connections.
 * The floor: this process POSTs the same number of signed bodies of the same size to it with
 * `node:http` and a keep-alive agent of as many sockets as an endpoint's lanes (the most a
 * webhook client could do over those lanes, with no database). Portico: the services as
 * `npm start` composes them, one portal with one endpoint at the receiver; BENCH_WEBHOOK_EVENTS
 * (default 2,000) `ticket.created` events are emitted in one transaction while the worker is
 * stopped, then the worker starts and the time runs until every delivery is recorded
 * `succeeded` (or BENCH_WEBHOOK_MAX_S, default 60 s, have passed: the figure is then what was
 * delivered in that time). Reported: events/s, the ratio to the floor, the process's CPU per
 * event, and the TCP connections the receiver saw.
 *
 * Writes `bench/results/webhooks-<time>.json`, prints the figures with the load average, and
 * redraws its section of docs/performance.md (`<!-- bench:webhooks -->`).
 *
 * @see docs/performance.md
 * @see docs/webhooks.md "Delivery and retries"
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { sql } from 'drizzle-orm';
import { CLI_ACTOR } from '../src/audit/audit-log.ts';
import { parseConfig } from '../src/config.ts';
import { openStorage, type Storage } from '../src/db/client.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createServices } from '../src/services.ts';
import { GATE_SETTINGS } from '../src/webhooks/delivery-gate.ts';
import { signDelivery } from '../src/webhooks/webhook-signing.ts';
import { figure, redrawSection, runContext, table } from './performance-doc.ts';
import { createThrowawayDatabase } from './postgres.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 2000);
const MAX_MS = Number(process.env.BENCH_WEBHOOK_MAX_S ?? 60) * 1000;
const BACKENDS = (process.env.BENCH_WEBHOOK_BACKENDS ?? 'postgres,pglite').split(',');

/** The receiver: answers 204, counts requests and connections; `stats` asks for the counts. */
const RECEIVER = `
const { parentPort } = require('node:worker_threads');
const http = require('node:http');
let requests = 0, connections = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { requests++; res.writeHead(204).end(); });
});
server.keepAliveTimeout = 5000;
server.on('connection', () => connections++);
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'stats') parentPort.postMessage({ requests, connections });
  if (m === 'reset') { requests = 0; connections = 0; parentPort.postMessage({ requests, connections }); }
  if (m === 'close') { server.closeAllConnections(); server.close(() => process.exit(0)); }
});`;

interface Stats {
  requests: number;
  connections: number;
}

async function startReceiver() {
  const worker = new Worker(RECEIVER, { eval: true });
  const { port } = await new Promise<{ port: number }>((resolve) =>
    worker.once('message', resolve),
  );
  const ask = (what: 'stats' | 'reset') =>
    new Promise<Stats>((resolve) => {
      worker.once('message', resolve);
      worker.postMessage(what);
    });
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    stats: () => ask('stats'),
    reset: () => ask('reset'),
    async close() {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('close');
      await exited;
    },
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

interface Run {
  events: number;
  delivered: number;
  ms: number;
  perSecond: number;
  /** Process CPU (user + system) per delivered event, ms. */
  cpuMsPerEvent: number;
  connections: number;
}

/** A body like a `ticket.created` event's, signed as a delivery is. */
function sampleBody(n: number) {
  const body = JSON.stringify({
    type: 'ticket.created',
    timestamp: new Date().toISOString(),
    data: { ticketId: `tkt_bench${n}`, priority: 'normal', createdAt: new Date().toISOString() },
  });
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  return { body, headers: signDelivery(`evt_bench${n}`, new Date(), body, [secret]) };
}

/** The floor: `EVENTS` POSTs over `lanes` keep-alive sockets with node:http, no database. */
async function floor(receiver: Receiver, lanes: number): Promise<Run> {
  await receiver.reset();
  const agent = new http.Agent({ keepAlive: true, maxSockets: lanes });
  const target = new URL(receiver.url);
  const post = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const { body, headers } = sampleBody(n);
      const req = http.request(target, {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...headers,
        },
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end(body);
    });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < EVENTS) await post(next++);
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  const { connections } = await receiver.stats();
  return {
    events: EVENTS,
    delivered: EVENTS,
    ms,
    perSecond: (EVENTS / ms) * 1000,
    cpuMsPerEvent: (cpu.user + cpu.system) / 1000 / EVENTS,
    connections,
  };
}

/** Portico on `storage`: `EVENTS` events of one portal to one endpoint, timed to recorded. */
async function portico(storage: Storage, receiver: Receiver): Promise<Run> {
  const config = parseConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-bench-webhooks-')),
    TOKEN_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
  });
  const services = createServices({ config, storage, logger: createLogger('warn') });
  try {
    await services.webhooks.start();
    const portal = await services.accounts.createPortal({
      name: 'Bench',
      adminEmail: 'bench@webhooks.test',
      actor: CLI_ACTOR,
    });
    const portalId = await services.accounts.portalIdFor(portal.portalCode);
    await services.webhooks.addEndpoint(
      portalId,
      { url: receiver.url, eventTypes: ['ticket.created'] },
      { actor: CLI_ACTOR },
    );
    const createdAt = new Date().toISOString();
    await services.storage.db.transaction((tx) =>
      services.webhooks.emitMany(
        tx,
        portalId,
        'ticket.created',
        Array.from({ length: EVENTS }, (_, n) => ({
          ticketId: `tkt_bench${n}`,
          priority: 'normal' as const,
          createdAt,
        })),
      ),
    );
    await receiver.reset();
    const succeeded = async () => {
      const result: unknown = await services.storage.db.execute(
        sql`select count(*)::int as n from webhook_deliveries where status = 'succeeded'`,
      );
      return (result as { rows: { n: number }[] }).rows[0]!.n;
    };
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await services.webhooks.startWorker();
    let delivered = 0;
    while (delivered < EVENTS && performance.now() - t0 < MAX_MS) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      delivered = await succeeded();
    }
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    await services.webhooks.stopWorker();
    const { connections } = await receiver.stats();
    return {
      events: EVENTS,
      delivered,
      ms,
      perSecond: (delivered / ms) * 1000,
      cpuMsPerEvent: (cpu.user + cpu.system) / 1000 / Math.max(1, delivered),
      connections,
    };
  } finally {
    await services.stop();
  }
}

async function onBackend(backend: string, receiver: Receiver): Promise<Run> {
  let storage: Storage;
  let drop = async () => {};
  if (backend === 'postgres') {
    const db = await createThrowawayDatabase();
    if ('error' in db) throw new Error(`PostgreSQL: ${db.error}`);
    storage = await openStorage({ kind: 'postgres', url: db.url, poolSize: 10 });
    drop = () => db.drop();
  } else {
    const dataDir = mkdtempSync(join(tmpdir(), 'portico-bench-webhooks-pglite-'));
    storage = await openStorage({ kind: 'pglite', dataDir });
  }
  try {
    await storage.migrate();
    return await portico(storage, receiver);
  } finally {
    await storage.close();
    await drop();
  }
}

const line = (name: string, r: Run, floorRun: Run) =>
  `${name}: ${r.delivered}/${r.events} events in ${figure(r.ms)} ms = ${figure(r.perSecond)}/s ` +
  `(${(r.perSecond / floorRun.perSecond).toFixed(3)}× the floor), ` +
  `CPU ${r.cpuMsPerEvent.toFixed(2)} ms/event, ${r.connections} connections`;

async function main() {
  const context = runContext();
  const receiver = await startReceiver();
  const results: Record<string, Run> = {};
  let floorRun: Run;
  try {
    // The floor first (a warm-up of the receiver), then each backend, then the floor again.
    const lanes = GATE_SETTINGS.perEndpoint;
    const before = await floor(receiver, lanes);
    for (const backend of BACKENDS) {
      results[backend] = await onBackend(backend, receiver);
    }
    const after = await floor(receiver, lanes);
    floorRun = before.perSecond > after.perSecond ? before : after;
    console.log(line('node:http floor', floorRun, floorRun));
    for (const [backend, r] of Object.entries(results)) console.log(line(backend, r, floorRun));
  } finally {
    await receiver.close();
  }
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `webhooks-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ ...context.finish(), loadBefore: context.loadBefore, floor: floorRun, results }, null, 2)}\n`,
  );
  const row = (name: string, r: Run) => [
    name,
    `${figure(r.delivered)} of ${figure(r.events)}`,
    `${figure(r.ms)} ms`,
    figure(r.perSecond),
    `${(r.perSecond / floorRun.perSecond).toFixed(3)}×`,
    `${r.cpuMsPerEvent.toFixed(2)} ms`,
    String(r.connections),
  ];
  const section = [
    context.line('npm run bench:webhooks'),
    '',
    `${figure(EVENTS)} \`ticket.created\` events of one portal to one endpoint (a \`node:http\` receiver in a worker thread answering 204), queued in one transaction, then delivered by one instance's worker: timed from the worker's start until every delivery is recorded \`succeeded\`. The floor, in the same run: the same number of signed bodies POSTed to the same receiver with \`node:http\` over ${GATE_SETTINGS.perEndpoint} keep-alive sockets (an endpoint's lanes), no database. CPU is this process's (Portico, the database client, the floor's client; PGlite's database too), per event.`,
    '',
    table(
      ['sender', 'delivered', 'time', 'events/s', '÷ floor', 'CPU per event', 'TCP connections'],
      [
        row('node:http floor', floorRun),
        ...Object.entries(results).map(([b, r]) =>
          row(`Portico, ${b === 'postgres' ? 'PostgreSQL' : 'PGlite'}`, r),
        ),
      ],
      [false, true, true, true, true, true, true],
    ),
  ].join('\n');
  if (process.env.BENCH_WEBHOOK_DOC !== 'no') {
    await redrawSection('webhooks', section);
    console.log(`written ${file}; docs/performance.md: the webhooks section redrawn`);
  } else console.log(`written ${file}`);
}

await main();
