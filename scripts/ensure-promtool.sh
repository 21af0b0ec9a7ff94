#!/usr/bin/env bash
# Makes Prometheus' `promtool` available for the alert rules test
# (test/observability/alert-rules.test.ts), which checks docs/prometheus/alerts.yml with it.
# Installs Debian's `prometheus` package with apt-get when promtool is missing and we are
# root; never downloads a build of its own.
#
#   scripts/ensure-promtool.sh
#
# Prints promtool's path on stdout. Progress goes to stderr as "switchboard: ..." lines.
# Without root and without promtool it says what to install and exits 1.
set -euo pipefail

log() { printf 'switchboard: %s\n' "$*" >&2; }

find_promtool() {
  local candidate
  for candidate in "${PROMTOOL_PATH:-}" "$(command -v promtool || true)" /usr/bin/promtool; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

if find_promtool; then exit 0; fi

if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  log "promtool is missing: install Debian's package (sudo apt-get install prometheus) and rerun"
  exit 1
fi
log "installing prometheus (for promtool) with apt-get (once; this can take a minute)"
apt_log="$(mktemp)"
trap 'rm -f "$apt_log"' EXIT
if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; } \
  >"$apt_log" 2>&1; then
  cat "$apt_log" >&2
  log "apt-get could not install prometheus"
  exit 1
fi
find_promtool || {
  log "apt-get installed prometheus but promtool is not there"
  exit 1
}
