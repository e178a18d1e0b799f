/**
 * The server side of `npm run bench:pages` (run inside the benchmark server, `server.ts`, which
 * holds the database: PGlite lives in its thread):
 *
 * - `seedPages`: a sign-in password for the portal's administrator, then `rows` contacts,
 *   messages and audit events in the portal, each table filled by one set-based statement
 *   (`generate_series`), then ANALYZE. Messages spread over the last 30 days (one every 26 s,
 *   newest first), with every status; audit events one every 26 s too, oldest first (their ids
 *   follow their times, as when they are recorded).
 * - `seedInbox`: `rows` inbound texts in `rows / 20` conversations (20 messages each, with the
 *   newest contacts), one every 26 s like the messages, their content sealed with the server's
 *   keyring in this process (as ingestion seals it) and inserted 5,000 a statement; each
 *   conversation's last message is its contact's newest; every 7th has 2 unread.
 * - `statementTrace`: the statements the app sends to the database while it is on (the driver's
 *   `query` wrapped), then `EXPLAIN ANALYZE` of each read among them: what a page costs the
 *   database, statement by statement.
 */
import { sql } from 'drizzle-orm';
import type { Storage } from '../src/db/client.ts';
import { sealContent } from '../src/messaging/store/message-content.ts';
import { refreshDailyCounts } from '../src/messaging/store/daily-counts.ts';
import { loadKeyring } from '../src/platform/keyring.ts';
import type { Services } from '../src/services.ts';

export interface PagesSeeded {
  email: string;
  password: string;
  seedMs: number;
}

const PASSWORD = 'bench pages password';

export async function seedPages(
  storage: Storage,
  services: Services,
  input: { portalCode: string; rows: number },
): Promise<PagesSeeded> {
  const started = performance.now();
  const portal = await services.accounts.showPortal(input.portalCode);
  const portalId = await services.accounts.portalIdFor(input.portalCode);
  const admin = portal.users.find((u) => u.isMainAdmin) ?? portal.users[0]!;
  await services.accounts.setPassword({
    portalCode: input.portalCode,
    email: admin.email,
    password: PASSWORD,
  });
  const { db } = storage;
  const n = input.rows;
  await seedContacts(db, portalId, n);
  // Statuses: the 20 newest still queued, then by g % 20: failed 1, sent 4, delivered 7, read 8.
  await db.execute(sql`
    insert into messages (id, portal_id, direction, wa_id, phone_number_id, type, text_body, status,
      queued_at, sent_at, delivered_at, read_at, failed_at, error_code, error_title,
      price_minor, currency, created_at)
    select 'msg_bench' || lpad(g::text, 7, '0'), ${portalId}, 'outbound',
      '+1650' || lpad((g % 5000)::text, 7, '0'), '100000000000001', 'text', 'Hello',
      s.status, t.at,
      case when s.status in ('sent','delivered','read') then t.at + interval '1 second' end,
      case when s.status in ('delivered','read') then t.at + interval '2 seconds' end,
      case when s.status = 'read' then t.at + interval '60 seconds' end,
      case when s.status = 'failed' then t.at + interval '1 second' end,
      case when s.status = 'failed' then '131026' end,
      case when s.status = 'failed' then 'Message undeliverable' end,
      5, 'EUR', t.at
    from generate_series(1, ${n}) g
    cross join lateral (select date_trunc('milliseconds', now() - make_interval(secs => g * 26)) as at) t
    cross join lateral (select case
      when g <= 20 then 'queued'
      when g % 20 = 0 then 'failed'
      when g % 20 < 5 then 'sent'
      when g % 20 < 12 then 'delivered'
      else 'read' end as status) s`);
  await db.execute(sql`
    insert into audit_events (portal_id, actor_type, actor_id, action, reason, occurred_at)
    select ${portalId}, 'user', ${String(admin.userId)},
      (array['contact.erased','credit.added','webhook_endpoint.created','api_token.regenerated'])[1 + g % 4],
      'Contact ctc_bench' || g || ' erased on request (GDPR art. 17).',
      date_trunc('milliseconds', now() - make_interval(secs => g * 26))
    from generate_series(${n}, 1, -1) g`);
  await seedInbox(db, services, portalId, n);
  await refreshDailyCounts(db, portalId);
  await db.execute(sql`analyze contacts`);
  await db.execute(sql`analyze messages`);
  await db.execute(sql`analyze audit_events`);
  await db.execute(sql`analyze conversations`);
  return { email: admin.email, password: PASSWORD, seedMs: performance.now() - started };
}

/** One statement a page sent, with the plan of a read. */
export interface TracedStatement {
  sql: string;
  /** From the driver's call to its answer, in the app (milliseconds): the statement's cost to the page. */
  wallMs: number;
  /** Planning time in the database (EXPLAIN ANALYZE), in milliseconds. */
  planningMs?: number;
  /** The plan's nodes, outermost first: `Limit > Index Scan Backward (messages_portal_page)`. */
  plan?: string;
  /** Execution time in the database (EXPLAIN ANALYZE), in milliseconds. */
  executionMs?: number;
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}

function planNodes(node: PlanNode): string[] {
  const direction = node['Scan Direction'] === 'Backward' ? ' Backward' : '';
  const on = node['Index Name'] ?? node['Relation Name'];
  return [
    `${node['Node Type']}${direction}${on ? ` (${on})` : ''}`,
    ...(node.Plans ?? []).flatMap(planNodes),
  ];
}

type Query = (text: string, params: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

export type StatementTrace = ReturnType<typeof statementTrace>;

/**
 * Record the statements the app runs between `start()` and `stop()` (the driver's `query` of
 * the PGlite instance or of the node-postgres pool, wrapped), then explain each read.
 */
export function statementTrace(storage: Storage) {
  const target = (storage.pglite ?? storage.pool) as unknown as { query: Query };
  const original = target.query.bind(target);
  let recorded: { text: string; params: unknown[]; wallMs: number }[] | null = null;
  target.query = ((first: unknown, params?: unknown, ...rest: unknown[]) => {
    const text = typeof first === 'string' ? first : (first as { text: string }).text;
    const values = Array.isArray(params)
      ? params
      : ((first as { values?: unknown[] }).values ?? []);
    const started = performance.now();
    const result = (original as (...args: unknown[]) => Promise<unknown>)(first, params, ...rest);
    if (!recorded) return result;
    const entry = { text, params: values, wallMs: 0 };
    recorded.push(entry);
    return result.finally(() => (entry.wallMs = performance.now() - started));
  }) as Query;
  return {
    start() {
      recorded = [];
    },
    async stop(): Promise<TracedStatement[]> {
      const statements = recorded ?? [];
      recorded = null;
      const out: TracedStatement[] = [];
      for (const s of statements) {
        const oneLine = s.text.replace(/\s+/g, ' ').trim();
        if (!/^select /i.test(oneLine) || / for update/i.test(oneLine)) {
          out.push({ sql: oneLine, wallMs: s.wallMs });
          continue;
        }
        const { rows } = await original(`explain (analyze, format json) ${s.text}`, s.params);
        const cell = rows[0]!['QUERY PLAN'];
        const [result] = (typeof cell === 'string' ? JSON.parse(cell) : cell) as [
          { Plan: PlanNode; 'Planning Time': number; 'Execution Time': number },
        ];
        out.push({
          sql: oneLine,
          wallMs: s.wallMs,
          plan: planNodes(result.Plan).join(' > '),
          planningMs: result['Planning Time'],
          executionMs: result['Execution Time'],
        });
      }
      return out;
    },
  };
}

/**
 * `n` contacts in `portalId` (`ctc_bench1` …), one second apart, newest first: every tenth
 * tagged `vip`, the consents spread evenly. One statement.
 */
export async function seedContacts(db: Storage['db'], portalId: number, n: number): Promise<void> {
  await db.execute(sql`
    insert into contacts (id, portal_id, phone, email, first_name, last_name, tags,
      consent_whatsapp, created_at, updated_at, consent_updated_at)
    select 'ctc_bench' || g, ${portalId}, '+1650' || lpad(g::text, 7, '0'),
      'user' || g || '@example.test',
      (array['Ada','Bob','Cleo','Dan','Eve','Finn','Gus','Hana'])[1 + g % 8] || g, 'Last' || g,
      case when g % 10 = 0 then array['vip'] else array['std'] end,
      (array['opted_in','opted_out','unknown'])[1 + g % 3],
      now() - make_interval(secs => g), now() - make_interval(secs => g),
      now() - make_interval(secs => g)
    from generate_series(1, ${n}) g`);
}

/** The business number of the seeded conversations (a phone number id). */
export const BENCH_PHONE_NUMBER_ID = '100000000000001';
/** The newest seeded conversation: the inbox's first row. */
export const BENCH_CONVERSATION_ID = 'cnv_bench1';
const SEAL_BATCH = 5000;

/** See the module comment: `n` sealed inbound texts in `n / 20` conversations. */
export async function seedInbox(
  db: Storage['db'],
  services: Services,
  portalId: number,
  n: number,
): Promise<void> {
  const keyring = loadKeyring(services.config);
  const people = Math.max(1, Math.floor(n / 20));
  for (let start = 1; start <= n; start += SEAL_BATCH) {
    const rows: { g: number; content: unknown }[] = [];
    for (let g = start; g < Math.min(n + 1, start + SEAL_BATCH); g++) {
      const id = `msg_benchin${String(g).padStart(7, '0')}`;
      const content = { type: 'text' as const, text: { body: `Hello, is the order ${g} ready?` } };
      rows.push({ g, content: sealContent(keyring, portalId, id, content) });
    }
    await db.execute(sql`
      insert into messages (id, portal_id, direction, contact_id, wa_id, phone_number_id,
        provider_message_id, type, content, created_at, stored_at)
      select 'msg_benchin' || lpad(r.g::text, 7, '0'), ${portalId}, 'inbound',
        'ctc_bench' || (1 + (r.g - 1) % ${people}),
        '+1650' || lpad((1 + (r.g - 1) % ${people})::text, 7, '0'), ${BENCH_PHONE_NUMBER_ID},
        'wamid.bench' || r.g, 'text', r.content, t.at, t.at
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(g int, content jsonb)
      cross join lateral (select date_trunc('milliseconds', now() - make_interval(secs => r.g * 26)) as at) t`);
  }
  await db.execute(sql`
    insert into conversations (id, portal_id, contact_id, phone_number_id, last_message_id,
      last_message_at, last_direction, unread_count, last_inbound_at)
    select 'cnv_bench' || c, ${portalId}, m.contact_id, ${BENCH_PHONE_NUMBER_ID}, m.id,
      m.created_at, 'inbound', case when c % 7 = 0 then 2 else 0 end, m.created_at
    from generate_series(1, ${people}) c
    join messages m
      on m.portal_id = ${portalId} and m.id = 'msg_benchin' || lpad(c::text, 7, '0')`);
}
