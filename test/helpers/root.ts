/**
 * The repository's root folder: the nearest folder above this module that holds a
 * `package.json`. The same whether the tests run from `test/` (through tsx) or from the suite's
 * bundle under `test-output/suite/` (`npm test`; docs/decisions/0020-tests.md).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const ROOT = findRoot(import.meta.dirname);
