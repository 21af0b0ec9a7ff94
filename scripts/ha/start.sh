#!/usr/bin/env bash
# A highly available Redis and Postgres on this machine, for running Switchboard through failovers
# by hand (docs/OPERATIONS.md, "Redis failover: Sentinel" and "Postgres failover: Patroni"), every
# process on free ports of 127.0.0.1 and every file under one new temporary directory:
#
#   redis      one primary, two replicas and three Sentinels (quorum 2), no persistence;
#   postgres   three etcd members, two Postgres members under Patroni with synchronous_mode
#              (HA_PG_MEMBERS=3 for three), and HAProxy routing to the leader.
#
# Both parts unless some are named. Prints the settings that put the API and the worker on
# them (stdout); progress goes to stderr as "switchboard: ..." lines:
#
#   eval "$(bash scripts/ha/start.sh)"   # exports REDIS_SENTINELS, REDIS_SENTINEL_NAME, DATABASE_URL
#   npm start                            # or start:api / start:worker
#   bash scripts/ha/stop.sh              # stops every process it started, deletes the directory
#
# Installs what it needs with apt-get when it is missing and we are root (redis-server,
# redis-sentinel, etcd-server, patroni, haproxy; PostgreSQL itself must be installed). While a
# set started by this script runs, another start prints its settings again. The directory is
# remembered in .dev/ha-dir (SWITCHBOARD_HA_STATE names another file) for stop.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
source scripts/ha/redis-set.sh
source scripts/ha/postgres-set.sh

parts=("$@")
((${#parts[@]})) || parts=(redis postgres)
for part in "${parts[@]}"; do
  case "$part" in redis | postgres) ;; *)
    say "unknown part '$part': expected redis and/or postgres"
    exit 1
    ;;
  esac
done

ensure_node
tool() { bash scripts/ensure-debian-tool.sh "$@" >/dev/null; }
for part in "${parts[@]}"; do
  if [ "$part" = redis ]; then
    tool redis-server REDIS_SERVER_PATH redis-server
    tool redis-tools REDIS_CLI_PATH redis-cli
    SENTINEL_BIN="$(bash scripts/ensure-redis-sentinel.sh)"
  else
    tool etcd-server ETCD_PATH etcd
    tool patroni PATRONI_PATH patroni
    tool haproxy HAPROXY_PATH haproxy /usr/sbin/haproxy
    [ -x "$(pg_bin_dir)/postgres" ] || {
      say "PostgreSQL's server binaries are missing: install PostgreSQL (or set PG_BIN)"
      exit 1
    }
  fi
done

if dir="$(ha_running_dir)"; then
  say "already running (files in $dir); scripts/ha/stop.sh stops it"
  cat "$dir/env"
  exit 0
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-ha.XXXXXX")"
# Postgres runs as the postgres OS user when we are root: it must reach its own directory.
chmod 711 "$dir"
mkdir -p "$(dirname "$HA_STATE")"
printf '%s\n' "$dir" >"$HA_STATE"
trap 'say "start failed (logs in $dir); stopping what was started"; bash scripts/ha/stop.sh --keep >/dev/null 2>&1 || true' ERR

: >"$dir/env"
for part in "${parts[@]}"; do
  if [ "$part" = redis ]; then
    start_redis_set "$SENTINEL_BIN" "$dir" >>"$dir/env"
  else
    start_postgres_set "$dir" >>"$dir/env"
  fi
done
cat "$dir/env"
