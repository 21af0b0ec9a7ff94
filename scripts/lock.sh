#!/usr/bin/env bash
# `npm run lock`: brings package-lock.json in line with every package.json, for every platform,
# then proves that `npm ci` accepts it. Resolves from the manifests and the current lock only
# (never from node_modules, which holds this machine's optional binaries only), so versions
# already locked stay as they are. See
# docs/decisions/0062-node-runtime-and-lock-file.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
ensure_node
npm install --package-lock-only --ignore-scripts --no-audit --no-fund >&2
npm ci --dry-run --ignore-scripts --no-audit --no-fund >/dev/null
say "package-lock.json is complete; npm ci accepts it"
