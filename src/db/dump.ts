/**
 * A dump of the embedded database as one SQL script that PostgreSQL loads with `psql -f`: the
 * way an installation moves from PGlite to PostgreSQL (docs/how-to/move-to-postgresql.md).
 * PGlite's own `pg_dump` (compiled to WebAssembly, `@electric-sql/pglite-tools`) writes it:
 * every schema (Portico's tables, the migrations' record, the job queue's), plain INSERT
 * statements (no `COPY … FROM stdin`, so any PostgreSQL client can run the script), no owner
 * and no privileges (the target's role owns what it loads).
 *
 * @see https://pglite.dev/docs/pglite-tools
 * @see https://www.postgresql.org/docs/current/app-pgdump.html
 */
import type { PGlite } from '@electric-sql/pglite';

/** pg_dump's options: portable across servers and clients. */
const DUMP_ARGS = ['--no-owner', '--no-privileges', '--inserts', '--rows-per-insert=500'];

/**
 * Settings the dump sets that an older PostgreSQL does not know (PGlite is a newer major
 * version than many servers): dropped so that the script loads without an error line.
 */
const NEWER_SETTINGS = /^SET transaction_timeout = 0;\n/m;

/**
 * Dump a PGlite database as SQL text.
 *
 * @param pglite an open PGlite; nothing else should write to it meanwhile (the CLI takes the
 *   data directory's lock, so no server runs on it).
 * @returns the script, UTF-8 text; its size grows with the data (about 1.5× the rows' text).
 */
export async function dumpDatabase(pglite: PGlite): Promise<string> {
  const { pgDump } = await import('@electric-sql/pglite-tools/pg_dump');
  const file = await pgDump({ pg: pglite, args: DUMP_ARGS });
  return (await file.text()).replace(NEWER_SETTINGS, '');
}
