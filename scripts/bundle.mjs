/**
 * The esbuild bundle of Portico's entry points (used by scripts/build.sh for src/main.ts and
 * src/cli/index.ts and for the test suite's files, and by the benchmark for its server): ESM for
 * Node, one module per entry, shared chunks, source maps.
 *
 * Every output lands in <outdir> itself, named after its entry's path below its top folder
 * (src/main.ts → main.js, test/messaging/send.test.ts → messaging.send.test.js; a folder's
 * index.ts after the folder: src/cli/index.ts → cli.js), so a module's
 * `import.meta.url` is in <outdir> wherever esbuild put its code: the migrations beside it are
 * found the same way in dist/ and in the tests' bundle.
 *
 * Dependencies stay in node_modules (loaded by Node as published), except the ESM ones that
 * Node would otherwise load file by file: typebox (about 700 modules), drizzle-orm and
 * libphonenumber-js (about 80). Inlined, typebox and drizzle cost about 20 ms at start instead
 * of about 200 ms, libphonenumber-js about 100 ms of CPU less (measured with
 * `node dist/main.js`; docs/decisions/0019-speed.md). CommonJS packages stay external: they
 * would need a `require` shim, and some locate files beside themselves.
 *
 * Usage: node scripts/bundle.mjs <outdir> <entry>...
 */
import { dirname, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Packages (and their subpaths) bundled into the output instead of imported at run time. */
const INLINED = /^(typebox|drizzle-orm|libphonenumber-js)(\/|$)/;

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

const [outdir, ...entryPoints] = process.argv.slice(2);
if (!outdir || entryPoints.length === 0) {
  process.stderr.write('usage: node scripts/bundle.mjs <outdir> <entry>...\n');
  process.exit(2);
}
await build({
  entryPoints: entryPoints.map((entry) => ({
    in: entry,
    out: relative(ROOT, resolve(entry))
      .replace(/^[^/]+\//, '')
      .replace(/\.tsx?$/, '')
      .replace(/\/index$/, '')
      .replaceAll('/', '.'),
  })),
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  splitting: true,
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-packages',
      setup(b) {
        // A bare specifier (a package or node:…) is external unless it is inlined.
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          INLINED.test(args.path) ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
});
