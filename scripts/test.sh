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
if [[ "$DATABASE_URL" =~ ^(postgres(ql)?://[^/]+)/([^?]+)(\?.*)?$ ]]; then
  export DATABASE_URL="${BASH_REMATCH[1]}/${TEST_DB_NAME:-${BASH_REMATCH[3]}_test}${BASH_REMATCH[4]}"
else
  echo "DATABASE_URL must name a database" >&2; exit 1
fi
if [[ "$REDIS_URL" =~ ^(rediss?://[^/]+)(/[0-9]*)?$ ]]; then
  export REDIS_URL="${BASH_REMATCH[1]}/${TEST_REDIS_DB:-15}"
else
  echo "REDIS_URL is not a redis:// URL" >&2; exit 1
fi
export NODE_ENV=test
export LOG_LEVEL="${LOG_LEVEL:-silent}"
export QUEUE_PREFIX=escrow-test

node_modules/.bin/tsx scripts/ensure-db.ts "$DATABASE_URL" --recreate
node_modules/.bin/tsx scripts/migrate.ts
node_modules/.bin/mocha "$@"
