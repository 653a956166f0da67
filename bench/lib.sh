# bench/lib.sh — what the benchmarks share: their arguments, a throwaway MariaDB with
# durability off, the sysbench-style table, the 40/40/20 change load, GNU time, medians. Sourced
# (not run) by bench/*.sh, which set CDC_ROOT first and `set -euo pipefail`.
#
#   bench_args NAME 'OPTION...' 'FLAG...' "$@"
#                                     the script's arguments: each OPTION (--rows) takes a value, as
#                                     --rows N or --rows=N, into the variable of its name
#                                     (--batch-rows: batch_rows); each FLAG (--no-writes) sets its
#                                     variable (no_writes) to yes; -h/--help prints the script's
#                                     "# Usage:" comment (up to "# Runs as root"); else exit 2
#   bench_positive NAME...            exit 2 unless each named variable holds a positive integer
#   bench_setup NAME                  installs missing packages (CDC_PACKAGES, plus time), makes
#                                     $BENCH_WORK (removed at exit, the server stopped with it)
#   bench_tools_dir TOOL...           sets BENCH_TOOLS to where the cdc tools are (CDC_TOOLS_DIR,
#                                     else build/tools of this clone); fails when one is missing
#   bench_start_server [OPTION...]    starts the server in $BENCH_WORK/server: a 1 GiB buffer pool,
#                                     innodb_flush_log_at_trx_commit=0, sync_binlog=0, no
#                                     doublewrite; sets BENCH_PORT, BENCH_SERVER_PID, BENCH_CDC_CONN
#   bench_sql [mariadb options...]    the mariadb client as root over the socket, -N -B
#   bench_reference_account           the bench account (all grants) the other tools log in as;
#                                     sets BENCH_REF_PASSWORD and BENCH_REF_CONN (--host= --port=
#                                     --user= --password=, as the mariadb client takes them)
#   bench_dumpers                     sets BENCH_MYDUMPER and BENCH_MARIADB_DUMP (or mysqldump)
#   bench_server_cpu                  the user+sys CPU seconds mariadbd has used so far (/proc)
#   bench_load_table TABLE ROWS BATCH 'COLUMNS...' 'VALUES...'
#                                     CREATE + fill bench.TABLE (COLUMNS: its definition) with ROWS
#                                     rows, one per seq of the sequence engine (VALUES: the SELECT
#                                     list, in terms of seq = 1..ROWS), BATCH rows a statement, out
#                                     of the binlog; then ANALYZE TABLE; sets BENCH_TABLE_BYTES
#   bench_load_sbtest ROWS [BATCH]    CREATE + fill bench.sbtest1 (id INT PRIMARY KEY, k INT with
#                                     KEY k_1, c CHAR(120), pad CHAR(60)) as sysbench does
#                                     (bench_load_table); sets BENCH_TABLE_BYTES
#   bench_mariadb_binlog              sets BENCH_MARIADB_BINLOG: mariadb-binlog (or mysqlbinlog)
#   bench_change_load ROWS TXN_ROWS TABLE 'COLUMNS...' INSERT_FN UPDATE_FN
#                                     RESET MASTER, then ROWS row changes into bench.TABLE (made
#                                     out of the binlog): 40% INSERTs, 40% UPDATEs, 20% DELETEs by
#                                     id ranges, TXN_ROWS rows a transaction, then FLUSH BINARY LOGS.
#                                     INSERT_FN FIRST LAST prints the INSERT of ids FIRST..LAST,
#                                     UPDATE_FN FIRST LAST the UPDATE of them. Sets
#                                     BENCH_INSERTS BENCH_UPDATES BENCH_DELETES BENCH_TXNS (as the
#                                     server counted them) and BENCH_ROW_CHANGES
#   bench_count_ops                   a filter: cdc-stream's lines in, "C U D COMMITS LINES OTHER"
#                                     out (OTHER: lines that do not begin {"op":; span lines left out)
#   bench_count_mb_rows               a filter: mariadb-binlog -v text in, its row changes out
#   bench_check_decoded 'C U D COMMITS LINES OTHER' MB_ROWS
#                                     fails unless cdc-stream wrote one c/u/d line per row change of
#                                     bench_change_load, one commit line per transaction and nothing
#                                     else, and mariadb-binlog printed as many row changes (returns 1)
#   bench_time FILE command...        runs the command under GNU time; FILE gets "wall_s cpu_s rss_kib"
#   bench_stats FILE                  FILE: bench_time lines, one a run; prints "median_wall_s
#                                     min_wall_s median_cpu_s max_rss_kib"
#   bench_median                      a filter: the median of the numbers on stdin, one a line
#   bench_commas N                    1234567 -> 1,234,567
#   bench_log TEXT                    "# TEXT" on stderr

source "$CDC_ROOT/scripts/lib/deps.sh"
source "$CDC_ROOT/scripts/lib/throwaway_mariadb.sh"

BENCH_NAME=bench
bench_log() { echo "# $*" >&2; }
bench_die() { echo "$BENCH_NAME: $*" >&2; exit 1; }
_bench_usage() { sed -n '/^# Usage:/,/^# Runs as root/s/^# \{0,1\}//p' "$0"; }
_bench_usage_error() {
  echo "$BENCH_NAME: $*" >&2
  _bench_usage >&2
  exit 2
}

bench_args() {
  BENCH_NAME=$1
  local -a options flags
  read -r -a options <<<"$2"
  read -r -a flags <<<"$3"
  shift 3
  local arg name value known
  while (($# > 0)); do
    arg=$1 name=${1%%=*} known=
    shift
    if [[ $arg == -h || $arg == --help ]]; then
      _bench_usage
      exit 0
    fi
    for value in "${flags[@]}"; do [[ $arg == "$value" ]] && known=flag; done
    for value in "${options[@]}"; do [[ $name == "$value" ]] && known=option; done
    case $known in
      flag) value=yes ;;
      option)
        if [[ $arg == *=* ]]; then
          value=${arg#*=}
        else
          (($# > 0)) || _bench_usage_error "$arg needs a value"
          value=$1
          shift
        fi ;;
      *) _bench_usage_error "unknown argument '$arg'" ;;
    esac
    name=${name#--}
    printf -v "${name//-/_}" '%s' "$value"
  done
}

bench_positive() {
  local name
  for name in "$@"; do
    [[ ${!name} =~ ^[1-9][0-9]*$ ]] ||
      _bench_usage_error "--${name//_/-} takes a positive integer, not '${!name}'"
  done
}

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

bench_reference_account() {
  BENCH_REF_PASSWORD=bench-reader-secret
  bench_sql -e "CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '$BENCH_REF_PASSWORD';
                GRANT ALL ON *.* TO 'bench'@'127.0.0.1';"
  BENCH_REF_CONN=(--host=127.0.0.1 --port="$BENCH_PORT" --user=bench --password="$BENCH_REF_PASSWORD")
}

bench_dumpers() {
  BENCH_MYDUMPER=$(command -v mydumper) || bench_die "mydumper not found (package mydumper)"
  BENCH_MARIADB_DUMP=$(command -v mariadb-dump || command -v mysqldump) ||
    bench_die "mariadb-dump not found (package mariadb-client)"
}

bench_server_cpu() {
  # Fields 14 and 15 of /proc/PID/stat (utime, stime), counted after the ") " that ends the name.
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.2f\n", ($12 + $13) / hz }' "/proc/$BENCH_SERVER_PID/stat"
}

bench_load_table() {
  local table=$1 rows=$2 batch=$3 columns=$4 values=$5 first last loaded
  {
    echo "SET SESSION sql_log_bin = 0;"
    echo "CREATE DATABASE IF NOT EXISTS bench;"
    echo "CREATE TABLE bench.$table ($columns) ENGINE=InnoDB;"
    echo "USE bench;"
    for ((first = 1; first <= rows; first += batch)); do
      last=$((first + batch - 1 < rows ? first + batch - 1 : rows))
      echo "INSERT INTO $table SELECT $values FROM seq_${first}_to_$last;"
    done
    echo "ANALYZE TABLE bench.$table;"
    echo "SELECT COUNT(*) FROM bench.$table;"
  } >"$BENCH_WORK/load.$table.sql"
  bench_log "loading $rows rows into bench.$table ($batch a batch)"
  local start=$SECONDS
  loaded=$(bench_sql <"$BENCH_WORK/load.$table.sql" | tail -1)
  [[ $loaded == "$rows" ]] || bench_die "loaded $loaded rows into bench.$table, wanted $rows"
  BENCH_TABLE_BYTES=$(bench_sql -e "SELECT DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA='bench' AND TABLE_NAME='$table'")
  bench_log "loaded in $((SECONDS - start)) s; $((BENCH_TABLE_BYTES / 1048576)) MiB of clustered index"
}

bench_load_sbtest() {
  bench_load_table sbtest1 "$1" "${2:-100000}" \
    "id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)" \
    "seq, FLOOR(1 + RAND() * $1), $BENCH_C_EXPR, $BENCH_PAD_EXPR"
}

bench_mariadb_binlog() {
  BENCH_MARIADB_BINLOG=$(command -v mariadb-binlog || command -v mysqlbinlog) ||
    bench_die "mariadb-binlog not found (package mariadb-client)"
}

bench_change_load() {
  local rows=$1 txn_rows=$2 table=$3 columns=$4 insert_fn=$5 update_fn=$6
  local inserts=$((rows * 2 / 5)) updates=$((rows * 2 / 5)) kind count first last counter
  local deletes=$((rows - inserts - updates))
  {
    # The schema stays out of the binlog (sql_log_bin=0) and RESET MASTER drops the accounts
    # throwaway_start made: the binlog holds just the row changes and their commits.
    echo "RESET MASTER;"
    echo "SET SESSION sql_log_bin = 0;"
    echo "CREATE DATABASE bench;"
    echo "CREATE TABLE bench.$table ($columns) ENGINE=InnoDB;"
    echo "SET SESSION sql_log_bin = 1;"
    echo "USE bench;"
    echo "SET @ins = 0, @upd = 0, @del = 0, @txns = 0;"
    for kind in insert update delete; do
      case $kind in insert) count=$inserts ;; update) count=$updates ;; delete) count=$deletes ;; esac
      for ((first = 1; first <= count; first += txn_rows)); do
        last=$((first + txn_rows - 1 < count ? first + txn_rows - 1 : count))
        echo "START TRANSACTION;"
        case $kind in
          insert) "$insert_fn" "$first" "$last"; counter=@ins ;;
          update) "$update_fn" "$first" "$last"; counter=@upd ;;
          delete) echo "DELETE FROM $table WHERE id BETWEEN $first AND $last;"; counter=@del ;;
        esac
        echo "SET $counter = $counter + ROW_COUNT(), @txns = @txns + 1;"
        echo "COMMIT;"
      done
    done
    echo "FLUSH BINARY LOGS;"
    echo "SELECT @ins, @upd, @del, @txns;"
  } >"$BENCH_WORK/changes.sql"
  bench_log "generating $rows row changes ($inserts inserts, $updates updates, $deletes deletes; $txn_rows rows a transaction)"
  local start=$SECONDS
  read -r BENCH_INSERTS BENCH_UPDATES BENCH_DELETES BENCH_TXNS < <(bench_sql <"$BENCH_WORK/changes.sql")
  BENCH_ROW_CHANGES=$((BENCH_INSERTS + BENCH_UPDATES + BENCH_DELETES))
  bench_log "generated in $((SECONDS - start)) s: SQL changed $BENCH_INSERTS + $BENCH_UPDATES + $BENCH_DELETES rows in $BENCH_TXNS transactions"
  ((BENCH_INSERTS == inserts && BENCH_UPDATES == updates && BENCH_DELETES == deletes)) ||
    bench_die "SQL changed $BENCH_INSERTS/$BENCH_UPDATES/$BENCH_DELETES rows, wanted $inserts/$updates/$deletes"
}

bench_count_ops() {
  # cdc-stream's lines all begin {"op":"..."; a run with --until adds its span_start and
  # span_end lines, and each table is described by a table line: those are not counted.
  awk -F'"' '$2 != "op" { other++; next } $4 ~ /^(span_(start|end)|table)$/ { next } { n[$4]++; lines++ }
    END { print n["c"]+0, n["u"]+0, n["d"]+0, n["commit"]+0, lines+other, other+0 }'
}

bench_count_mb_rows() { grep -c -E '^### (INSERT INTO|UPDATE|DELETE FROM) ' || true; }

bench_check_decoded() {
  local c u d commits lines other mb_rows=$2 expected=$((BENCH_ROW_CHANGES + BENCH_TXNS))
  read -r c u d commits lines other <<<"$1"
  bench_log "cdc-stream: $c c, $u u, $d d, $commits commit lines of $lines; mariadb-binlog: $mb_rows row changes"
  if ((c != BENCH_INSERTS || u != BENCH_UPDATES || d != BENCH_DELETES || commits != BENCH_TXNS ||
    lines != expected || other != 0 || mb_rows != BENCH_ROW_CHANGES)); then
    echo "$BENCH_NAME: SANITY CHECK FAILED: wanted $BENCH_INSERTS c + $BENCH_UPDATES u + $BENCH_DELETES d +" \
      "$BENCH_TXNS commit = $expected lines and $BENCH_ROW_CHANGES rows from mariadb-binlog; got $c c + $u u +" \
      "$d d + $commits commit, $lines lines ($other without an op), and $mb_rows from mariadb-binlog" >&2
    return 1
  fi
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

bench_stats() {
  echo "$(cut -d' ' -f1 "$1" | bench_median) $(cut -d' ' -f1 "$1" | sort -g | head -1)" \
    "$(cut -d' ' -f2 "$1" | bench_median) $(cut -d' ' -f3 "$1" | sort -g | tail -1)"
}

bench_median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}

bench_commas() {
  awk -v x="$1" 'BEGIN { s = sprintf("%d", x); while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } print s r }'
}
