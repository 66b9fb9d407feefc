#!/usr/bin/env bash
# `npm run bench`: Postgres and Redis (found or started), a migrated <name>_bench
# database, a fresh dist/ build, then bench/run.ts, which load-tests the real API
# against a bare Koa app and writes the figures to bench/README.md.
# `npm run bench:profile` runs bench/profile.ts (given as the argument) on the same
# stores and build: it CPU-profiles the compiled API under the authenticated read.
set -euo pipefail
source "$(dirname "$0")/../scripts/stack.sh"
cd "$ROOT"
resolve_stack
trap stop_stack EXIT

# The bench database sits beside the configured one, named <name>_bench; Redis uses db 14
# and its own queue prefix so nothing is shared with a development or test instance.
use_side_stores "{name}_bench" 14
export QUEUE_PREFIX=escrow-bench

node_modules/.bin/tsx scripts/ensure-db.ts "$DATABASE_URL"
node_modules/.bin/tsx scripts/migrate.ts
log "building dist/ (npm run build)"
npm run --silent build
node_modules/.bin/tsx "${1:-bench/run.ts}" "${@:2}"
