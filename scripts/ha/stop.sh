#!/usr/bin/env bash
# Stops the Redis Sentinel set that scripts/ha/start.sh started from this checkout (each
# process by the pid it wrote, SIGTERM then SIGKILL after 5 s), deletes its directory and
# drops its settings from .env (npm start saved them there). Safe to run when nothing runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
source scripts/ha/redis-set.sh

if [ ! -f "$HA_STATE" ]; then
  say "no Redis Sentinel set was started from this checkout"
  exit 0
fi
dir="$(cat "$HA_STATE")"
pids=()
# Sentinels first, so that stopping the servers starts no failover.
for file in "$dir"/sentinel-*.pid "$dir"/redis-*.pid; do
  [ -f "$file" ] || continue
  pid="$(cat "$file")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    pids+=("$pid")
  fi
done
for ((i = 0; i < 50; i++)); do
  alive=()
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
  pids=("${alive[@]}")
  ((${#pids[@]} == 0)) && break
  sleep 0.1
done
for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
# `npm start` keeps the settings it was given in .env: those naming this set go with it, so
# the next start is on REDIS_URL again.
if [ -f .env ] && [ -f "$dir/env" ]; then
  sentinels="$(sed -n 's/^export REDIS_SENTINELS=//p' "$dir/env")"
  if grep -qx "REDIS_SENTINELS=$sentinels" .env; then
    sed -i -e "/^REDIS_SENTINELS=${sentinels}\$/d" -e "/^REDIS_SENTINEL_NAME=${HA_NAME}\$/d" .env
    say "removed this set's REDIS_SENTINELS and REDIS_SENTINEL_NAME from .env"
  fi
fi
case "$dir" in
  */switchboard-ha.*) rm -rf "$dir" ;;
esac
rm -f "$HA_STATE"
say "Redis Sentinel set stopped ($dir deleted)"
