/**
 * `pgbench` as a same-run reference for the benchmarks: what the PostgreSQL server under test
 * commits per second with a given script, at a given concurrency and duration, on this machine
 * at this moment. `pgbench` comes with PostgreSQL's client tools (Debian: postgresql-client);
 * when it is not installed the reference is reported missing, never guessed.
 *
 * @see https://www.postgresql.org/docs/current/pgbench.html
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export type PgbenchResult =
  { tps: number; latencyAverageMs: number; transactions: number } | { missing: string };

/**
 * Run `pgbench -n -c <clients> -j 2 -T <durationS> -f <script>` against `url`.
 *
 * @returns its committed transactions per second (without the connection set-up), or
 *   `missing` with the reason when pgbench is not installed.
 * @throws Error when pgbench runs but fails (its output in the message).
 */
export function runPgbench(
  url: string,
  script: string,
  options: { clients: number; durationS: number },
): Promise<PgbenchResult> {
  const file = join(mkdtempSync(join(tmpdir(), 'portico-pgbench-')), 'script.sql');
  writeFileSync(file, script);
  const args = ['-n', '-c', String(options.clients), '-j', '2', '-T', String(options.durationS)];
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.PGBENCH ?? 'pgbench', [...args, '-f', file, url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT')
        resolve({
          missing: 'pgbench is not installed (Debian: apt-get install postgresql-client)',
        });
      else reject(err);
    });
    child.once('exit', (code) => {
      const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out);
      const latency = /latency average = ([\d.]+) ms/.exec(out);
      const count = /number of transactions actually processed: (\d+)/.exec(out);
      if (code !== 0 || !tps) return reject(new Error(`pgbench failed (${code}): ${out}`));
      resolve({
        tps: Number(tps[1]),
        latencyAverageMs: Number(latency?.[1] ?? NaN),
        transactions: Number(count?.[1] ?? NaN),
      });
    });
  });
}

/**
 * The single-row insert reference: `INSERT` of one row per transaction into a throwaway table
 * (created here, dropped after) of the database at `url`.
 */
export async function pgbenchSingleInserts(
  url: string,
  options: { clients: number; durationS: number },
): Promise<PgbenchResult> {
  const table = 'bench_pgbench_inserts';
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`create table ${table} (id bigserial primary key,
      at timestamptz not null default now(), note text)`);
    return await runPgbench(url, `insert into ${table} (note) values ('x');\n`, options);
  } finally {
    await client.query(`drop table if exists ${table}`);
    await client.end();
  }
}
