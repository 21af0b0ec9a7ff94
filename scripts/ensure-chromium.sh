#!/usr/bin/env bash
# Makes Debian's `chromium` available for the API reference test (test/api/docs-page.test.ts),
# which drives it headless through playwright-core. Installs the distribution's package with
# apt-get when it is missing and we are root; never downloads a browser build of its own.
#
#   scripts/ensure-chromium.sh
#
# Prints the browser's path on stdout. Progress goes to stderr as "switchboard: ..." lines.
# Without root and without the browser it says what to install and exits 1.
set -euo pipefail

log() { printf 'switchboard: %s\n' "$*" >&2; }

find_chromium() {
  local candidate
  for candidate in "${CHROMIUM_PATH:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

if find_chromium; then exit 0; fi

if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  log "chromium is missing: install Debian's package (sudo apt-get install chromium) and rerun"
  exit 1
fi
log "installing chromium with apt-get (once; this can take a minute)"
apt_log="$(mktemp)"
trap 'rm -f "$apt_log"' EXIT
if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } \
  >"$apt_log" 2>&1; then
  cat "$apt_log" >&2
  log "apt-get could not install chromium"
  exit 1
fi
find_chromium || {
  log "apt-get installed chromium but /usr/bin/chromium is not there"
  exit 1
}
