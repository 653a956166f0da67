# A throwaway MariaDB server in a directory of its own: its own datadir, socket, port and
# error log, started with the settings cdc needs (or others, for tests that want a badly
# configured server). Never touches the system service. Sourced by the scripts and tests.
#
#   throwaway_start DIR [extra mariadbd options...]   sets THROWAWAY_PORT, THROWAWAY_SOCKET
#   throwaway_stop DIR                                 stops the server, removes DIR
#
# Accounts: root (socket only, no password); cdc / $THROWAWAY_CDC_PASSWORD with exactly the
# grants cdc-plan --check asks for (man/cdc-plan.1), on 127.0.0.1 and localhost.

THROWAWAY_CDC_PASSWORD=${THROWAWAY_CDC_PASSWORD:-cdc-test-secret}

_throwaway_port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

_throwaway_bin() {
  local name
  for name in "$@"; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
    if [[ -x /usr/sbin/$name ]]; then
      echo "/usr/sbin/$name"
      return 0
    fi
  done
  echo "throwaway_mariadb: none of $* found; install mariadb-server" >&2
  return 1
}

throwaway_start() {
  local dir=$1
  shift
  local mariadbd install_db
  mariadbd=$(_throwaway_bin mariadbd mysqld) || return 1
  install_db=$(_throwaway_bin mariadb-install-db mysql_install_db) || return 1
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  THROWAWAY_SOCKET="$dir/mysqld.sock"
  local started=$SECONDS
  # A temp directory of its own: concurrent installs in the shared /tmp clash on their temp
  # tables (mysql.tmp_user_sys), and tests start servers in parallel.
  mkdir -p "$dir/tmp"
  if ! "$install_db" --no-defaults --user="$(id -un)" --datadir="$dir/data" --tmpdir="$dir/tmp" --skip-test-db \
      --auth-root-authentication-method=socket >"$dir/install.log" 2>&1; then
    echo "throwaway_mariadb: mariadb-install-db failed; see $dir/install.log:" >&2
    tail -5 "$dir/install.log" >&2
    return 1
  fi
  local attempt port
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$((20000 + RANDOM % 20000))
    _throwaway_port_free "$port" || continue
    "$mariadbd" --no-defaults --user="$(id -un)" --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$THROWAWAY_SOCKET" \
      --port="$port" --bind-address=127.0.0.1 --pid-file="$dir/mysqld.pid" --log-error="$dir/error.log" \
      --skip-name-resolve --innodb-buffer-pool-size=64M --innodb-log-file-size=16M \
      --log-bin="$dir/data/binlog" --server-id=1 --gtid-domain-id=0 --gtid-strict-mode=ON \
      --binlog-format=ROW --binlog-row-image=FULL --binlog-row-metadata=FULL --binlog-checksum=CRC32 \
      --expire-logs-days=7 \
      "$@" >"$dir/stdout.log" 2>&1 &
    echo $! >"$dir/launcher.pid"
    local waited=0
    while ((waited < 600)); do
      if mariadb-admin --no-defaults --socket="$THROWAWAY_SOCKET" -uroot ping >/dev/null 2>&1; then
        THROWAWAY_PORT=$port
        break 2
      fi
      if ! kill -0 "$(cat "$dir/launcher.pid")" 2>/dev/null; then
        break
      fi
      sleep 0.1
      waited=$((waited + 1))
    done
    kill "$(cat "$dir/launcher.pid")" 2>/dev/null
    if grep -q "Address already in use\|Can't start server: Bind" "$dir/error.log" 2>/dev/null; then
      continue
    fi
    echo "throwaway_mariadb: the server did not start; last lines of $dir/error.log:" >&2
    tail -15 "$dir/error.log" >&2
    return 1
  done
  if [[ -z ${THROWAWAY_PORT:-} ]]; then
    echo "throwaway_mariadb: no free port found for the server" >&2
    return 1
  fi
  mariadb --no-defaults --socket="$THROWAWAY_SOCKET" -uroot <<SQL || return 1
CREATE USER 'cdc'@'127.0.0.1' IDENTIFIED BY '$THROWAWAY_CDC_PASSWORD';
CREATE USER 'cdc'@'localhost' IDENTIFIED BY '$THROWAWAY_CDC_PASSWORD';
GRANT SELECT, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'cdc'@'127.0.0.1';
GRANT SELECT, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'cdc'@'localhost';
SQL
  THROWAWAY_STARTUP_SECONDS=$((SECONDS - started))
  export THROWAWAY_PORT THROWAWAY_SOCKET THROWAWAY_CDC_PASSWORD THROWAWAY_STARTUP_SECONDS
}

throwaway_stop() {
  local dir=$1
  [[ -d $dir ]] || return 0
  if [[ ! -f $dir/launcher.pid ]]; then
    # Given the parent of a server directory: stop what is inside rather than delete the
    # datadir from under a running server.
    local nested
    for nested in "$dir"/*/launcher.pid; do
      [[ -f $nested ]] && throwaway_stop "$(dirname "$nested")"
    done
  fi
  if [[ -f $dir/launcher.pid ]]; then
    local pid
    pid=$(cat "$dir/launcher.pid")
    if kill -0 "$pid" 2>/dev/null; then
      mariadb-admin --no-defaults --socket="$dir/mysqld.sock" -uroot shutdown >/dev/null 2>&1 || kill "$pid" 2>/dev/null
      local waited=0
      while kill -0 "$pid" 2>/dev/null && ((waited < 300)); do
        sleep 0.1
        waited=$((waited + 1))
      done
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  rm -rf "$dir"
}
