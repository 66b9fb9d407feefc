#!/usr/bin/env bash
# `npm run lint:alerts` (part of `npm run lint`, so of CI): promtool checks the alert rules
# (ops/prometheus/alerts.yml) and runs their unit tests (alerts.test.yml).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROMTOOL="$(bash "$ROOT/scripts/ensure-promtool.sh")"
cd "$ROOT/ops/prometheus"
"$PROMTOOL" check rules alerts.yml
"$PROMTOOL" test rules alerts.test.yml
