#!/usr/bin/env bash
# `npm test`: Postgres and Redis (found or started), a fresh test database migrated from
# scratch, then mocha over unit and integration tests. Ends with "N passed, N failed".
set -euo pipefail
source "$(dirname "$0")/stack.sh"
cd "$ROOT"
resolve_stack
trap stop_stack EXIT

# The test database sits beside the configured one, named <name>_test (or TEST_DB_NAME);
# Redis uses database 15 (or TEST_REDIS_DB). Both are wiped by the tests.
use_side_stores "${TEST_DB_NAME:-{name\}_test}" "${TEST_REDIS_DB:-15}"
export NODE_ENV=test
# Notice e-mails are tested where they are switched on (notifications.test.ts); elsewhere they would fill the mail queue.
export NOTIFICATION_EMAILS="${NOTIFICATION_EMAILS:-0}"
export LOG_LEVEL="${LOG_LEVEL:-silent}"
export QUEUE_PREFIX=escrow-test

node_modules/.bin/tsx scripts/ensure-db.ts "$DATABASE_URL" --recreate
node_modules/.bin/tsx scripts/migrate.ts
# Browser tests (test/e2e): Debian's chromium, installed with apt-get when missing and possible.
bash scripts/ensure-chromium.sh
if [[ $# -gt 0 ]]; then
  # Named files only (`npm test -- test/integration/x.test.ts`): .mocharc.json's spec
  # list would be merged with them, so its other settings are given here instead.
  node_modules/.bin/mocha --no-config --node-option import=tsx --require test/helpers/hooks.ts \
    --reporter test/helpers/reporter.cjs --timeout 20000 --exit "$@"
else
  node_modules/.bin/mocha
fi
