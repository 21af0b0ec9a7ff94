#!/usr/bin/env bash
# Makes Debian's `chromium` available for the browser tests (test/api/docs-page.test.ts,
# test/portal/portal-page.test.ts), which drive it headless through playwright-core. Prints
# the browser's path on stdout (CHROMIUM_PATH overrides); see scripts/ensure-debian-tool.sh.
set -euo pipefail
exec bash "$(dirname "$0")/ensure-debian-tool.sh" chromium CHROMIUM_PATH \
  /usr/bin/chromium /usr/bin/chromium-browser
