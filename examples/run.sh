#!/usr/bin/env bash
# Runs both examples, in order, against an API and worker that are already running at
# API_URL (default http://localhost:3000); it starts nothing itself. The enterprise example
# signs in as staff with ADMIN_EMAIL / ADMIN_PASSWORD (the account the seed made from them;
# by default the local values of examples/README.md).
# Exits non-zero as soon as one example fails.
set -euo pipefail
cd "$(dirname "$0")/.."

export API_URL="${API_URL:-http://localhost:3000}"
# The staff account of a local sandbox started as examples/README.md shows; set both to yours.
export ADMIN_EMAIL="${ADMIN_EMAIL:-ops@example.com}"
export ADMIN_PASSWORD="${ADMIN_PASSWORD:-Choose1Strong}"

if ! node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$API_URL/readyz"; then
  echo "No ready API at $API_URL (GET /readyz). Start it first, e.g.:" >&2
  echo "  ADMIN_EMAIL=ops@example.com ADMIN_PASSWORD='Choose1Strong' npm start" >&2
  exit 1
fi

for example in partner-link-escrow enterprise-milestone-deal; do
  echo "== examples/$example.ts"
  node --import tsx "examples/$example.ts"
  echo
done
echo "== both examples passed"
