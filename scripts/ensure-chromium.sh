#!/usr/bin/env bash
# The browser tests (test/e2e) drive Debian's `chromium` with playwright-core. When
# /usr/bin/chromium (or $CHROMIUM_PATH) is missing and apt-get is usable (root), install the
# Debian package; nothing is downloaded from outside the registries. If it still cannot be
# found, the browser tests skip and print why. Never fails the test run by itself.
set -uo pipefail
if [[ -n "${CHROMIUM_PATH:-}" && -x "${CHROMIUM_PATH}" ]] || [[ -x /usr/bin/chromium ]]; then
  exit 0
fi
if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
  echo "[chromium] /usr/bin/chromium is missing: installing Debian's chromium with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends chromium >&2; then
    apt-get update >&2 && apt-get install -y --no-install-recommends chromium >&2 \
      || echo "[chromium] apt-get could not install chromium: the browser tests will be skipped" >&2
  fi
else
  echo "[chromium] /usr/bin/chromium is missing and apt-get is not usable (not root): the browser tests will be skipped" >&2
fi
exit 0
