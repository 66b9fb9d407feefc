# Sourced by start.sh and test.sh: finds (or starts) Postgres and Redis and exports
# DATABASE_URL and REDIS_URL. Uses the configured URLs when they answer, then the
# standard local ports, and otherwise starts project-local servers with data in .data/
# (installing Debian's postgresql / redis-server when missing and running as root).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="$ROOT/.data"
LOCAL_PG_PORT="${LOCAL_PG_PORT:-54329}"
LOCAL_REDIS_PORT="${LOCAL_REDIS_PORT:-63799}"
STARTED_PG=""
STARTED_REDIS=""

log() { printf '[stack] %s\n' "$*" >&2; }

ensure_node_modules() {
  if [ ! -x "$ROOT/node_modules/.bin/tsx" ] || [ "$ROOT/package-lock.json" -nt "$ROOT/node_modules/.package-lock.json" ]; then
    log "installing dependencies (npm ci)"
    (cd "$ROOT" && npm ci --no-audit --no-fund)
  fi
}

# Node.js 24 LTS first on PATH for what follows (the suite, the API, the workers), fetched
# from the npm registry when the system's Node is older (scripts/node-lts.sh); NODE_LTS=0
# keeps the system's Node (20 starts with a warning: it reached end of life in April 2026).
use_node_lts() {
  if [ "${NODE_LTS:-1}" = "0" ]; then return; fi
  local dir
  dir="$(bash "$ROOT/scripts/node-lts.sh")"
  export PATH="$dir:$PATH"
  log "Node.js $(node --version) ($dir)"
}

probe() { (cd "$ROOT" && node_modules/.bin/tsx scripts/probe.ts "$1" "$2"); }

apt_install() {
  if [ "$(id -u)" != "0" ]; then
    log "$1 is not installed. Install Debian's '$1' package, or set DATABASE_URL / REDIS_URL to a running server."
    exit 1
  fi
  log "installing Debian package $1"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

as_pg_user() {
  if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Where the local cluster lives: .data/pg, unless the service account cannot reach the
# checkout (e.g. a clone under root's 0700 home), then a folder of its own under
# /var/lib/postgresql named after the checkout, linked from .data/pg.
PG_DIR="$DATA/pg"
PG_RUN="$DATA/pg-run"

choose_pg_dirs() {
  mkdir -p "$DATA"
  if [ "$(id -u)" = "0" ] && ! runuser -u postgres -- test -x "$DATA" 2>/dev/null; then
    local home="/var/lib/postgresql/escrow-local-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)"
    mkdir -p "$home/pg" "$home/run"
    chown -R postgres:postgres "$home"
    [ -e "$DATA/pg" ] || ln -s "$home/pg" "$DATA/pg"
    PG_DIR="$home/pg"
    PG_RUN="$home/run"
    log "the postgres account cannot reach $DATA; the local cluster lives in $home"
  fi
}

start_local_pg() {
  local bin; bin="$(pg_bin)"
  if [ -z "$bin" ]; then apt_install postgresql; bin="$(pg_bin)"; fi
  choose_pg_dirs
  mkdir -p "$PG_RUN"
  if [ ! -f "$PG_DIR/PG_VERSION" ]; then
    log "creating a project-local Postgres cluster in $PG_DIR"
    mkdir -p "$PG_DIR"
    if [ "$(id -u)" = "0" ]; then chown -R postgres:postgres "$PG_DIR" "$PG_RUN"; fi
    as_pg_user "$bin/initdb" -D "$PG_DIR" -U postgres --auth=trust -E UTF8 >/dev/null
  fi
  if [ "$(id -u)" = "0" ]; then chown -R postgres:postgres "$PG_DIR" "$PG_RUN"; fi
  if ! as_pg_user "$bin/pg_ctl" -D "$PG_DIR" status >/dev/null 2>&1; then
    log "starting project-local Postgres on 127.0.0.1:$LOCAL_PG_PORT"
    as_pg_user "$bin/pg_ctl" -D "$PG_DIR" -l "$PG_RUN/postgres.log" -w \
      -o "-p $LOCAL_PG_PORT -c listen_addresses=127.0.0.1 -k $PG_RUN" start >/dev/null
    STARTED_PG="$bin"
  fi
}

start_local_redis() {
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  mkdir -p "$DATA/redis"
  log "starting project-local Redis on 127.0.0.1:$LOCAL_REDIS_PORT"
  redis-server --port "$LOCAL_REDIS_PORT" --bind 127.0.0.1 --dir "$DATA/redis" --daemonize yes \
    --pidfile "$DATA/redis/redis.pid" --logfile "$DATA/redis/redis.log" --appendonly yes --save "" >/dev/null
  for _ in $(seq 1 50); do probe redis "redis://127.0.0.1:$LOCAL_REDIS_PORT" && break; sleep 0.1; done
  STARTED_REDIS=1
}

# Stops what this script started (Ctrl-C in start.sh, end of test.sh).
stop_stack() {
  if [ -n "$STARTED_PG" ]; then
    log "stopping project-local Postgres"
    as_pg_user "$STARTED_PG/pg_ctl" -D "$PG_DIR" -m fast -w stop >/dev/null 2>&1 || true
    STARTED_PG=""
  fi
  if [ -n "$STARTED_REDIS" ] && [ -f "$DATA/redis/redis.pid" ]; then
    log "stopping project-local Redis"
    kill "$(cat "$DATA/redis/redis.pid")" 2>/dev/null || true
    STARTED_REDIS=""
  fi
}

resolve_stack() {
  ensure_node_modules
  local default_pg="postgres://postgres@127.0.0.1:5432/escrow"
  local default_redis="redis://127.0.0.1:6379/0"
  if [ -n "${DATABASE_URL:-}" ] && probe pg "$DATABASE_URL"; then
    log "Postgres: using DATABASE_URL"
  elif [ -z "${DATABASE_URL:-}" ] && probe pg "$default_pg"; then
    export DATABASE_URL="$default_pg"
    log "Postgres: using the server on 127.0.0.1:5432"
  else
    if [ -n "${DATABASE_URL:-}" ]; then log "DATABASE_URL does not answer; falling back to a project-local server"; fi
    start_local_pg
    export DATABASE_URL="postgres://postgres@127.0.0.1:$LOCAL_PG_PORT/escrow"
  fi
  if [ -n "${REDIS_URL:-}" ] && probe redis "$REDIS_URL"; then
    log "Redis: using REDIS_URL"
  elif [ -z "${REDIS_URL:-}" ] && probe redis "$default_redis"; then
    export REDIS_URL="$default_redis"
    log "Redis: using the server on 127.0.0.1:6379"
  else
    if [ -n "${REDIS_URL:-}" ]; then log "REDIS_URL does not answer; falling back to a project-local server"; fi
    start_local_redis
    export REDIS_URL="redis://127.0.0.1:$LOCAL_REDIS_PORT/0"
  fi
}

# use_side_stores NAME REDIS_DB: points DATABASE_URL at database NAME on the same server
# (NAME may use {name}, the configured database's name) and REDIS_URL at database
# REDIS_DB, for the test and bench runs that must not touch the development data.
use_side_stores() {
  local name="$1" redis_db="$2"
  if [[ "$DATABASE_URL" =~ ^(postgres(ql)?://[^/]+)/([^?]+)(\?.*)?$ ]]; then
    export DATABASE_URL="${BASH_REMATCH[1]}/${name//\{name\}/${BASH_REMATCH[3]}}${BASH_REMATCH[4]}"
  else
    log "DATABASE_URL must name a database"; exit 1
  fi
  if [[ "$REDIS_URL" =~ ^(rediss?://[^/]+)(/[0-9]*)?$ ]]; then
    export REDIS_URL="${BASH_REMATCH[1]}/${redis_db}"
  else
    log "REDIS_URL is not a redis:// URL"; exit 1
  fi
}
