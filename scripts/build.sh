#!/bin/sh
# The build: src/ bundled by esbuild into dist/ (one module per entry, shared chunks, the
# dependencies left to node_modules, source maps), the migrations beside it, and the PGlite
# template (scripts/pglite-template.mjs; seconds the first time after a migration changes,
# a copy afterwards). It takes a fraction of a second, so `npm start`, `npm run cli` and `npm test` run it first and dist/ is
# never stale. Type checking is `npm run typecheck`'s job, not the build's.
#
# Usage: scripts/build.sh [outdir]   (default dist; the tests build into their own folder)
set -eu
cd "$(dirname "$0")/.."
out=${1:-dist}
rm -rf "$out"
node_modules/.bin/esbuild src/main.ts src/cli.ts --bundle --platform=node --format=esm \
  --splitting --packages=external --sourcemap --outdir="$out" --log-level=warning
cp -R src/db/migrations "$out/migrations"
# A new embedded data directory is loaded from this template (initialised and migrated) instead
# of running initdb: made once per set of migrations, cached in .cache/pglite/.
node scripts/pglite-template.mjs src/db/migrations "$out/pglite-template.tar"
