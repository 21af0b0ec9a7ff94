#!/usr/bin/env bash
# Makes a program from one of Debian's packages available to the tests that need it (Chromium
# for the browser tests, promtool for the alert rules test). Installs the distribution's
# package with apt-get when the program is missing and we are root; never downloads a build
# of its own.
#
#   scripts/ensure-debian-tool.sh PACKAGE OVERRIDE_VARIABLE CANDIDATE...
#
# The first executable among $OVERRIDE_VARIABLE and the candidates (absolute paths, or a
# command name looked up on PATH) is printed on stdout. Progress goes to stderr as
# "switchboard: ..." lines. Without root and without the program it says what to install and
# exits 1.
set -euo pipefail

log() { printf 'switchboard: %s\n' "$*" >&2; }

package=$1
override=$2
shift 2
candidates=("$@")

find_tool() {
  local candidate
  for candidate in "${!override:-}" "${candidates[@]}"; do
    [[ -n "$candidate" && "$candidate" != /* ]] && candidate="$(command -v "$candidate" || true)"
    if [[ -n "$candidate" && -x "$candidate" ]]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

if find_tool; then exit 0; fi

if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  log "${candidates[0]##*/} is missing: install Debian's package (sudo apt-get install $package) and rerun"
  exit 1
fi
log "installing $package with apt-get (once; this can take a minute)"
apt_log="$(mktemp)"
trap 'rm -f "$apt_log"' EXIT
if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package"; } \
  >"$apt_log" 2>&1; then
  cat "$apt_log" >&2
  log "apt-get could not install $package"
  exit 1
fi
find_tool || {
  log "apt-get installed $package but none of ${candidates[*]} is there"
  exit 1
}
