/**
 * The docs check (`npm run lint:docs`, part of `npm run lint`): what the docs and the code point
 * at exists, and every generated reference (scripts/references.ts) is what its generator writes
 * now. The rules are scripts/docs-checker.ts's; this runs them over the files git knows.
 *
 * Usage: node --import tsx scripts/docs-check.ts [--write]   (--write regenerates the references)
 * Exit 1 with one line per problem; 0 when everything resolves.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { checkDocs } from './docs-checker.ts';
import { REFERENCES } from './references.ts';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

/** The files git knows (tracked or new and not ignored), repository-relative. */
const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => f !== '' && existsSync(join(ROOT, f)));

const problems = await checkDocs({
  root: ROOT,
  files,
  generated: REFERENCES,
  write: process.argv.includes('--write'),
  // The checker's examples, its test's fixtures, and the generator whose links are checked in
  // what it writes.
  examples: new Set([
    'scripts/docs-checker.ts',
    'scripts/references.ts',
    'test/scripts/docs-check.test.ts',
  ]),
});
if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n${problems.length} problem(s) in the docs\n`);
  process.exit(1);
}
