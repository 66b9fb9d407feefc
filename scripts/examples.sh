#!/usr/bin/env bash
# The two examples (examples/) against a local stack of their own, as CI runs them: `npm start`
# on port EXAMPLES_PORT (3100) with the database <name>_examples, Redis db EXAMPLES_REDIS_DB (12,
# emptied first: its sign-up counters would otherwise refuse a third run within the hour), the
# queue prefix escrow-examples and a staff account; waits for /readyz, runs examples/run.sh,
# then stops what it started. Exits with the examples' status.
set -euo pipefail
source "$(dirname "$0")/stack.sh"
cd "$ROOT"
resolve_stack
use_node_lts

port="${EXAMPLES_PORT:-3100}"
redis_db="${EXAMPLES_REDIS_DB:-12}"
db_url="$(node -e 'const u = new URL(process.argv[1]); u.pathname = `${u.pathname.replace(/^\//, "") || "escrow"}_examples`; console.log(u.toString())' "$DATABASE_URL")"
redis_url="$(node -e 'const u = new URL(process.argv[1]); u.pathname = `/${process.argv[2]}`; console.log(u.toString())' "$REDIS_URL" "$redis_db")"
node -e 'const { Redis } = require("ioredis"); const r = new Redis(process.argv[1]); r.flushdb().then(() => r.quit())' "$redis_url"

export ADMIN_EMAIL="${ADMIN_EMAIL:-ops@example.com}"
export ADMIN_PASSWORD="${ADMIN_PASSWORD:-Choose1Strong}"
export API_URL="http://127.0.0.1:$port"
log "examples: starting the stack on $API_URL (database $(basename "${db_url%%\?*}"), Redis db $redis_db)"
DATABASE_URL="$db_url" REDIS_URL="$redis_url" QUEUE_PREFIX=escrow-examples PORT="$port" \
  MAIL_CATCHER_PORT="${EXAMPLES_MAIL_PORT:-1125}" LOG_LEVEL="${EXAMPLES_LOG_LEVEL:-warn}" \
  setsid bash scripts/start.sh > "${TMPDIR:-/tmp}/escrow-examples-stack.log" 2>&1 &
stack_pid=$!
stop() {
  kill -TERM -- "-$stack_pid" 2>/dev/null || true
  wait "$stack_pid" 2>/dev/null || true
  stop_stack
}
trap stop EXIT

for _ in $(seq 1 120); do
  if node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$API_URL/readyz"; then break; fi
  if ! kill -0 "$stack_pid" 2>/dev/null; then
    log "examples: the stack ended before it was ready:"
    tail -n 40 "${TMPDIR:-/tmp}/escrow-examples-stack.log" >&2
    exit 1
  fi
  sleep 1
done
bash examples/run.sh
