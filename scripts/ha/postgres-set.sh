# The pieces of scripts/ha/start.sh for Postgres under Patroni: three etcd members (Patroni's
# store of the cluster's state and leader lock), HA_PG_MEMBERS Postgres members (2 unless
# told) managed by Patroni with synchronous_mode (a commit returns once the synchronous
# standby has it, so a failover loses no committed transaction), and HAProxy sending every
# connection to the leader, as Patroni's REST API says (GET /primary is 200 on the leader
# only). Sourced, not run; needs scripts/lib.sh (say), redis-set.sh (wait_until, free_ports)
# and node on PATH.

HA_SCOPE=switchboard
HA_PG_MEMBERS="${HA_PG_MEMBERS:-2}"

# http_ok URL: whether URL answers 2xx within 1 s.
http_ok() {
  node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(1000) }).then(
    (r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$1"
}

# pg_bin_dir: the newest installed PostgreSQL's binaries (PG_BIN overrides).
pg_bin_dir() {
  if [ -n "${PG_BIN:-}" ]; then printf '%s\n' "$PG_BIN"; return; fi
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$dir" ] || dir="$(dirname "$(command -v initdb || command -v pg_ctl)")"
  printf '%s\n' "$dir"
}

# start_etcd DIR NAME CLIENT_PORT PEER_PORT INITIAL_CLUSTER: one etcd member in the background.
start_etcd() {
  local dir=$1 name=$2 client=$3 peer=$4 cluster=$5
  setsid etcd --name "$name" --data-dir "$dir/$name" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token "$HA_SCOPE-$$" \
    >"$dir/$name.log" 2>&1 </dev/null &
  printf '%s\n' "$!" >"$dir/$name.pid"
}

# start_patroni DIR NAME PG_PORT REST_PORT ETCD_HOSTS: one Patroni member (and its Postgres).
start_patroni() {
  local dir=$1 name=$2 pg=$3 rest=$4 etcd=$5 member="$dir/$2"
  mkdir -p "$member"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$member"; fi
  cat >"$member.yml" <<YAML
scope: $HA_SCOPE
name: $name
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: $etcd
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 5
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
  initdb:
    - encoding: UTF8
    - auth: trust
postgresql:
  listen: 127.0.0.1:$pg
  connect_address: 127.0.0.1:$pg
  data_dir: $member/data
  bin_dir: $(pg_bin_dir)
  pgpass: $member/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
  parameters:
    unix_socket_directories: '$member'
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
YAML
  # Postgres refuses to run as root: as root, Patroni (and so Postgres) runs as the postgres
  # OS user. setpriv execs, so the pid written is Patroni's.
  local -a run=(patroni "$member.yml")
  if [ "$(id -u)" = 0 ]; then
    run=(setpriv --reuid=postgres --regid=postgres --init-groups "${run[@]}")
  fi
  setsid "${run[@]}" >"$member.log" 2>&1 </dev/null &
  printf '%s\n' "$!" >"$dir/$name.pid"
}

# start_haproxy DIR PORT REST_PORTS PG_PORTS: HAProxy on PORT, to the member whose Patroni
# says it is the primary (checked every second; two failed checks take a member out, and its
# connections are cut so that clients reconnect to the new leader).
start_haproxy() {
  local dir=$1 port=$2 i
  local -a rest=($3) pg=($4)
  {
    printf 'global\n  maxconn 200\n'
    printf 'defaults\n  mode tcp\n  timeout connect 2s\n  timeout client 30m\n  timeout server 30m\n  timeout check 2s\n'
    printf 'listen postgres\n  bind 127.0.0.1:%s\n  option httpchk OPTIONS /primary\n' "$port"
    printf '  http-check expect status 200\n'
    printf '  default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions\n'
    for i in "${!pg[@]}"; do
      printf '  server pg%s 127.0.0.1:%s maxconn 100 check port %s\n' "$((i + 1))" "${pg[$i]}" "${rest[$i]}"
    done
  } >"$dir/haproxy.cfg"
  haproxy -f "$dir/haproxy.cfg" -D -p "$dir/haproxy.pid"
}

# has_sync_standby REST_PORTS: whether a member is the leader's synchronous standby.
has_sync_standby() {
  local port
  for port in $1; do http_ok "http://127.0.0.1:$port/sync" && return 0; done
  return 1
}

# start_postgres_set DIR: the whole Postgres part; prints the export of DATABASE_URL.
start_postgres_set() {
  local dir=$1 i
  local -a ports
  read -r -a ports <<<"$(free_ports $((7 + 2 * HA_PG_MEMBERS)))"
  local cluster="" etcd_hosts=""
  for i in 0 1 2; do
    cluster+="${cluster:+,}etcd$((i + 1))=http://127.0.0.1:${ports[$((3 + i))]}"
    etcd_hosts+="${etcd_hosts:+,}127.0.0.1:${ports[$i]}"
  done
  for i in 0 1 2; do start_etcd "$dir" "etcd$((i + 1))" "${ports[$i]}" "${ports[$((3 + i))]}" "$cluster"; done
  for i in 0 1 2; do wait_until "etcd member $((i + 1))" http_ok "http://127.0.0.1:${ports[$i]}/health"; done
  local -a pg=() rest=()
  for ((i = 0; i < HA_PG_MEMBERS; i++)); do
    pg+=("${ports[$((6 + 2 * i))]}")
    rest+=("${ports[$((7 + 2 * i))]}")
    start_patroni "$dir" "pg$((i + 1))" "${pg[$i]}" "${rest[$i]}" "$etcd_hosts"
  done
  local proxy=${ports[$((6 + 2 * HA_PG_MEMBERS))]}
  start_haproxy "$dir" "$proxy" "${rest[*]}" "${pg[*]}"
  local url="postgres://postgres@127.0.0.1:$proxy/switchboard"
  HA_WAIT_SECONDS=180 wait_until "a Patroni leader behind HAProxy" \
    env DATABASE_URL="$url" node scripts/probe.js pg
  HA_WAIT_SECONDS=180 wait_until "a synchronous standby" has_sync_standby "${rest[*]}"
  DATABASE_URL="$url" node scripts/probe.js createdb switchboard >/dev/null
  say "Postgres members on ports ${pg[*]} under Patroni (REST API on ${rest[*]}), etcd $etcd_hosts, HAProxy 127.0.0.1:$proxy to the leader"
  printf 'export DATABASE_URL=%s\n' "$url"
}
