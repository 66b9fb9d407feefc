#!/usr/bin/env bash
# `npm test`: Postgres and Redis (found or started), a fresh test database migrated from
# scratch, then mocha over unit, integration and browser tests, spread over parallel
# workers. Ends with one "N passed, N failed" line for the whole run.
#
#   npm test                         every file, in parallel workers (2, or TEST_JOBS)
#   npm test -- a.test.ts b.test.ts  the named files (one worker; TEST_JOBS=2 for two)
#   npm test -- --grep x a.test.ts   with any mocha option: one process, as given
set -euo pipefail
source "$(dirname "$0")/stack.sh"
cd "$ROOT"
resolve_stack
use_node_lts
trap stop_stack EXIT

# The test database sits beside the configured one, named <name>_test (or TEST_DB_NAME);
# it is migrated once and each parallel worker gets a copy of it, <name>_test_1..N.
# Worker i uses the i-th Redis database of TEST_REDIS_DB: a comma-separated list, or one
# number to count down from (default 15: 15, 14, ...). All of them are wiped by the tests.
# How many workers: TEST_JOBS; otherwise one per database of a TEST_REDIS_DB list; otherwise
# 2 for the whole suite on the default Redis databases, and 1 for named files or a single
# TEST_REDIS_DB (several agents may share a machine, each with one Redis database of its own).
redis_spec="${TEST_REDIS_DB:-15}"
if [[ -n "${TEST_JOBS:-}" ]]; then
  jobs="$TEST_JOBS"
elif [[ "$redis_spec" == *,* ]]; then
  jobs="$(tr ',' '\n' <<< "$redis_spec" | grep -c .)"
elif (( $# == 0 )) && [[ -z "${TEST_REDIS_DB:-}" ]]; then
  jobs=2
else
  jobs=1
fi
if ! [[ "$jobs" =~ ^[1-9][0-9]*$ ]]; then log "TEST_JOBS must be a positive number"; exit 1; fi
files=()
serial=""
for arg in "$@"; do
  if [[ "$arg" == -* ]]; then serial=1; fi
done
if [[ -z "$serial" ]]; then
  mapfile -t files < <(node test/helpers/test-plan.cjs "$@")
  if (( ${#files[@]} < jobs )); then jobs=${#files[@]}; fi
  if (( jobs < 2 )); then serial=1; fi
fi

redis_dbs=()
if [[ "$redis_spec" == *,* ]]; then
  IFS=',' read -r -a redis_dbs <<< "$redis_spec"
elif [[ "$redis_spec" =~ ^[0-9]+$ ]]; then
  for ((i = 0; i < jobs; i++)); do redis_dbs+=("$((redis_spec - i))"); done
fi
for d in "${redis_dbs[@]}"; do
  if ! [[ "$d" =~ ^[0-9]+$ ]]; then log "TEST_REDIS_DB must be a number or a comma-separated list of numbers"; exit 1; fi
done
if [[ -z "$serial" ]] && (( ${#redis_dbs[@]} < jobs )); then
  log "TEST_REDIS_DB ($redis_spec) gives fewer than $jobs Redis databases"; exit 1
fi

use_side_stores "${TEST_DB_NAME:-{name\}_test}" "${redis_dbs[0]}"
export NODE_ENV=test
# Notice e-mails are tested where they are switched on (notifications.test.ts); elsewhere they would fill the mail queue.
export NOTIFICATION_EMAILS="${NOTIFICATION_EMAILS:-0}"
export LOG_LEVEL="${LOG_LEVEL:-silent}"
export QUEUE_PREFIX=escrow-test
# No exports worker runs beside the tests: a new CSV export answers 202 at once (exports tests run the job themselves).
export EXPORT_WAIT_MS="${EXPORT_WAIT_MS:-0}"

node_modules/.bin/tsx scripts/ensure-db.ts "$DATABASE_URL" --recreate
node_modules/.bin/tsx scripts/migrate.ts
# Browser tests (test/e2e): Debian's chromium, installed with apt-get when missing and possible.
bash scripts/ensure-chromium.sh

# One database per parallel worker, copied from the migrated one (none for a serial run).
shard_list="$(node_modules/.bin/tsx test/helpers/shard-dbs.ts "$DATABASE_URL" "$([[ -n "$serial" ]] && echo 0 || echo "$jobs")")"

mocha_opts=(--node-option import=tsx --require test/helpers/hooks.ts --reporter test/helpers/reporter.cjs --timeout 20000 --exit)
if [[ -n "$serial" ]]; then
  if [[ $# -gt 0 ]]; then
    # .mocharc.json's spec list would be merged with the named files, so its other settings are given here instead.
    node_modules/.bin/mocha --no-config "${mocha_opts[@]}" "$@"
  else
    node_modules/.bin/mocha
  fi
  exit 0
fi

# Parallel: each worker its database, Redis database and queue prefix
# (test/helpers/shard-env.ts picks them by MOCHA_WORKER_ID).
mapfile -t shard_dbs <<< "$shard_list"
if (( ${#shard_dbs[@]} != jobs )); then log "expected $jobs test databases, got: $shard_list"; exit 1; fi
shard_redis=()
for ((i = 0; i < jobs; i++)); do shard_redis+=("${REDIS_URL%/*}/${redis_dbs[$i]}"); done
TEST_SHARD_DATABASE_URLS="$(IFS=,; echo "${shard_dbs[*]}")"
TEST_SHARD_REDIS_URLS="$(IFS=,; echo "${shard_redis[*]}")"
# Files that compare wall times run with the other workers paused (test/helpers/alone.ts),
# by a lock in the template database.
TEST_LOCK_DATABASE_URL="$DATABASE_URL"
export TEST_SHARD_DATABASE_URLS TEST_SHARD_REDIS_URLS TEST_LOCK_DATABASE_URL
TEST_TIMINGS_OUT="$(mktemp)"
export TEST_TIMINGS_OUT
status=0
node_modules/.bin/mocha --no-config --parallel --jobs "$jobs" "${mocha_opts[@]}" "${files[@]}" || status=$?
# Each file's time, for the next run's order (test/helpers/test-plan.cjs).
node test/helpers/test-plan.cjs --record "$TEST_TIMINGS_OUT" || true
rm -f "$TEST_TIMINGS_OUT"
exit "$status"
