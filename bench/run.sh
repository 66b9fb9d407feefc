#!/usr/bin/env bash
# `bash bench/run.sh [bench|file] [args...]` (what the npm scripts run): Postgres and Redis
# (found or started, as `npm start` does), a migrated <name>_bench database, a fresh dist/
# build, then the bench: a folder name (`auth-read`, the default; `escrows`, `deals`, `payments`,
# `uploads`, `public-users`, `chaos`) runs bench/<name>/main.ts, a path runs that file
# (`bench/auth-read/profile.ts`). Further arguments go to it (`npm run chaos -- --overload`).
set -euo pipefail
source "$(dirname "$0")/../scripts/stack.sh"
cd "$ROOT"

target="${1:-auth-read}"
if [ -f "bench/$target/main.ts" ]; then
  file="bench/$target/main.ts"
elif [ -f "$target" ]; then
  file="$target"
else
  log "no bench named '$target' (bench/*/main.ts) and no such file"
  exit 2
fi

resolve_stack
trap stop_stack EXIT

# The bench database sits beside the configured one, named <name>_bench (test databases are
# <name>_test*); Redis uses db 1 (npm test counts down from 15) and queue prefixes of its own (escrow-bench*), so nothing
# is shared with a development or test instance. Nothing in Redis is flushed: the benches
# delete only their own prefixes' keys, and the chaos run starts a redis-server of its own.
# BENCH_REDIS_DB and BENCH_QUEUE_PREFIX move a run off those (two benches at once on one machine).
use_side_stores "{name}_bench" "${BENCH_REDIS_DB:-1}"
export QUEUE_PREFIX="${BENCH_QUEUE_PREFIX:-escrow-bench}"

node_modules/.bin/tsx scripts/ensure-db.ts "$DATABASE_URL"
node_modules/.bin/tsx scripts/migrate.ts
log "building dist/ (npm run build)"
npm run --silent build
node_modules/.bin/tsx "$file" "${@:2}"
