# A throwaway PostgreSQL server in a directory of its own (Debian's postgresql package:
# initdb and pg_ctl of the newest /usr/lib/postgresql/*/bin): its own data directory, its unix
# socket in that directory and no TCP listener, trust authentication for local connections.
# Never touches the system's clusters. Sourced by the tests (tests/integration/apply_postgres.sh).
#
#   pg_throwaway_bin                 the bin directory, or return 1 when PostgreSQL is not installed
#   pg_throwaway_start DIR           sets PG_THROWAWAY_CONNINFO (user cdc, database copy),
#                                    PG_THROWAWAY_SOCKET_DIR, PG_THROWAWAY_PORT
#   pg_throwaway_restart DIR [MODE]  pg_ctl stop -m MODE (default immediate: a crash), then start
#   pg_throwaway_stop DIR            stops the server, removes DIR
#   pg_throwaway_psql DIR ARGS...    psql as the superuser postgres, database copy
#
# postgres refuses to run as root: as root, the server runs as the postgres user that the
# package creates (runuser), which owns DIR; DIR's parent is made traversable for it (a+x).
# Accounts: postgres (superuser) and cdc, which owns the database copy and nothing else.

pg_throwaway_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [[ -n $dir && -x $dir/initdb && -x $dir/pg_ctl && -x $dir/psql ]] || return 1
  echo "$dir"
}

# _pg_as_owner CMD...: runs CMD as the server's owner (postgres when we are root).
_pg_as_owner() {
  if [[ $(id -u) == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

_pg_ctl_start() {
  local dir=$1 bin
  bin=$(pg_throwaway_bin) || return 1
  # fsync off: the tests crash the server's processes (stop -m immediate), not the machine, so
  # what was written reaches the disk through the page cache all the same.
  _pg_as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $PG_THROWAWAY_PORT -k $dir -c listen_addresses='' -c fsync=off -c max_connections=30" start \
    >"$dir/pg_ctl.log" 2>&1 || {
    echo "throwaway_postgres: the server did not start; last lines of $dir/server.log:" >&2
    tail -15 "$dir/server.log" >&2
    return 1
  }
}

pg_throwaway_start() {
  local dir=$1 bin
  bin=$(pg_throwaway_bin) || {
    echo "throwaway_postgres: no /usr/lib/postgresql/*/bin/initdb; install postgresql" >&2
    return 1
  }
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [[ $(id -u) == 0 ]]; then
    chmod a+x "$(dirname "$dir")"
    chown postgres: "$dir"
  fi
  _pg_as_owner "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || {
    echo "throwaway_postgres: initdb failed; see $dir/initdb.log:" >&2
    tail -5 "$dir/initdb.log" >&2
    return 1
  }
  # Only a unix socket, in DIR: the port names the socket file, so any number is free.
  PG_THROWAWAY_PORT=$((20000 + RANDOM % 20000))
  PG_THROWAWAY_SOCKET_DIR=$dir
  _pg_ctl_start "$dir" || return 1
  pg_throwaway_psql "$dir" -d postgres -c "CREATE ROLE cdc LOGIN" -c "CREATE DATABASE copy OWNER cdc" >/dev/null || return 1
  PG_THROWAWAY_CONNINFO="host=$dir port=$PG_THROWAWAY_PORT dbname=copy user=cdc"
  echo "$PG_THROWAWAY_PORT" >"$dir/port"
  export PG_THROWAWAY_CONNINFO PG_THROWAWAY_SOCKET_DIR PG_THROWAWAY_PORT
}

pg_throwaway_restart() {
  local dir=$1 mode=${2:-immediate} bin
  bin=$(pg_throwaway_bin) || return 1
  _pg_as_owner "$bin/pg_ctl" -D "$dir/data" -m "$mode" -w stop >>"$dir/pg_ctl.log" 2>&1
  _pg_ctl_start "$dir"
}

pg_throwaway_psql() {
  local dir=$1 bin
  shift
  bin=$(pg_throwaway_bin) || return 1
  "$bin/psql" -X -v ON_ERROR_STOP=1 -q -h "$dir" -p "$(cat "$dir/port" 2>/dev/null || echo "$PG_THROWAWAY_PORT")" \
    -U postgres -d copy "$@"
}

pg_throwaway_stop() {
  local dir=$1 bin
  [[ -d $dir ]] || return 0
  if bin=$(pg_throwaway_bin) && [[ -f $dir/data/postmaster.pid ]]; then
    _pg_as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
  fi
  rm -rf "$dir"
}
