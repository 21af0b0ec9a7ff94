#!/usr/bin/env bash
# Makes `redis-sentinel` (Debian's `redis-sentinel` package) available for the tests and the
# scripts that start a private Sentinel set (test/support/redis-sentinel.ts, scripts/ha/).
# Prints its path on stdout (REDIS_SENTINEL_PATH overrides); see scripts/ensure-debian-tool.sh.
set -euo pipefail
exec bash "$(dirname "$0")/ensure-debian-tool.sh" redis-sentinel REDIS_SENTINEL_PATH \
  redis-sentinel /usr/bin/redis-sentinel
