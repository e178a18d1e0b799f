/**
 * `npm run bench:contacts`: the contacts area's costs, on PGlite and on PostgreSQL.
 *
 * - Import: `POST /crm/contacts/import` of 1,000 new contacts (BENCH_IMPORT_TRIALS times, each
 *   into fresh phones), then 1,000 updates of existing ones; wall time per request in ms.
 * - List: with 100,000 contacts in the portal (seeded by SQL, then ANALYZE), the latency of
 *   `GET /crm/contacts` pages of 20 for each filter shape (BENCH_LIST_REQUESTS sequential
 *   requests each over keep-alive HTTP, after 20 of warm-up): p50 and p99 in ms; and the plan of
 *   the page's statement (`EXPLAIN ANALYZE`): its nodes with the index each one uses, and the
 *   statement's execution time in the database.
 *
 * The app runs in this process, listening on 127.0.0.1, and is called over real HTTP. Writes
 * `bench/results/contacts-<time>.json` and redraws its section of docs/performance.md
 * (`performance-doc.ts`; BENCH_WRITE_DOC=0 leaves the page alone). PostgreSQL at
 * BENCH_DATABASE_URL (a throwaway database, dropped after); its rows are skipped when it does
 * not answer.
 */
import { execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { buildApp } from '../src/app.ts';
import { CLI_ACTOR } from '../src/audit/audit-log.ts';
import { parseConfig } from '../src/config.ts';
import { openStorage, type Storage } from '../src/db/client.ts';

import { contactPageQuery } from '../src/contacts/contacts-repository.ts';
import { listFilter } from '../src/contacts/contact-filter.ts';
import { contactCursor } from '../src/contacts/contacts-service.ts';
import { createLogger } from '../src/platform/logger.ts';
import { createServices } from '../src/services.ts';
import { figure, redrawSection, runContext, table } from './performance-doc.ts';
import { createThrowawayDatabase } from './postgres.ts';
import { seedContacts } from './pages-seed.ts';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const IMPORT_TRIALS = Number(process.env.BENCH_IMPORT_TRIALS ?? 5);
const LIST_REQUESTS = Number(process.env.BENCH_LIST_REQUESTS ?? 300);
const SEEDED = 100_000;
const WRITE_DOC = process.env.BENCH_WRITE_DOC !== '0';

const SHAPES: Record<string, string> = {
  'first page': '',
  'page 50 (cursor)': 'CURSOR',
  'tag=vip': 'tag=vip',
  'consent=opted_in': 'consent=opted_in',
  'q=ada1 (name prefix)': 'q=ada1',
  'q=+1650000 (phone digits)': `q=${encodeURIComponent('+1650000')}`,
  'q=user12 (email prefix)': 'q=user12',
  'updatedSince (last hour)': 'UPDATED',
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function contactsBatch(start: number, count: number) {
  return Array.from({ length: count }, (_, k) => ({
    phone: `+1 415 2${String(start + k).padStart(6, '0')}`,
    firstName: `Name${start + k}`,
    email: `bench${start + k}@example.test`,
    tags: ['bench'],
    attributes: { plan: 'pro', seats: k % 10 },
  }));
}

async function seed(storage: Storage, portalId: number): Promise<void> {
  await seedContacts(storage.db, portalId, SEEDED);
  await storage.db.execute(sql`analyze contacts`);
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}

/** The nodes of a plan, outermost first: `Index Scan Backward (contacts_portal_page)`. */
function planNodes(node: PlanNode): string[] {
  const direction = node['Scan Direction'] === 'Backward' ? ' Backward' : '';
  const index = node['Index Name'] ? ` (${node['Index Name']})` : '';
  return [`${node['Node Type']}${direction}${index}`, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** `EXPLAIN ANALYZE` of the statement the page `query` (a URL query string) runs. */
async function explainPage(storage: Storage, portalId: number, query: string) {
  const params = Object.fromEntries(new URLSearchParams(query));
  const statement = contactPageQuery(storage.db, portalId, {
    limit: Number(params.limit ?? 20) + 1,
    after: contactCursor.after(params.cursor),
    filter: listFilter(params),
  }).toSQL();
  const text = `explain (analyze, format json) ${statement.sql}`;
  const rows = storage.pglite
    ? (await storage.pglite.query<Record<string, unknown>>(text, statement.params)).rows
    : (await storage.pool!.query<Record<string, unknown>>(text, statement.params)).rows;
  const cell = rows[0]!['QUERY PLAN'];
  const [result] = (typeof cell === 'string' ? JSON.parse(cell) : cell) as [
    { Plan: PlanNode; 'Execution Time': number },
  ];
  const nodes = planNodes(result.Plan);
  return {
    plan: nodes.join(' > '),
    indexes: [...new Set(nodes.flatMap((n) => /\((\w+)\)$/.exec(n)?.[1] ?? []))],
    executionMs: result['Execution Time'],
  };
}

async function run(kind: 'pglite' | 'postgres', url?: string) {
  const config = parseConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'portico-bench-contacts-')),
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const storage = await openStorage(
    kind === 'postgres' ? { kind, url: url!, poolSize: 10 } : { kind: 'pglite-memory' },
  );
  await storage.migrate();
  const logger = createLogger('warn');
  const services = createServices({ config, storage, logger });
  const app = await buildApp({ services, logger });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    // PGlite seeds in this thread: an idle keep-alive socket must outlive the blocked loop, or
    // the server closes it just as the next request goes out (ECONNRESET).
    app.server.keepAliveTimeout = 30 * 60_000;
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/v1/external/crm/contacts`;
    const portal = await services.accounts.createPortal({
      name: 'Bench',
      adminEmail: `bench-${kind}@example.test`,
      actor: CLI_ACTOR,
    });
    const headers = { authorization: portal.token, 'content-type': 'application/json' };
    const timed = async (path: string, init: RequestInit = {}) => {
      const started = performance.now();
      const res = await fetch(`${base}${path}`, { headers, ...init });
      const body = (await res.json()) as { data: Record<string, unknown> };
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
      return { ms: performance.now() - started, data: body.data };
    };

    const importMs: number[] = [];
    for (let trial = 0; trial < IMPORT_TRIALS; trial++) {
      const body = JSON.stringify({ contacts: contactsBatch(trial * 1000, 1000) });
      const r = await timed('/import', { method: 'POST', body });
      if (r.data.created !== 1000) throw new Error(`import created ${String(r.data.created)}`);
      importMs.push(r.ms);
    }
    const updateBody = contactsBatch(0, 1000).map((c) => ({ ...c, firstName: `${c.firstName}x` }));
    const update = await timed('/import', {
      method: 'POST',
      body: JSON.stringify({ contacts: updateBody }),
    });

    const portalId = await services.accounts.portalIdFor(portal.portalCode);
    const seedStarted = performance.now();
    await seed(storage, portalId);
    const seedMs = performance.now() - seedStarted;

    let cursor = '';
    for (let i = 0; i < 50; i++) {
      const r = await timed(`?limit=20${cursor ? `&cursor=${cursor}` : ''}`);
      cursor = String(r.data.nextCursor);
    }
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const list: Record<string, Record<string, unknown>> = {};
    for (const [name, shape] of Object.entries(SHAPES)) {
      const query =
        shape === 'CURSOR'
          ? `cursor=${cursor}`
          : shape === 'UPDATED'
            ? `updatedSince=${hourAgo}`
            : shape;
      const path = `?limit=20${query ? `&${query}` : ''}`;
      let items = 0;
      for (let i = 0; i < 20; i++) await timed(path);
      const samples: number[] = [];
      for (let i = 0; i < LIST_REQUESTS; i++) {
        const r = await timed(path);
        samples.push(r.ms);
        items = (r.data.items as unknown[]).length;
      }
      samples.sort((a, b) => a - b);
      list[name] = {
        p50Ms: percentile(samples, 50),
        p99Ms: percentile(samples, 99),
        items,
        ...(await explainPage(storage, portalId, path.slice(1))),
      };
    }
    return {
      importNew1000Ms: importMs,
      importNew1000MedianMs: [...importMs].sort((a, b) => a - b)[Math.floor(importMs.length / 2)],
      importUpdate1000Ms: update.ms,
      seed100kMs: seedMs,
      list,
    };
  } finally {
    await app.close();
    await storage.close();
  }
}

type Run = Awaited<ReturnType<typeof run>>;

/** The contacts section of docs/performance.md: the imports, then each list shape. */
function docSection(context: ReturnType<typeof runContext>, runs: Record<string, Run>): string {
  const kinds = Object.keys(runs);
  const label = (k: string) => (k === 'pglite' ? 'PGlite' : 'PostgreSQL');
  const ms = (v: number) => `${figure(v)} ms`;
  const importRows = [
    ['import of 1,000 new (median of 5)', ...kinds.map((k) => ms(runs[k]!.importNew1000MedianMs!))],
    ['import of 1,000 updates', ...kinds.map((k) => ms(runs[k]!.importUpdate1000Ms))],
  ];
  const listRows = Object.keys(SHAPES).map((name) => {
    const cells = kinds.map((k) => runs[k]!.list[name] as unknown as ListResult);
    const first = cells.at(-1)!;
    return [
      name.includes('=') || name.startsWith('updatedSince')
        ? `\`${name.split(' ')[0]}\`${name.slice(name.split(' ')[0]!.length)}`
        : name,
      first.indexes.map((i) => `\`${i}\``).join(', '),
      ...cells.map(
        (c) => `${figure(c.p50Ms)} / ${figure(c.p99Ms)} ms (${figure(c.executionMs)} ms)`,
      ),
    ];
  });
  return [
    context.line('npm run bench:contacts'),
    table(['figure', ...kinds.map(label)], importRows, [false, ...kinds.map(() => true)]),
    table(
      [
        'list page',
        `index (${label(kinds.at(-1)!)})`,
        ...kinds.map((k) => `${label(k)} p50 / p99 (database)`),
      ],
      listRows,
      [false, false, ...kinds.map(() => true)],
    ),
  ].join('\n\n');
}

interface ListResult {
  p50Ms: number;
  p99Ms: number;
  indexes: string[];
  executionMs: number;
}

async function main(): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const context = runContext();
  const uptimeBefore = execSync('uptime').toString().trim();
  const loadBefore = loadavg();
  console.log(`contacts bench: node ${process.version}, ${cpus().length} CPUs; ${uptimeBefore}`);
  const record: Record<string, unknown> = {
    startedAt: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    uptimeBefore,
    loadBefore,
    seeded: SEEDED,
    importTrials: IMPORT_TRIALS,
    listRequests: LIST_REQUESTS,
  };
  console.log('pglite …');
  record.pglite = await run('pglite');
  console.log(JSON.stringify(record.pglite, null, 2));
  const database = await createThrowawayDatabase();
  if ('url' in database) {
    try {
      console.log('postgres …');
      record.postgres = await run('postgres', database.url);
      console.log(JSON.stringify(record.postgres, null, 2));
    } finally {
      await database.drop().catch(() => {});
    }
  } else {
    console.warn(`PostgreSQL not reachable (${database.error}): its rows are skipped.`);
  }
  record.uptimeAfter = execSync('uptime').toString().trim();
  record.loadAfter = loadavg();
  const path = join(RESULTS, `contacts-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
  console.log(`${String(record.uptimeAfter)}\nwritten ${path}`);
  const runs = Object.fromEntries(
    (['pglite', 'postgres'] as const).flatMap((k) => (record[k] ? [[k, record[k] as Run]] : [])),
  );
  if (WRITE_DOC) {
    await redrawSection('contacts', docSection(context, runs));
    console.log('redrew the contacts section of docs/performance.md');
  }
}

await main();
