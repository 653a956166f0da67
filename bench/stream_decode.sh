#!/usr/bin/env bash
# bench/stream_decode.sh — how fast cdc-stream decodes binlog files, next to mariadb-binlog.
#
# What it measures: the wall time and peak RSS of decoding the same MariaDB binlog files from
# disk (hot page cache) with
#   A: mariadb-binlog --no-defaults -v --base64-output=decode-rows FILES... > /dev/null
#   B: cdc-stream --file FILES... > /dev/null
# Both do their full work (/dev/null only makes the write free). cdc-stream also checks every
# event's CRC32 and writes about a third more bytes (NDJSON with positions) than mariadb-binlog
# writes text; mariadb-binlog checks CRC32s only with --verify-checksums below.
# The binlog is made fresh by a throwaway MariaDB (ROW format, FULL image, FULL row metadata,
# CRC32 checksums) from sysbench-style rows (table sbtest1: id, k, c CHAR(120), pad CHAR(60)):
# 40% INSERTs, 40% UPDATEs (before+after images), 20% DELETEs, in transactions of 10,000 rows.
# (c and pad are in the server default charset, latin1 with --no-defaults; the values are ASCII.)
# One untimed warm-up run of each tool fills the page cache and checks that both decoded every
# row change (see "sanity" below); then the tools run ALTERNATELY, A B A B ..., so that the
# noise of a shared machine falls on both alike.
#
# How to read the output (the table at the end):
#   median s / min s  wall seconds over the rounds; min is the least disturbed run, median the
#                     typical one. Compare like with like; the ratio uses the medians.
#   rows/s            row changes (an UPDATE row counts once) per wall second, from the median
#   MB/s              binlog bytes (10^6) decoded per wall second, from the median
#   peak RSS MiB      the largest peak resident set over the rounds (GNU time %M): cdc-stream's
#                     should not grow with the binlog's size
#   median cpu s      user+sys CPU seconds (from GNU time), median over the rounds: less noisy
#                     than wall time on a busy machine
#   ratio             mariadb-binlog median / cdc-stream median: > 1 means cdc-stream is faster.
# It is a benchmark, not a test: there is no speed threshold. It fails only if the sanity
# check fails: cdc-stream's output must hold exactly one c/u/d line per row change (as many as
# the SQL statements changed and as mariadb-binlog printed) plus one commit line per
# transaction, and nothing else — so a fast run that decoded nothing cannot pass.
#
# Usage: bench/stream_decode.sh [--rows N] [--rounds N] [--txn-rows N] [--keep-binlog DIR]
#                             [--verify-checksums]
#   --rows N          row changes to generate (default 1000000)
#   --rounds N        timed runs of each tool (default 5)
#   --txn-rows N      rows per transaction (default 10000)
#   --keep-binlog DIR move the generated binlog files to DIR (e.g. to profile on them)
#   --verify-checksums make mariadb-binlog check the CRC32 of every event too, as cdc-stream
#                     always does (mariadb-binlog does not by default)
# Environment: CDC_BENCH_BUILD_DIR (default $CDC_ROOT/build-bench), TMPDIR.
# Runs as root on Debian 12 (installs missing packages, as scripts/test.sh does).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/scripts/lib/deps.sh"
source "$CDC_ROOT/scripts/lib/throwaway_mariadb.sh"

rows=1000000
rounds=5
mb_verify=()
txn_rows=10000
keep_dir=
usage() { sed -n '/^# Usage:/,/^# Runs as root/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
while (($# > 0)); do
  case $1 in
    --rows) rows=${2:?--rows needs a number}; shift 2 ;;
    --rows=*) rows=${1#*=}; shift ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --rounds=*) rounds=${1#*=}; shift ;;
    --txn-rows) txn_rows=${2:?--txn-rows needs a number}; shift 2 ;;
    --txn-rows=*) txn_rows=${1#*=}; shift ;;
    --keep-binlog) keep_dir=${2:?--keep-binlog needs a directory}; shift 2 ;;
    --keep-binlog=*) keep_dir=${1#*=}; shift ;;
    --verify-checksums) mb_verify=(--verify-binlog-checksum); shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "stream_decode: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
for value in "$rows" "$rounds" "$txn_rows"; do
  [[ $value =~ ^[1-9][0-9]*$ ]] || { echo "stream_decode: '$value' is not a positive integer" >&2; exit 2; }
done
((rows >= 10)) || { echo "stream_decode: --rows must be at least 10" >&2; exit 2; }
((rounds >= 1)) || { echo "stream_decode: --rounds must be at least 1" >&2; exit 2; }

log() { echo "# $*" >&2; }

# --- 1. packages and build ------------------------------------------------------------------
CDC_PACKAGES+=(time)
cdc_install_packages
build_dir=${CDC_BENCH_BUILD_DIR:-$CDC_ROOT/build-bench}
log "building cdc-stream (Release) in $build_dir"
cmake -S "$CDC_ROOT" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCDC_BUILD_TESTS=OFF >/dev/null
cmake --build "$build_dir" -j "$(nproc)" --target cdc-stream >/dev/null
cdc_stream="$build_dir/tools/cdc-stream"
[[ -x $cdc_stream ]] || { echo "stream_decode: $cdc_stream was not built" >&2; exit 1; }
mariadb_binlog=$(command -v mariadb-binlog || command -v mysqlbinlog) ||
  { echo "stream_decode: mariadb-binlog not found (package mariadb-client)" >&2; exit 1; }
gnu_time=/usr/bin/time

# --- 2. throwaway server ----------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/cdc-bench.XXXXXX")
cleanup() {
  throwaway_stop "$work/server" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log "starting a throwaway MariaDB in $work/server"
# Durability off and a big log: only the binlog's content matters here, not crash safety.
throwaway_start "$work/server" --innodb-buffer-pool-size=1G --innodb-log-file-size=1G \
  --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 --innodb-doublewrite=0 --max-binlog-size=1G
sql() { mariadb --no-defaults --socket="$THROWAWAY_SOCKET" -uroot -N -B "$@"; }

# --- 3. the binlog ------------------------------------------------------------------------------
inserts=$((rows * 2 / 5))
updates=$((rows * 2 / 5))
deletes=$((rows - inserts - updates))
# sysbench's c (10 groups of 11 digits) and pad (5 groups), from RAND().
digits="LPAD(FLOOR(RAND() * 100000000000), 11, '0')"
c_expr="CONCAT_WS('-'$(printf ", $digits%.0s" 1 2 3 4 5 6 7 8 9 10))"
pad_expr="CONCAT_WS('-'$(printf ", $digits%.0s" 1 2 3 4 5))"
{
  # The schema stays out of the binlog (sql_log_bin=0) and RESET MASTER drops the accounts
  # throwaway_start made: the binlog holds just the row changes and their commits.
  echo "RESET MASTER;"
  echo "SET SESSION sql_log_bin = 0;"
  echo "CREATE DATABASE bench;"
  echo "CREATE TABLE bench.sbtest1 (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0,"
  echo "  c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB;"
  echo "SET SESSION sql_log_bin = 1;"
  echo "USE bench;"
  echo "SET @ins = 0, @upd = 0, @del = 0, @txns = 0;"
  for ((first = 1; first <= inserts; first += txn_rows)); do
    n=$((inserts - first + 1 < txn_rows ? inserts - first + 1 : txn_rows))
    echo "START TRANSACTION;"
    echo "INSERT INTO sbtest1 (id, k, c, pad) SELECT seq + $((first - 1)), FLOOR(1 + RAND() * $inserts), $c_expr, $pad_expr FROM seq_1_to_$n;"
    echo "SET @ins = @ins + ROW_COUNT(), @txns = @txns + 1;"
    echo "COMMIT;"
  done
  for ((first = 1; first <= updates; first += txn_rows)); do
    last=$((first + txn_rows - 1 < updates ? first + txn_rows - 1 : updates))
    echo "START TRANSACTION;"
    echo "UPDATE sbtest1 SET k = k + 1, c = $c_expr WHERE id BETWEEN $first AND $last;"
    echo "SET @upd = @upd + ROW_COUNT(), @txns = @txns + 1;"
    echo "COMMIT;"
  done
  for ((first = 1; first <= deletes; first += txn_rows)); do
    last=$((first + txn_rows - 1 < deletes ? first + txn_rows - 1 : deletes))
    echo "START TRANSACTION;"
    echo "DELETE FROM sbtest1 WHERE id BETWEEN $first AND $last;"
    echo "SET @del = @del + ROW_COUNT(), @txns = @txns + 1;"
    echo "COMMIT;"
  done
  echo "FLUSH BINARY LOGS;"
  echo "SELECT @ins, @upd, @del, @txns;"
} >"$work/load.sql"
log "generating $rows row changes ($inserts inserts, $updates updates, $deletes deletes; $txn_rows rows a transaction)"
started=$SECONDS
sql <"$work/load.sql" >"$work/load.out"
read -r sql_ins sql_upd sql_del sql_txns <"$work/load.out"
log "generated in $((SECONDS - started)) s: SQL changed $sql_ins + $sql_upd + $sql_del rows in $sql_txns transactions"
sql_rows=$((sql_ins + sql_upd + sql_del))
if ((sql_ins != inserts || sql_upd != updates || sql_del != deletes)); then
  echo "stream_decode: SQL changed $sql_ins/$sql_upd/$sql_del rows, wanted $inserts/$updates/$deletes" >&2
  exit 1
fi

# Stop the server (its shutdown closes the last file), then take the binlog files away from it:
# the timing runs alone on the machine.
binlog_dir=${keep_dir:-$work/binlog}
mkdir -p "$binlog_dir"
binlog_dir=$(cd "$binlog_dir" && pwd)
sql -e "SHOW BINARY LOGS" | awk '{print $1}' >"$work/binlogs.txt"
mapfile -t names <"$work/binlogs.txt"
mariadb-admin --no-defaults --socket="$THROWAWAY_SOCKET" -uroot shutdown >/dev/null
server_pid=$(cat "$work/server/launcher.pid")
while kill -0 "$server_pid" 2>/dev/null; do sleep 0.1; done
for name in "${names[@]}"; do mv "$work/server/data/$name" "$binlog_dir/"; done
throwaway_stop "$work/server"
files=()
for name in "${names[@]}"; do files+=("$binlog_dir/$name"); done
binlog_bytes=$(cat "${files[@]}" | wc -c)

# --- 4. sanity (untimed warm-up) ---------------------------------------------------------------
log "warm-up and sanity check on ${#files[@]} file(s), $binlog_bytes bytes"
# One count per op from cdc-stream's lines, which all begin {"op":"...".
"$cdc_stream" --file "${files[@]}" |
  awk -F'"' '$2 != "op" { bad++; next } { n[$4]++ } END { print n["c"]+0, n["u"]+0, n["d"]+0, n["commit"]+0, NR, bad+0 }' \
    >"$work/cdc-counts.txt"
read -r cdc_c cdc_u cdc_d cdc_commits cdc_lines cdc_bad <"$work/cdc-counts.txt"
mb_rows=$("$mariadb_binlog" --no-defaults -v --base64-output=decode-rows "${files[@]}" |
  grep -c -E '^### (INSERT INTO|UPDATE|DELETE FROM) ' || true)
log "cdc-stream: $cdc_c c, $cdc_u u, $cdc_d d, $cdc_commits commit lines of $cdc_lines; mariadb-binlog: $mb_rows row changes"
expected_lines=$((sql_rows + sql_txns))
if ((cdc_c != sql_ins || cdc_u != sql_upd || cdc_d != sql_del || cdc_commits != sql_txns ||
  cdc_lines != expected_lines || cdc_bad != 0 || mb_rows != sql_rows)); then
  echo "stream_decode: SANITY CHECK FAILED: wanted $sql_ins c + $sql_upd u + $sql_del d + $sql_txns commit" \
    "= $expected_lines lines and $sql_rows rows from mariadb-binlog; got $cdc_c c + $cdc_u u + $cdc_d d +" \
    "$cdc_commits commit, $cdc_lines lines ($cdc_bad without an op), and $mb_rows from mariadb-binlog" >&2
  exit 1
fi

# --- 5. timing, alternating -----------------------------------------------------------------------
# Wall time from bash's clock around GNU time (which adds a fork); peak RSS from GNU time.
timed() {  # timed RESULTS_FILE command...: appends "wall_s rss_kib user_s sys_s"
  local results=$1
  shift
  local start end
  start=$EPOCHREALTIME
  "$gnu_time" -f '%M %U %S' -o "$work/time.out" "$@" >/dev/null
  end=$EPOCHREALTIME
  echo "$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }') $(tail -1 "$work/time.out")" >>"$results"
}
: >"$work/A.txt"
: >"$work/B.txt"
for ((round = 1; round <= rounds; round++)); do
  timed "$work/A.txt" "$mariadb_binlog" --no-defaults "${mb_verify[@]}" -v --base64-output=decode-rows "${files[@]}"
  timed "$work/B.txt" "$cdc_stream" --file "${files[@]}"
  log "round $round/$rounds: mariadb-binlog $(tail -1 "$work/A.txt" | cut -d' ' -f1) s," \
    "cdc-stream $(tail -1 "$work/B.txt" | cut -d' ' -f1) s"
done

# --- 6. summary -------------------------------------------------------------------------------------
# median (and min) of sorted numbers, one a line
median='{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1] }'
stats() {  # stats RESULTS_FILE: "median_wall min_wall max_rss_kib median_cpu"
  local wall cpu rss
  wall=$(cut -d" " -f1 "$1" | sort -g | awk "$median")
  cpu=$(awk "{ print \$3 + \$4 }" "$1" | sort -g | awk "$median")
  rss=$(cut -d" " -f2 "$1" | sort -g | tail -1)
  echo "${wall% *} ${wall#* } $rss ${cpu% *}"
}
read -r a_med a_min a_rss a_cpu < <(stats "$work/A.txt")
read -r b_med b_min b_rss b_cpu < <(stats "$work/B.txt")
mb_version=$("$mariadb_binlog" --no-defaults --version | head -1)
cdc_version=$("$cdc_stream" --version | head -1)
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mb_verifies="no (add --verify-checksums)"
((${#mb_verify[@]} == 0)) || mb_verifies=yes
awk -v files="${#files[@]}" -v bytes="$binlog_bytes" -v rows="$sql_rows" -v txns="$sql_txns" -v rounds="$rounds" \
  -v a_med="$a_med" -v a_min="$a_min" -v a_rss="$a_rss" -v a_cpu="$a_cpu" \
  -v b_med="$b_med" -v b_min="$b_min" -v b_rss="$b_rss" -v b_cpu="$b_cpu" \
  -v verify="$mb_verifies" -v mbv="$mb_version" -v cdcv="$cdc_version" -v cpu="$cpu_model" -v ncpu="$(nproc)" '
  function commas(x,   s, r) { s = sprintf("%d", x); while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } return s r }
  function row(name, med, min, rss, c) {
    printf "%-15s %9.3f %8.3f %12s %9.1f %14.1f %10.3f\n", name, med, min, commas(rows / med), bytes / 1e6 / med, rss / 1024, c
  }
  BEGIN {
    printf "\n%s; %s\n%s (%d CPUs); hot page cache; %d alternating rounds each\n", mbv, cdcv, cpu, ncpu, rounds
    printf "CRC32 checked by cdc-stream: yes; by mariadb-binlog: %s\n", verify
    printf "binlog: %d files, %.1f MB, %s row changes in %s transactions\n", files, bytes / 1e6, commas(rows), commas(txns)
    printf "%-15s %9s %8s %12s %9s %14s %10s\n", "tool", "median s", "min s", "rows/s", "MB/s", "peak RSS MiB", "median cpu s"
    row("mariadb-binlog", a_med, a_min, a_rss, a_cpu)
    row("cdc-stream", b_med, b_min, b_rss, b_cpu)
    printf "ratio (mariadb-binlog / cdc-stream): %.1fx median, %.1fx min\n", a_med / b_med, a_min / b_min
  }'
