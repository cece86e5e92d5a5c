#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A private PostgreSQL cluster for the tests: `pgctl.sh start DIR` creates
# it in DIR (initdb), starts it on a unix socket inside DIR only (no TCP
# listener, so parallel runs never collide) and prints the environment the
# tests read, as `export NAME=VALUE` lines for eval:
#   PROBE_TEST_PG_URL          the owner role (creates schemas, migrates)
#   PROBE_TEST_PG_SERVICE_URL  the service role: LOGIN, not a superuser,
#                              NOBYPASSRLS (row-level security applies)
# (and the role probe_reader, which query_sql connects as: it may read the
# views of <schema>_sql, scoped by a token per statement, and nothing else)
#   PROBE_TEST_PG_DIR          DIR
# `pgctl.sh stop DIR` stops it and removes DIR. `pgctl.sh restart DIR`
# restarts the server and `halt DIR` stops it keeping the cluster (the
# tests' lost-connection cases use them).
# initdb refuses to run as root: as root the cluster belongs to the
# `postgres` user (created by Debian's package) or, failing that, `nobody`.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop|restart|halt|status DIR" >&2
  exit 2
fi

bindir=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && bindir=$d
done
if [ -z "$bindir" ]; then
  if command -v initdb >/dev/null 2>&1; then
    bindir=$(dirname "$(command -v initdb)")
  else
    echo "pgctl.sh: no PostgreSQL server binaries (install postgresql)" >&2
    exit 3
  fi
fi

runas=""
if [ "$(id -u)" -eq 0 ]; then
  if getent passwd postgres >/dev/null; then runas=postgres; else runas=nobody; fi
fi
# runuser lives in sbin, which a scrubbed PATH may lack
runuser=$(PATH="$PATH:/usr/sbin:/sbin" command -v runuser || true)
as_owner() {
  if [ -n "$runas" ]; then
    if [ -z "$runuser" ]; then
      echo "pgctl.sh: runuser (util-linux) not found; run as a user other than root" >&2
      exit 3
    fi
    "$runuser" -u "$runas" -- "$@"
  else
    "$@"
  fi
}

data=$dir/data
sock=$dir
url() { printf 'postgresql:///probe?host=%s&user=%s' "$sock" "$1"; }

case "$cmd" in
start)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  sock=$dir
  data=$dir/data
  if [ ! -f "$data/PG_VERSION" ]; then
    # The unix socket path must stay under ~100 bytes.
    if [ "${#dir}" -gt 80 ]; then
      echo "pgctl.sh: $dir is too long for a unix socket path" >&2
      exit 2
    fi
    [ -n "$runas" ] && chown "$runas" "$dir"
    chmod 0755 "$dir"
    as_owner "$bindir/initdb" -D "$data" -U probe_admin --auth=trust -E UTF8 \
      --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
      cat "$dir/initdb.log" >&2
      exit 1
    }
    # A throwaway test cluster: durability traded for speed.
    cat >>"$data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$sock'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 64MB
EOF
  fi
  if ! as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 start >/dev/null || {
      cat "$dir/server.log" >&2
      exit 1
    }
  fi
  psql=("$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -U probe_admin -d postgres)
  if ! "${psql[@]}" -tAc "SELECT 1 FROM pg_roles WHERE rolname='probe_owner'" | grep -q 1; then
    "${psql[@]}" <<'EOF'
CREATE ROLE probe_owner LOGIN NOSUPERUSER NOBYPASSRLS CREATEDB;
CREATE ROLE probe_service LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
CREATE ROLE probe_reader LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
CREATE DATABASE probe OWNER probe_owner;
-- the tests kill other roles' sessions to check reconnection
GRANT pg_signal_backend TO probe_owner;
EOF
  fi
  echo "export PROBE_TEST_PG_DIR='$dir'"
  echo "export PROBE_TEST_PG_URL='$(url probe_owner)'"
  echo "export PROBE_TEST_PG_SERVICE_URL='$(url probe_service)'"
  ;;
halt)
  # Stops the server and keeps the cluster (start brings it back).
  as_owner "$bindir/pg_ctl" -D "$data" -w -t 60 -m fast stop >/dev/null
  ;;
restart)
  as_owner "$bindir/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 -m fast restart >/dev/null
  ;;
status)
  as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null
  ;;
stop)
  if [ -f "$data/postmaster.pid" ]; then
    as_owner "$bindir/pg_ctl" -D "$data" -w -t 60 -m fast stop >/dev/null || true
  fi
  case "$dir" in
    /|"") ;;
    *) rm -rf "$dir" ;;
  esac
  ;;
*)
  echo "usage: $0 start|stop|restart|status DIR" >&2
  exit 2
  ;;
esac
