#!/usr/bin/env bash
# The whole test suite, from a fresh clone: dependencies, Postgres and Redis, lint, types,
# dependency direction, then every jest test against the real servers.
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
say "lint and format check"
npx eslint . --max-warnings 0
npx prettier --check . >/dev/null || { npx prettier --list-different .; say "run: npm run format"; exit 1; }
say "type check"
npx tsc -p tsconfig.json --noEmit
npx tsc -p apps/portal/tsconfig.json --noEmit
say "portal build (apps/portal, served at /portal; test/portal drives it in Chromium)"
npm run --silent portal:build >/dev/null
say "dependency direction (no cycles, packages never import apps)"
npx madge --circular --extensions ts --ts-config tsconfig.json apps packages >/dev/null
if grep -rn --include='*.ts' -E "from '(\.\./)+(\.\./)?apps/|@switchboard/(api|worker|cli)'" packages; then
  say "a package imports an app"; exit 1
fi
say "self-contained docs (nothing cites a file outside the repository)"
# Upper-case file names and lower-case prose ("contract, section 2", "CONTRACT section 3") alike.
if git grep -n -I -i -E "CONTRACT\.md|shared/(spec|STYLE)|contract[ ,:]*(section|§) ?[0-9]|\(section [0-9]+\)" \
  -- ':!package-lock.json' ':!scripts/test.sh'; then
  say "cite docs/API.md or the OpenAPI document instead"; exit 1
fi
say "jest"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0
npx jest --ci --json --outputFile="$results" "$@" || status=$?
# One plain closing line with the counts, whatever the reporter printed above.
node -e '
  const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' "$results" || true
exit "$status"
