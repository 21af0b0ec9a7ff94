#!/usr/bin/env bash
# The whole test suite, from a fresh clone: dependencies, Postgres and Redis, then the static
# checks (lint, format, types, dependency direction, self-contained docs) beside every jest
# test against the real servers. The checks are single-threaded and jest waits on servers
# much of the time, so on 2 cores running them together costs little beyond jest alone.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

ensure_deps
say "Node.js $(node --version), npm $(npm --version)"
bash scripts/ensure-services.sh
# Headless Chromium for the API reference and portal tests (test/api/docs-page.test.ts, test/portal).
bash scripts/ensure-chromium.sh >/dev/null
say "the lock file (npm ci accepts it: npm run lock repairs it)"
npm ci --dry-run --ignore-scripts --no-audit --no-fund >/dev/null
# promtool for the alert rules test (test/observability/alert-rules.test.ts).
bash scripts/ensure-promtool.sh >/dev/null
# redis-sentinel for the failover test (test/worker/redis-failover.test.ts).
bash scripts/ensure-redis-sentinel.sh >/dev/null
say "portal build (apps/portal, served at /portal; test/portal drives it in Chromium)"
npm run --silent portal:build >/dev/null

# Each check prints what it found and returns non-zero on a finding.
static_checks() {
  say "lint and format check"
  npx eslint . --max-warnings 0
  npx prettier --check . >/dev/null || { npx prettier --list-different .; say "run: npm run format"; return 1; }
  say "type check"
  npx tsc -p tsconfig.json --noEmit
  npx tsc -p apps/portal/tsconfig.json --noEmit
  say "dependency direction (no cycles, packages never import apps)"
  npx madge --circular --extensions ts,tsx --ts-config tsconfig.json apps packages >/dev/null
  if grep -rn --include='*.ts' -E "from '(\.\./)+(\.\./)?apps/|@switchboard/(api|worker|cli)'" packages; then
    say "a package imports an app"; return 1
  fi
  say "self-contained docs (nothing cites a file outside the repository)"
  # Upper-case file names and lower-case prose ("contract, section 2", "CONTRACT section 3") alike.
  if git grep -n -I -i -E "CONTRACT\.md|shared/(spec|STYLE)|contract[ ,:]*(section|§) ?[0-9]|\(section [0-9]+\)" \
    -- ':!package-lock.json' ':!scripts/test.sh'; then
    say "cite docs/API.md or the OpenAPI document instead"; return 1
  fi
  say "static checks passed"
}

checks_log=$(mktemp)
results=$(mktemp)
trap 'rm -f "$checks_log" "$results"' EXIT
say "static checks (beside jest; their output follows jest's)"
(static_checks) >"$checks_log" 2>&1 &
checks_pid=$!

say "jest"
status=0
npx jest --ci --json --outputFile="$results" "$@" || status=$?
# Where the time went: the 10 slowest test files (wall clock, from their start to their end).
# Then one plain closing line with the counts, whatever the reporter printed above: CI reads
# it, so it stays the last line of jest's part, in this exact form.
node -e '
  const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  const root = process.cwd() + "/";
  const slowest = r.testResults
    .map((t) => ({ file: t.name.replace(root, ""), s: (t.endTime - t.startTime) / 1000 }))
    .filter((t) => Number.isFinite(t.s))
    .sort((a, b) => b.s - a.s)
    .slice(0, 10);
  if (slowest.length > 0) {
    console.log(`the ${slowest.length} slowest test files:`);
    for (const t of slowest) console.log(`${t.s.toFixed(1).padStart(7)} s  ${t.file}`);
  }
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' "$results" || true

checks=0
wait "$checks_pid" || checks=$?
cat "$checks_log" >&2
if [ "$checks" -ne 0 ]; then
  say "static checks failed (above)"
  [ "$status" -ne 0 ] || status=$checks
fi
exit "$status"
