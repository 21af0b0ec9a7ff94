# The pieces of scripts/ha/start.sh and stop.sh for the Redis Sentinel set. Sourced, not run;
# needs scripts/lib.sh (say) and node on PATH.

# Where start.sh remembers the set's directory for stop.sh (one set per checkout; a test
# gives a file of its own).
HA_STATE="${SWITCHBOARD_HA_STATE:-.dev/ha-dir}"

# The name the Sentinels monitor the primary under (REDIS_SENTINEL_NAME).
HA_NAME=switchboard
# How long a silent primary takes to be called down: a failover takes about this plus a second.
HA_DOWN_AFTER_MS=3000

# free_ports N: N different ports of 127.0.0.1 that are free right now.
free_ports() {
  node -e '
    const net = require("node:net");
    (async () => {
      const ports = new Set();
      while (ports.size < Number(process.argv[1])) {
        const s = net.createServer();
        await new Promise((r) => s.listen(0, "127.0.0.1", r));
        ports.add(s.address().port);
        await new Promise((r) => s.close(r));
      }
      console.log([...ports].join(" "));
    })();' "$1"
}

# The directory of the set started from this checkout, if its processes still run.
ha_running_dir() {
  local dir pid
  [ -f "$HA_STATE" ] || return 1
  dir="$(cat "$HA_STATE")"
  [ -d "$dir" ] || return 1
  for pid in "$dir"/*.pid; do
    [ -f "$pid" ] && kill -0 "$(cat "$pid")" 2>/dev/null && { printf '%s\n' "$dir"; return 0; }
  done
  return 1
}

# start_redis DIR PORT [ARG...]: a redis-server in the background (its pid in DIR/redis-PORT.pid).
start_redis() {
  local dir=$1 port=$2
  shift 2
  mkdir -p "$dir/redis-$port"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir/redis-$port" --save '' --appendonly no \
    --daemonize yes --pidfile "$dir/redis-$port.pid" --logfile "$dir/redis-$port.log" "$@"
  wait_until "redis-server on $port" redis-cli -p "$port" ping
}

# start_sentinel BIN DIR PORT PRIMARY_PORT: a Sentinel in the background watching the primary.
start_sentinel() {
  local bin=$1 dir=$2 port=$3 primary=$4
  cat >"$dir/sentinel-$port.conf" <<CONF
port $port
bind 127.0.0.1
daemonize yes
pidfile $dir/sentinel-$port.pid
logfile $dir/sentinel-$port.log
dir $dir
sentinel monitor $HA_NAME 127.0.0.1 $primary 2
sentinel down-after-milliseconds $HA_NAME $HA_DOWN_AFTER_MS
sentinel failover-timeout $HA_NAME 10000
sentinel parallel-syncs $HA_NAME 1
CONF
  "$bin" "$dir/sentinel-$port.conf"
  wait_until "Sentinel on $port" redis-cli -p "$port" ping
}

replicas_in_sync() {
  [ "$(redis-cli -p "$1" info replication | grep -c 'state=online')" -ge "$2" ]
}

sentinel_knows_set() {
  local info
  info="$(redis-cli -p "$1" SENTINEL MASTER "$HA_NAME" 2>/dev/null)" || return 1
  grep -A1 -x 'num-slaves' <<<"$info" | tail -n 1 | grep -qx 2 &&
    grep -A1 -x 'num-other-sentinels' <<<"$info" | tail -n 1 | grep -qx 2
}

# wait_until WHAT COMMAND...: runs COMMAND every 0.2 s until it succeeds, for at most
# HA_WAIT_SECONDS (60 unless told).
wait_until() {
  local what=$1 deadline=$((SECONDS + ${HA_WAIT_SECONDS:-60}))
  shift
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      say "timed out waiting for $what"
      return 1
    fi
    sleep 0.2
  done
}

# start_redis_set SENTINEL_BIN DIR: the whole Redis part; prints the exports of its settings.
start_redis_set() {
  local bin=$1 dir=$2 port primary
  local -a ports
  read -r -a ports <<<"$(free_ports 6)"
  primary=${ports[0]}
  start_redis "$dir" "$primary"
  for port in "${ports[1]}" "${ports[2]}"; do
    start_redis "$dir" "$port" --replicaof 127.0.0.1 "$primary"
  done
  wait_until "both replicas in sync" replicas_in_sync "$primary" 2
  for port in "${ports[@]:3:3}"; do start_sentinel "$bin" "$dir" "$port" "$primary"; done
  for port in "${ports[@]:3:3}"; do
    wait_until "Sentinel $port to know both replicas and both other Sentinels" \
      sentinel_knows_set "$port"
  done
  local sentinels="127.0.0.1:${ports[3]},127.0.0.1:${ports[4]},127.0.0.1:${ports[5]}"
  say "Redis primary 127.0.0.1:$primary, replicas 127.0.0.1:${ports[1]} and 127.0.0.1:${ports[2]}, Sentinels $sentinels"
  printf 'export REDIS_SENTINELS=%s\nexport REDIS_SENTINEL_NAME=%s\n' "$sentinels" "$HA_NAME"
}
