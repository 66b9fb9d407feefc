#!/usr/bin/env bash
# `npm start`: dependencies, Postgres and Redis (found or started), migrations, sandbox
# seed, then the API and the workers. Ctrl-C stops everything this script started.
set -euo pipefail
source "$(dirname "$0")/stack.sh"
cd "$ROOT"
resolve_stack
use_node_lts

PIDS=()
cleanup() {
  trap - INT TERM EXIT
  log "stopping"
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  stop_stack
}
trap cleanup INT TERM EXIT

node_modules/.bin/tsx scripts/ensure-db.ts "$DATABASE_URL"
node_modules/.bin/tsx scripts/migrate.ts
node_modules/.bin/tsx scripts/seed.ts

# Without SMTP_URL, e-mail goes to a local catcher that files it under .data/mail/.
if [ -z "${SMTP_URL:-}" ]; then
  node_modules/.bin/tsx scripts/mail-catcher.ts & PIDS+=($!)
  export SMTP_URL="smtp://127.0.0.1:${MAIL_CATCHER_PORT:-1025}"
fi
node_modules/.bin/tsx api/server.ts & PIDS+=($!)
node_modules/.bin/tsx workers/index.ts & PIDS+=($!)

PORT="${PORT:-3000}"
BASE="${PUBLIC_BASE_URL:-http://localhost:$PORT}"
cat >&2 <<MSG

  API               $BASE
  API reference     $BASE/docs
  Queue dashboard   $BASE/admin/queues   (staff only)
  Health            $BASE/healthz  ·  $BASE/readyz  ·  $BASE/metrics
  E-mail            $SMTP_URL  (local catcher: messages filed under .data/mail/)

  Ctrl-C stops the API, the workers and any database this command started.

MSG
# Exit (and clean up) as soon as either process ends.
wait -n "${PIDS[@]}"
