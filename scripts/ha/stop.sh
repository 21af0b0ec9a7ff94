#!/usr/bin/env bash
# Stops what scripts/ha/start.sh started from this checkout, each process by the pid it
# wrote, in an order that starts no failover on the way (Sentinels, HAProxy and Patroni
# first, Patroni stopping its own Postgres; then the Redis servers and etcd), SIGKILL for
# what is still up after a while. Then deletes the directory (kept with --keep, for its logs)
# and drops the set's settings from .env (npm start saved them there). Safe to run when
# nothing runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
source scripts/ha/redis-set.sh

keep=0
[ "${1:-}" = --keep ] && keep=1
if [ ! -f "$HA_STATE" ]; then
  say "nothing was started from this checkout"
  exit 0
fi
dir="$(cat "$HA_STATE")"

# stop_pids SECONDS PIDFILE...: SIGTERM to each live pid, SIGKILL to those alive SECONDS later.
stop_pids() {
  local seconds=$1 file pid i
  shift
  local -a pids=() alive
  for file in "$@"; do
    [ -f "$file" ] || continue
    pid="$(cat "$file")"
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for ((i = 0; i < seconds * 10 && ${#pids[@]} > 0; i++)); do
    alive=()
    for pid in "${pids[@]}"; do if kill -0 "$pid" 2>/dev/null; then alive+=("$pid"); fi; done
    pids=("${alive[@]}")
    ((${#pids[@]} == 0)) || sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

shopt -s nullglob
stop_pids 30 "$dir"/sentinel-*.pid "$dir"/haproxy.pid "$dir"/pg*.pid
# A Postgres whose Patroni did not stop it (Patroni SIGKILLed): its postmaster's pid is the
# first line of postmaster.pid.
postmasters=()
for file in "$dir"/pg*/data/postmaster.pid; do
  member="$(basename "$(dirname "$(dirname "$file")")")"
  head -n 1 "$file" >"$dir/postmaster-$member.pid" && postmasters+=("$dir/postmaster-$member.pid")
done
stop_pids 30 "${postmasters[@]}"
stop_pids 10 "$dir"/redis-*.pid "$dir"/etcd*.pid

# `npm start` keeps the settings it was given in .env: those naming this set go with it, so
# the next start is on REDIS_URL and DATABASE_URL of before again.
if [ -f .env ] && [ -f "$dir/env" ]; then
  while IFS= read -r line; do
    setting="${line#export }"
    if grep -qxF "$setting" .env; then
      grep -vxF "$setting" .env >.env.next || true
      chmod --reference=.env .env.next
      mv .env.next .env
      say "removed ${setting%%=*} from .env"
    fi
  done <"$dir/env"
fi
rm -f "$HA_STATE"
if ((keep)); then
  say "stopped; files kept in $dir"
else
  case "$dir" in */switchboard-ha.*) rm -rf "$dir" ;; esac
  say "stopped ($dir deleted)"
fi
