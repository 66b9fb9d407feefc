#!/usr/bin/env bash
# `npm run bench:profile`: the same stores and build as `npm run bench` (bench/run.sh),
# then bench/profile.ts, which CPU-profiles the compiled API under the authenticated
# read and prints the top functions by self time.
set -euo pipefail
source "$(dirname "$0")/../scripts/stack.sh"
cd "$ROOT"
resolve_stack
trap stop_stack EXIT

use_side_stores "{name}_bench" 14
export QUEUE_PREFIX=escrow-bench

node_modules/.bin/tsx scripts/ensure-db.ts "$DATABASE_URL"
node_modules/.bin/tsx scripts/migrate.ts
log "building dist/ (npm run build)"
npm run --silent build
node_modules/.bin/tsx bench/profile.ts
