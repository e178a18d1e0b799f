#!/bin/sh
# The build: src/ bundled by esbuild into dist/ (scripts/bundle.mjs), the migrations beside it,
# and the PGlite template (scripts/pglite-template.mjs; seconds the first time after a migration
# changes, a copy afterwards). `npm start`, `npm run cli` and `npm test` run it first, so dist/
# is never stale; when nothing it reads changed since the last complete build (`<outdir>/.built`
# lists the same entries and is newer than every file of src/ and scripts/ (and test/ for the
# tests' bundle), package.json and package-lock.json) it does nothing, so a command does not pay
# for a build it does not need. Type checking is `npm run typecheck`'s job.
#
# Usage: scripts/build.sh [outdir [entry...]]   (default: dist with src/main.ts and src/cli/index.ts,
# built to dist/main.js and dist/cli.js;
# `npm test` bundles the test files into test-output/suite, a test process spawning servers
# builds its own dist under test-output/)
set -eu
cd "$(dirname "$0")/.."
out=${1:-dist}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- src/main.ts src/cli/index.ts
sources="src scripts package.json package-lock.json"
case "$*" in test/*) sources="$sources test" ;; esac
if [ -f "$out/.built" ] && [ "$(cat "$out/.built")" = "$*" ] &&
  [ -z "$(find $sources -newer "$out/.built" -print | head -n 1)" ]; then
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
# Stamped before reading the sources (a file changed during the build is newer than the stamp,
# so the next run builds again), and named .built only once everything below succeeded.
printf '%s' "$*" > "$out/.building"
node scripts/bundle.mjs "$out" "$@"
cp -R src/db/migrations "$out/migrations"
# A new embedded data directory is loaded from this template (initialised and migrated) instead
# of running initdb: made once per set of migrations, cached in .cache/pglite/.
node --liftoff-only scripts/pglite-template.mjs src/db/migrations "$out/pglite-template.tar"
mv "$out/.building" "$out/.built"
