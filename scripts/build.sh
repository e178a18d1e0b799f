#!/bin/sh
# The build: src/ bundled by esbuild into dist/ (one module per entry, shared chunks, the
# dependencies left to node_modules, source maps), and the migrations beside it. It takes a
# fraction of a second, so `npm start`, `npm run cli` and `npm test` run it first and dist/ is
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
