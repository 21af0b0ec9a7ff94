#!/usr/bin/env bash
# Makes Prometheus' `promtool` (Debian's `prometheus` package) available for the alert rules
# test (test/observability/alert-rules.test.ts), which checks docs/prometheus/alerts.yml with
# it. Prints promtool's path on stdout (PROMTOOL_PATH overrides); see
# scripts/ensure-debian-tool.sh.
set -euo pipefail
exec bash "$(dirname "$0")/ensure-debian-tool.sh" prometheus PROMTOOL_PATH \
  promtool /usr/bin/promtool
