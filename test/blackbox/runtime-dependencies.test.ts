/**
 * What runs in production needs only the production dependencies: the built `dist/` imports
 * no package outside package.json's `dependencies` (the image installs only those), and the
 * scripts that run it (`npm start`, `npm run cli`, the Dockerfile's CMD) run the built
 * JavaScript, never tsx.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/root.ts';
import { freshBuild } from '../helpers/spawn.ts';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  scripts: Record<string, string>;
};

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

test('dist/ imports only production dependencies and Node built-ins', () => {
  const dist = freshBuild();
  const imported = new Set<string>();
  for (const file of readdirSync(dist).filter((f) => f.endsWith('.js'))) {
    const code = readFileSync(join(dist, file), 'utf8');
    // esbuild's ESM: `import … from "x";` and `import "x";` on their own lines, `import("x")`.
    const patterns = [/^(?:import|export)\b[^;]*?"([^"]+)";$/gm, /\bimport\("([^"]+)"\)/g];
    for (const pattern of patterns) {
      for (const m of code.matchAll(pattern)) {
        if (/^[@a-z][\w@./-]*$/.test(m[1]!)) imported.add(m[1]!);
      }
    }
  }
  assert.ok(imported.has('fastify'), 'the scan sees the bundle’s imports');
  const builtins = new Set(builtinModules);
  const outside = [...imported].filter(
    (s) => !s.startsWith('node:') && !builtins.has(s) && !(packageOf(s) in pkg.dependencies),
  );
  assert.deepEqual(outside, []);
  assert.ok(!('tsx' in pkg.dependencies), 'tsx is a dev dependency');
});

test('npm start, npm run cli and the image run the built JavaScript', () => {
  for (const script of ['start', 'cli', 'migrate']) {
    assert.match(pkg.scripts[script]!, /^node --enable-source-maps dist\/\w+\.js/, script);
  }
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  assert.doesNotMatch(dockerfile, /tsx/);
});
