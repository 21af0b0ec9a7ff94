#!/usr/bin/env bash
# Make Postgres and Redis reachable for the service and the tests.
#
#   scripts/ensure-services.sh [DATABASE_NAME]
#
# Reads DATABASE_URL and REDIS_URL (defaults below). If a server does not answer and its URL
# points at this machine, the script starts it (pg_ctlcluster / redis-server), installing it
# with apt-get first when it is missing and we run as root. Then it creates the database named
# in DATABASE_URL (or DATABASE_NAME, when given) if it does not exist yet.
#
# Progress goes to stderr as "switchboard: ..." lines so stdout stays clean. On failure it
# prints one line saying what to do and exits 1. Needs node_modules (npm ci) for the probes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROBE="$ROOT/scripts/probe.js"

export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/switchboard}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
# How long to wait for a service we just started (seconds).
WAIT_SECONDS="${ENSURE_SERVICES_WAIT_SECONDS:-30}"

log() { printf 'switchboard: %s\n' "$*" >&2; }
die() {
  printf 'switchboard: %s\n' "$*" >&2
  exit 1
}

is_root() { [[ "$(id -u)" == 0 ]]; }

is_local_host() {
  case "$1" in
    127.0.0.1 | localhost | ::1 | '[::1]' | /*) return 0 ;; # /* = unix socket directory
    *) return 1 ;;
  esac
}

# probe ARGS...: run scripts/probe.js; sets PROBE_RC, PROBE_OUT (stdout) and PROBE_ERR (the
# last stderr line). Never fails, so it is safe under set -e.
PROBE_ERR_FILE="$(mktemp)"
trap 'rm -f "$PROBE_ERR_FILE"' EXIT
probe() {
  PROBE_RC=0
  PROBE_OUT="$(node "$PROBE" "$@" 2>"$PROBE_ERR_FILE")" || PROBE_RC=$?
  PROBE_ERR="$(tail -n 1 "$PROBE_ERR_FILE" | tr -d '\r')"
}

# wait_for LABEL PROBE_ARGS...: probe once a second while the answer is "not reachable (1)",
# for at most WAIT_SECONDS. Returns the last probe's exit code.
wait_for() {
  local label="$1" deadline=$((SECONDS + WAIT_SECONDS)) dots=0
  shift
  while :; do
    probe "$@"
    if [[ "$PROBE_RC" != 1 ]] || ((SECONDS >= deadline)); then break; fi
    if ((dots == 0)); then printf 'switchboard: waiting for %s ' "$label" >&2; fi
    printf '.' >&2
    dots=$((dots + 1))
    sleep 1
  done
  if ((dots > 0)); then printf '\n' >&2; fi
  return "$PROBE_RC"
}

APT_UPDATED=0
# apt_install PACKAGE...: only as root on an apt-based system.
apt_install() {
  is_root || return 1
  command -v apt-get >/dev/null 2>&1 || return 1
  log "installing $* with apt-get (this can take a minute)"
  if ((APT_UPDATED == 0)); then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || return 1
    APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 || return 1
}

# ---------------------------------------------------------------- Postgres

PG_INSTALLED_NOW=0

# Start every cluster under /etc/postgresql that is not running.
start_postgres() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    if ! is_root; then
      log "PostgreSQL is not installed and we are not root, so cannot install it"
      return 1
    fi
    apt_install postgresql || return 1
    PG_INSTALLED_NOW=1
  fi
  local conf dir cluster version started=0
  for conf in /etc/postgresql/*/*/postgresql.conf; do
    [[ -e "$conf" ]] || continue
    dir="${conf%/postgresql.conf}"
    cluster="${dir##*/}"
    version="${dir%/*}"
    version="${version##*/}"
    if pg_ctlcluster "$version" "$cluster" status >/dev/null 2>&1; then
      started=1
      continue
    fi
    log "starting PostgreSQL cluster $version/$cluster"
    if pg_ctlcluster --skip-systemctl-redirect "$version" "$cluster" start >&2; then
      started=1
    else
      log "pg_ctlcluster $version $cluster start failed"
    fi
  done
  if ((started == 0)); then
    log "found no PostgreSQL cluster under /etc/postgresql that would start"
    return 1
  fi
}

# A cluster we just installed only accepts password logins over TCP and knows no role but
# postgres. Make the DATABASE_URL user work: create the role if missing, then set its password
# (when the URL has one) or trust it on the loopback addresses (dev machines only).
configure_new_postgres() {
  local hba
  # psql as the postgres OS user over the unix socket of the cluster on PG_PORT (peer auth).
  as_postgres() { runuser -u postgres -- "$@"; }
  psql_admin() { as_postgres psql -X -p "$PG_PORT" "$@"; }
  hba="$(psql_admin -Atc 'SHOW hba_file')" || return 1
  log "configuring the new PostgreSQL server for user $PG_USER"
  psql_admin -q -v ON_ERROR_STOP=1 -v u="$PG_USER" >&2 <<'SQL' || return 1
SELECT format('CREATE ROLE %I LOGIN SUPERUSER', :'u')
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'u') \gexec
SQL
  if [[ -n "$PG_PASSWORD" ]]; then
    psql_admin -q -v ON_ERROR_STOP=1 -v u="$PG_USER" -v p="$PG_PASSWORD" >&2 <<'SQL' || return 1
SELECT format('ALTER ROLE %I PASSWORD %L', :'u', :'p') \gexec
SQL
  else
    local user_q="\"${PG_USER//\"/\"\"}\"" tmp
    tmp="$(mktemp)"
    {
      printf '# Added by scripts/ensure-services.sh: local development only.\n'
      printf 'host all %s 127.0.0.1/32 trust\n' "$user_q"
      printf 'host all %s ::1/128 trust\n' "$user_q"
      cat "$hba"
    } >"$tmp" && cat "$tmp" >"$hba" && rm -f "$tmp" || return 1
    psql_admin -Atqc 'SELECT pg_reload_conf()' >/dev/null || return 1
    sleep 1
  fi
}

ensure_postgres() {
  local where="$PG_HOST:$PG_PORT"
  probe pg
  case "$PROBE_RC" in
    0) return 0 ;;
    1) ;;
    2) die "Postgres at $where refused the connection ($PROBE_ERR); fix the user/password in DATABASE_URL or the server's pg_hba.conf" ;;
    *) die "cannot probe Postgres: $PROBE_ERR" ;;
  esac
  if ! is_local_host "$PG_HOST"; then
    die "Postgres at $where is not reachable ($PROBE_ERR); start it or set DATABASE_URL to a reachable server"
  fi
  log "Postgres at $where is not answering; trying to start it"
  local rc=0
  if start_postgres; then
    wait_for "Postgres at $where" pg || rc=$?
  else
    probe pg
    rc="$PROBE_RC"
  fi
  if ((rc == 2 && PG_INSTALLED_NOW == 1)); then
    configure_new_postgres || log "could not configure the new PostgreSQL server"
    rc=0
    wait_for "Postgres at $where" pg || rc=$?
  fi
  case "$rc" in
    0) log "Postgres at $where is up" ;;
    2) die "Postgres at $where refused the connection ($PROBE_ERR); fix the user/password in DATABASE_URL or the server's pg_hba.conf" ;;
    *) die "Postgres at $where is not reachable and could not be started; install PostgreSQL or set DATABASE_URL to a reachable server" ;;
  esac
}

ensure_database() {
  local name="$1" where="$PG_HOST:$PG_PORT"
  probe createdb "$name"
  case "$PROBE_RC" in
    0) if [[ "$PROBE_OUT" == created ]]; then log "created database $name"; fi ;;
    *) die "could not create database $name on Postgres at $where ($PROBE_ERR); create it by hand or grant the DATABASE_URL user CREATEDB" ;;
  esac
}

# ---------------------------------------------------------------- Redis

start_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    if ! is_root; then
      log "redis-server is not installed and we are not root, so cannot install it"
      return 1
    fi
    apt_install redis-server || return 1
    # The package may have started its own server already (on 6379).
    probe redis
    if [[ "$PROBE_RC" == 0 ]]; then return 0; fi
  fi
  local bind=(127.0.0.1)
  case "$REDIS_HOST" in
    ::1 | '[::1]') bind=(::1) ;;
    localhost) bind=(127.0.0.1 -::1) ;; # "-": skip ::1 quietly where IPv6 is off
  esac
  log "starting redis-server on port $REDIS_PORT (no persistence)"
  redis-server --daemonize yes --bind "${bind[@]}" --port "$REDIS_PORT" --save "" --appendonly no >&2
}

ensure_redis() {
  local where="$REDIS_HOST:$REDIS_PORT"
  probe redis
  case "$PROBE_RC" in
    0) return 0 ;;
    1) ;;
    2) die "Redis at $where refused us ($PROBE_ERR); fix the password in REDIS_URL" ;;
    *) die "cannot probe Redis: $PROBE_ERR" ;;
  esac
  if ! is_local_host "$REDIS_HOST"; then
    die "Redis at $where is not reachable ($PROBE_ERR); start it or set REDIS_URL to a reachable server"
  fi
  log "Redis at $where is not answering; trying to start it"
  local rc=0
  if start_redis; then
    wait_for "Redis at $where" redis || rc=$?
  else
    probe redis
    rc="$PROBE_RC"
  fi
  case "$rc" in
    0) log "Redis at $where is up" ;;
    2) die "Redis at $where refused us ($PROBE_ERR); fix the password in REDIS_URL" ;;
    *) die "Redis at $where is not reachable and could not be started; install Redis (redis-server) or set REDIS_URL to a reachable server" ;;
  esac
}

# ---------------------------------------------------------------- main

main() {
  command -v node >/dev/null 2>&1 || die "node is not installed; install Node 20 and run npm ci"

  probe describe pg
  [[ "$PROBE_RC" == 0 ]] || die "DATABASE_URL is not usable: $PROBE_ERR"
  read -r PG_HOST PG_PORT PG_USER PG_DB <<<"$PROBE_OUT"
  PG_DB="${PG_DB:-}"
  PG_PASSWORD="$(node -e 'const u = new URL(process.env.DATABASE_URL); process.stdout.write(decodeURIComponent(u.password))')"

  probe describe redis
  [[ "$PROBE_RC" == 0 ]] || die "REDIS_URL is not usable: $PROBE_ERR"
  read -r REDIS_HOST REDIS_PORT <<<"$PROBE_OUT"

  ensure_postgres
  ensure_redis

  local database="${1:-$PG_DB}"
  if [[ -n "$database" ]]; then
    ensure_database "$database"
  fi
}

# Run main unless sourced (sourcing lets you call single functions when debugging).
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
