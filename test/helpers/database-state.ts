/**
 * What a test database's state is made of, and how to empty it: shared by the PGlite and the
 * PostgreSQL backends of test/helpers/storage.ts, which reuse a database after a test only when
 * its shape is the template's.
 */

/**
 * What a database's state is made of besides its rows: every relation, column, default,
 * constraint, index, trigger, function, type, schema, extension, role and setting outside
 * PostgreSQL's own catalogs, the session's settings, prepared statements, cursors and LISTEN
 * channels, hashed. Equal to the template's, a database differs from it only in its rows.
 */
const SHAPE = `
  with user_ns as (
    select oid, nspname from pg_namespace
    where nspname not in ('pg_catalog', 'information_schema') and nspname not like 'pg_toast%'
  )
  select md5(string_agg(item, E'\n' order by item)) as shape from (
    select format('ns %s %s', nspname, pg_get_userbyid(n.nspowner)) as item
      from pg_namespace n where oid in (select oid from user_ns)
    union all select format('rel %s %s', c.oid::regclass, c.relkind)
      from pg_class c where c.relnamespace in (select oid from user_ns)
    union all select format('col %s.%s %s %s %s %s', a.attrelid::regclass, a.attname,
        format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity,
        pg_get_expr(d.adbin, d.adrelid))
      from pg_attribute a join pg_class c on c.oid = a.attrelid
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where c.relnamespace in (select oid from user_ns) and a.attnum > 0 and not a.attisdropped
    union all select format('con %s %s %s', conrelid::regclass, conname, pg_get_constraintdef(oid))
      from pg_constraint where connamespace in (select oid from user_ns)
    union all select format('idx %s', pg_get_indexdef(indexrelid)) from pg_index
      where indrelid in (select oid from pg_class where relnamespace in (select oid from user_ns))
    union all select format('trg %s', pg_get_triggerdef(oid)) from pg_trigger where not tgisinternal
    union all select format('fn %s %s', p.oid::regprocedure, md5(p.prosrc))
      from pg_proc p where pronamespace in (select oid from user_ns)
    union all select format('type %s', t.oid::regtype) from pg_type t
      where typnamespace in (select oid from user_ns)
    union all select format('enum %s %s', enumtypid::regtype, enumlabel) from pg_enum
    union all select format('ext %s %s', extname, extversion) from pg_extension
    union all select format('role %s %s', rolname, rolsuper) from pg_roles
    union all select format('dbset %s', setconfig) from pg_db_role_setting
    union all select format('set %s %s', name, setting) from pg_settings where source = 'session'
    union all select format('prep %s', name) from pg_prepared_statements
    union all select format('cur %s', name) from pg_cursors
    union all select format('listen %s', c) from pg_listening_channels() c
  ) items`;

/** A test database's client, seen through what these helpers need of PGlite and node-postgres. */
export interface StateClient {
  /** The rows of one statement. */
  rows: <T>(statement: string) => Promise<T[]>;
  /** Statements separated by semicolons, run as one script. */
  exec: (script: string) => Promise<unknown>;
}

/** The template's state: its shape's hash and the script that empties a copy of it. */
export interface TemplateState {
  shape: string;
  emptying: string;
}

/**
 * The statements that empty every table but the migrations' record and restart every sequence,
 * as `truncate … restart identity` would. DELETE, referencing tables first so that no foreign key
 * stops one, and `setval`: a TRUNCATE gives every table and index a new file, which cost
 * PostgreSQL about 140 ms of CPU per reset against under 1 ms for these.
 *
 * @throws Error when the foreign keys form a cycle (no order deletes every table).
 */
async function emptyingStatements({ rows }: StateClient): Promise<string> {
  const user = `not in ('pg_catalog', 'information_schema', 'drizzle')`;
  const tables = await rows<{ name: string }>(
    `select format('%I.%I', schemaname, tablename) as name from pg_tables where schemaname ${user}`,
  );
  const references = await rows<{ child: string; parent: string }>(
    `select format('%I.%I', cn.nspname, c.relname) as child,
            format('%I.%I', pn.nspname, p.relname) as parent
       from pg_constraint k
       join pg_class c on c.oid = k.conrelid join pg_namespace cn on cn.oid = c.relnamespace
       join pg_class p on p.oid = k.confrelid join pg_namespace pn on pn.oid = p.relnamespace
      where k.contype = 'f' and k.conrelid <> k.confrelid`,
  );
  const sequences = await rows<{ sql: string }>(
    `select format('select setval(%L, %s, false);', s.seqrelid::regclass, s.seqstart) as sql
       from pg_sequence s join pg_class c on c.oid = s.seqrelid
       join pg_namespace n on n.oid = c.relnamespace where n.nspname ${user}`,
  );
  const remaining = new Set(tables.map((t) => t.name));
  const statements: string[] = [];
  while (remaining.size > 0) {
    const unreferenced = [...remaining].filter(
      (table) => !references.some((r) => r.parent === table && remaining.has(r.child)),
    );
    if (unreferenced.length === 0) throw new Error('the foreign keys form a cycle');
    for (const table of unreferenced) {
      statements.push(`delete from ${table};`);
      remaining.delete(table);
    }
  }
  return [...statements, ...sequences.map((s) => s.sql)].join('\n');
}

async function shapeOf(client: StateClient): Promise<string> {
  return (await client.rows<{ shape: string }>(SHAPE))[0]!.shape;
}

/** Read the template's state from a database still in it (a fresh copy). */
export async function readTemplateState(client: StateClient): Promise<TemplateState> {
  return { shape: await shapeOf(client), emptying: await emptyingStatements(client) };
}

/**
 * Put a closed test's database back in the template's state: pg-boss's schema (the template has
 * none) dropped, advisory locks released, every table emptied. True only when what is left has
 * the template's shape; a database a test changed otherwise (a trigger, a session setting, a
 * temporary table, a LISTEN) is not to be reused. Never throws: a failure answers false.
 */
export async function resetToTemplate(
  client: StateClient,
  template: TemplateState,
): Promise<boolean> {
  try {
    await client.exec('drop schema if exists pgboss cascade; select pg_advisory_unlock_all()');
    if ((await shapeOf(client)) !== template.shape) return false;
    await client.exec(template.emptying);
    return true;
  } catch {
    return false;
  }
}
