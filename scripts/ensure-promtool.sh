#!/usr/bin/env bash
# Prints the path of a `promtool` (Prometheus's rule checker) for `npm run lint:alerts`: the
# one on PATH, or the one from Debian's `prometheus` package kept in .tools/ (the package is
# downloaded with `apt-get download` and only promtool is unpacked: no Prometheus service is
# installed or started). Exits 1 when neither can be had.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOL="$ROOT/.tools/promtool"
log() { printf '[promtool] %s\n' "$*" >&2; }

if command -v promtool >/dev/null 2>&1; then
  command -v promtool
  exit 0
fi
if [[ -x "$TOOL" ]]; then
  echo "$TOOL"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
  log "no promtool on PATH and no apt-get/dpkg-deb to fetch Debian's: install the prometheus package"
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log "fetching Debian's prometheus package for its promtool (into .tools/)"
if ! (cd "$work" && apt-get download prometheus >/dev/null 2>&1); then
  (apt-get update >/dev/null 2>&1 || true)
  (cd "$work" && apt-get download prometheus >/dev/null 2>&1) || { log "apt-get download prometheus failed"; exit 1; }
fi
dpkg-deb -x "$work"/prometheus_*.deb "$work/x"
mkdir -p "$ROOT/.tools"
install -m 0755 "$work/x/usr/bin/promtool" "$TOOL"
echo "$TOOL"
