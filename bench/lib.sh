# bench/lib.sh — what the benchmarks share: a throwaway MariaDB with durability off, the
# sysbench-style table, GNU time, medians. Sourced (not run) by bench/*.sh, which set
# CDC_ROOT first and `set -euo pipefail`.
#
#   bench_setup NAME                  installs missing packages (CDC_PACKAGES, plus time), makes
#                                     $BENCH_WORK (removed at exit, the server stopped with it)
#   bench_tools_dir TOOL...           sets BENCH_TOOLS to where the cdc tools are (CDC_TOOLS_DIR,
#                                     else build/tools of this clone); fails when one is missing
#   bench_start_server [OPTION...]    starts the server in $BENCH_WORK/server: a 1 GiB buffer pool,
#                                     innodb_flush_log_at_trx_commit=0, sync_binlog=0, no
#                                     doublewrite; sets BENCH_PORT, BENCH_SERVER_PID, BENCH_CDC_CONN
#   bench_sql [mariadb options...]    the mariadb client as root over the socket, -N -B
#   bench_load_sbtest ROWS [BATCH]    CREATE + fill bench.sbtest1 (id INT PRIMARY KEY, k INT with
#                                     KEY k_1, c CHAR(120), pad CHAR(60)) as sysbench does, from the
#                                     sequence engine, out of the binlog; sets BENCH_TABLE_BYTES
#   bench_time FILE command...        runs the command under GNU time; FILE gets "wall_s cpu_s rss_kib"
#   bench_median                      a filter: the median of the numbers on stdin, one a line
#   bench_commas N                    1234567 -> 1,234,567
#   bench_log TEXT                    "# TEXT" on stderr

source "$CDC_ROOT/scripts/lib/deps.sh"
source "$CDC_ROOT/scripts/lib/throwaway_mariadb.sh"

BENCH_NAME=bench
bench_log() { echo "# $*" >&2; }
bench_die() { echo "$BENCH_NAME: $*" >&2; exit 1; }

bench_setup() {
  BENCH_NAME=$1
  CDC_PACKAGES+=(time)
  cdc_install_packages
  BENCH_WORK=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench-$BENCH_NAME.XXXXXX")
  trap _bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

_bench_cleanup() {
  throwaway_stop "$BENCH_WORK/server" || true
  rm -rf "$BENCH_WORK"
}

bench_tools_dir() {
  BENCH_TOOLS=${CDC_TOOLS_DIR:-$CDC_ROOT/build/tools}
  local tool
  for tool in "$@"; do
    [[ -x $BENCH_TOOLS/$tool ]] ||
      bench_die "$BENCH_TOOLS/$tool not found: build first (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j) or set CDC_TOOLS_DIR"
  done
  local build_type
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BENCH_TOOLS/../CMakeCache.txt" 2>/dev/null || true)
  [[ -z $build_type || $build_type == Release ]] ||
    bench_log "note: the cdc tools are a $build_type build; figures for the README come from a Release build"
}

bench_start_server() {
  bench_log "starting a throwaway MariaDB in $BENCH_WORK/server"
  throwaway_start "$BENCH_WORK/server" --innodb-buffer-pool-size=1G --innodb-log-file-size=1G \
    --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 --innodb-doublewrite=0 --max-binlog-size=1G "$@"
  BENCH_PORT=$THROWAWAY_PORT
  BENCH_SERVER_PID=$(cat "$BENCH_WORK/server/launcher.pid")
  BENCH_CDC_CONN=(-h 127.0.0.1 -P "$BENCH_PORT" -u cdc --password="$THROWAWAY_CDC_PASSWORD")
}

bench_sql() {
  "$(command -v mariadb || command -v mysql)" --no-defaults --socket="$THROWAWAY_SOCKET" -uroot -N -B "$@"
}

# SQL expressions for sysbench's c (ten groups of 11 random digits joined by '-') and pad (five).
_bench_digits="LPAD(FLOOR(RAND() * 100000000000), 11, '0')"
BENCH_C_EXPR="CONCAT_WS('-'$(printf ", $_bench_digits%.0s" 1 2 3 4 5 6 7 8 9 10))"
BENCH_PAD_EXPR="CONCAT_WS('-'$(printf ", $_bench_digits%.0s" 1 2 3 4 5))"

bench_load_sbtest() {
  local rows=$1 batch=${2:-100000} first n loaded
  {
    echo "SET SESSION sql_log_bin = 0;"
    echo "CREATE DATABASE bench;"
    echo "CREATE TABLE bench.sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0,"
    echo "  c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB;"
    echo "USE bench;"
    for ((first = 1; first <= rows; first += batch)); do
      n=$((rows - first + 1 < batch ? rows - first + 1 : batch))
      echo "INSERT INTO sbtest1 (id, k, c, pad) SELECT seq + $((first - 1)), FLOOR(1 + RAND() * $rows), $BENCH_C_EXPR, $BENCH_PAD_EXPR FROM seq_1_to_$n;"
    done
    echo "ANALYZE TABLE bench.sbtest1;"
    echo "SELECT COUNT(*) FROM bench.sbtest1;"
  } >"$BENCH_WORK/load.sql"
  bench_log "loading $rows sysbench-style rows ($batch a batch)"
  local start=$SECONDS
  loaded=$(bench_sql <"$BENCH_WORK/load.sql" | tail -1)
  [[ $loaded == "$rows" ]] || bench_die "loaded $loaded rows, wanted $rows"
  BENCH_TABLE_BYTES=$(bench_sql -e "SELECT DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA='bench' AND TABLE_NAME='sbtest1'")
  bench_log "loaded in $((SECONDS - start)) s; $((BENCH_TABLE_BYTES / 1048576)) MiB of clustered index"
}

# GNU time writes "Command exited with non-zero status N" before its figures when the command
# fails; the status is passed on.
bench_time() {
  local file=$1 start status=0
  shift
  start=$EPOCHREALTIME
  /usr/bin/time -f '%M %U %S' -o "$file.time" "$@" || status=$?
  awk -v s="$start" -v e="$EPOCHREALTIME" '/^Command/ { next } { printf "%.3f %.3f %d\n", e - s, $2 + $3, $1 }' \
    "$file.time" >"$file"
  rm -f "$file.time"
  return "$status"
}

bench_median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

bench_commas() {
  awk -v x="$1" 'BEGIN { s = sprintf("%d", x); while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } print s r }'
}
