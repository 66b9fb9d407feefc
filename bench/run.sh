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
# The money-flow benches (release, pay, fund) each keep a database (<name>_<bench>_bench), a
# Redis db and a queue prefix of their own: the pay bench runs a worker, which on the shared
# database spent a whole run relaying the outbox rows the escrows bench leaves behind (1.6
# million once), and each seeds tens of thousands of rows the others need not scan.
# BENCH_REDIS_DB and BENCH_QUEUE_PREFIX move a run off those (two benches at once on one machine).
own=""
own_redis=1
case "$target" in
  release) own=release own_redis=4 ;;
  pay) own=pay own_redis=5 ;;
  fund) own=fund own_redis=6 ;;
  scale) own=scale own_redis=7 ;;
esac
use_side_stores "{name}${own:+_$own}_bench" "${BENCH_REDIS_DB:-$own_redis}"
export QUEUE_PREFIX="${BENCH_QUEUE_PREFIX:-escrow-bench${own:+-$own}}"

node_modules/.bin/tsx scripts/ensure-db.ts "$DATABASE_URL"
node_modules/.bin/tsx scripts/migrate.ts
log "building dist/ (npm run build)"
npm run --silent build
node_modules/.bin/tsx "$file" "${@:2}"
