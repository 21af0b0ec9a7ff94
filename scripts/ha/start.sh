#!/usr/bin/env bash
# A Redis Sentinel set on this machine, for running Switchboard through a Redis failover by
# hand: one primary, two replicas and three Sentinels (quorum 2) on free ports of 127.0.0.1,
# every file under a new temporary directory, no persistence (README, "Redis failover:
# Sentinel"). Prints the settings that put the API and the worker on it:
#
#   eval "$(bash scripts/ha/start.sh)"    # exports REDIS_SENTINELS and REDIS_SENTINEL_NAME
#   npm start                              # or start:api / start:worker
#   redis-cli -p <a Sentinel's port> SENTINEL FAILOVER switchboard   # a failover, on demand
#   bash scripts/ha/stop.sh                # stops every process, deletes the directory
#
# Progress goes to stderr as "switchboard: ..." lines. Installs redis-server and
# redis-sentinel with apt-get when they are missing and we are root. While a set started by
# this script runs, another start prints its settings again. The directory is remembered in
# .dev/ha-dir (SWITCHBOARD_HA_STATE names another file) for stop.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
source scripts/ha/redis-set.sh

ensure_node
bash scripts/ensure-debian-tool.sh redis-server REDIS_SERVER_PATH redis-server >/dev/null
bash scripts/ensure-debian-tool.sh redis-tools REDIS_CLI_PATH redis-cli >/dev/null
SENTINEL_BIN="$(bash scripts/ensure-redis-sentinel.sh)"

if dir="$(ha_running_dir)"; then
  say "a Redis Sentinel set is already running (files in $dir)"
  cat "$dir/env"
  exit 0
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-ha.XXXXXX")"
mkdir -p "$(dirname "$HA_STATE")"
printf '%s\n' "$dir" >"$HA_STATE"
trap 'say "start failed; stopping what was started"; bash scripts/ha/stop.sh >/dev/null 2>&1 || true' ERR

read -r -a ports <<<"$(free_ports 6)"
primary=${ports[0]}
start_redis "$dir" "$primary"
for port in "${ports[1]}" "${ports[2]}"; do start_redis "$dir" "$port" --replicaof 127.0.0.1 "$primary"; done
wait_until "both replicas in sync" replicas_in_sync "$primary" 2
for port in "${ports[@]:3:3}"; do start_sentinel "$SENTINEL_BIN" "$dir" "$port" "$primary"; done
for port in "${ports[@]:3:3}"; do
  wait_until "Sentinel $port to know both replicas and both other Sentinels" sentinel_knows_set "$port"
done

sentinels="127.0.0.1:${ports[3]},127.0.0.1:${ports[4]},127.0.0.1:${ports[5]}"
printf 'export REDIS_SENTINELS=%s\nexport REDIS_SENTINEL_NAME=%s\n' "$sentinels" "$HA_NAME" >"$dir/env"
say "primary 127.0.0.1:$primary, replicas 127.0.0.1:${ports[1]} and 127.0.0.1:${ports[2]}, Sentinels $sentinels (files in $dir)"
cat "$dir/env"
