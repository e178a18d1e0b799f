/**
 * The PGlite template: a tarball of an initialised and migrated embedded database, which a new
 * data directory (and each test's in-memory database) is loaded from instead of running
 * PostgreSQL's initdb in WebAssembly (about 4 s of CPU, against under 1 s to load the tarball).
 *
 * Usage: node scripts/pglite-template.mjs <migrations folder> <output .tar>
 *
 * Made once per set of migrations and PGlite version: the tarball is cached under
 * .cache/pglite/ (gitignored) by a SHA-256 of both, and copied to <output> (build.sh puts it
 * in dist/). A template made from other migrations is never used: the key changes with them.
 * Written to a temporary name and renamed, so concurrent builds never see half a file.
 *
 * @see https://pglite.dev/docs/api#dumpdatadir
 * @see docs/decisions/0019-speed.md
 */
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const [migrations, output] = process.argv.slice(2);
if (!migrations || !output) {
  process.stderr.write(
    'usage: node scripts/pglite-template.mjs <migrations folder> <output .tar>\n',
  );
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Every file under `dir`, sorted, as paths relative to it.
 *
 * @param {string} dir
 * @returns {string[]}
 */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

const key = createHash('sha256');
const pgliteManifest = join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json');
key.update(readFileSync(pgliteManifest));
for (const file of filesUnder(migrations)) {
  key
    .update(file)
    .update('\0')
    .update(readFileSync(join(migrations, file)));
}
const cacheDir = join(root, '.cache', 'pglite');
const cached = join(cacheDir, `pglite-template-${key.digest('hex').slice(0, 16)}.tar`);

if (!existsSync(cached)) {
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const { migrate } = await import('drizzle-orm/pglite/migrator');
  const client = await PGlite.create();
  await migrate(drizzle(client), { migrationsFolder: migrations });
  const tarball = await client.dumpDataDir('none');
  await client.close();
  mkdirSync(cacheDir, { recursive: true });
  const temporary = `${cached}.${process.pid}.tmp`;
  await writeFile(temporary, Buffer.from(await tarball.arrayBuffer()));
  renameSync(temporary, cached);
}
mkdirSync(dirname(output), { recursive: true });
copyFileSync(cached, output);
