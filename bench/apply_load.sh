#!/usr/bin/env bash
# bench/apply_load.sh — cdc-apply loading a merged snapshot against the mariadb client loading
# mariadb-dump's output of the same rows (issue 32's anchor; the goal is faster).
#
# What it measures: the wall time of filling an empty copy of bench.sbtest1 (sysbench-style: id
# INT PRIMARY KEY, k INT with KEY k_1, c CHAR(120), pad CHAR(60); ROWS rows) in another
# database of the same throwaway server (durability off, as bench/lib.sh starts it), from files
# on disk (hot page cache):
#   A: cdc-apply --database copy SNAPSHOT   (cdc-sync --mode initial_only's snapshot.ndjson:
#      every row an upsert, committed every --batch-rows with the applied position)
#   B: mariadb copy < DUMP                  (mariadb-dump --no-create-info with its defaults:
#      extended INSERTs of up to 16 MiB, keys disabled around them, one table lock)
# Both load into a table made LIKE the source before each run (untimed), so both maintain the
# same secondary index; after each run the copy must equal the source (CHECKSUM TABLE) or the
# benchmark fails. A B A B ... alternate, so that the noise of a shared machine falls on both.
#
# The table at the end: median and min wall seconds, median cpu seconds of the client process
# (cdc-apply or mariadb; the server's work is in the wall time), peak RSS, rows/s, and each
# run against mariadb (B / A: above 1 means cdc-apply is faster).
# It is a benchmark, not a test: there is no speed threshold.
#
# Usage: bench/apply_load.sh [--rows N] [--rounds N] [--batch-rows N]
#   --rows N        rows in the table (default 1000000: about 250 MB of InnoDB data)
#   --rounds N      timed runs of each (default 3)
#   --batch-rows N  cdc-apply --batch-rows (default: cdc-apply's own)
# Environment: CDC_TOOLS_DIR (where the cdc tools are; default build/tools of this clone), TMPDIR.
# Runs as root on Debian 12 (installs missing packages, as scripts/test.sh does).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/bench/lib.sh"

rows=1000000
rounds=3
batch_rows=
bench_args apply_load "--rows --rounds --batch-rows" "" "$@"
bench_positive rows rounds
batch=()
if [[ -n $batch_rows ]]; then
  bench_positive batch_rows
  batch=(--batch-rows "$batch_rows")
fi

bench_setup apply_load
bench_tools_dir cdc-sync cdc-plan cdc-snapshot cdc-merge cdc-apply
BENCH_MARIADB_DUMP=$(command -v mariadb-dump || command -v mysqldump) ||
  bench_die "mariadb-dump not found (package mariadb-client)"
bench_start_server
work=$BENCH_WORK
bench_load_sbtest "$rows"
source_sum=$(bench_sql -e "CHECKSUM TABLE bench.sbtest1" | cut -f2)

# --- the two inputs ------------------------------------------------------------------------------
bench_log "cdc-sync --mode initial_only: the merged snapshot"
CDC_TOOLS_DIR=$BENCH_TOOLS "$BENCH_TOOLS/cdc-sync" "${BENCH_CDC_CONN[@]}" --tables 'bench.sbtest1' --mode initial_only \
  --dir "$work/sync" >/dev/null 2>"$work/sync.err" || bench_die "cdc-sync failed: $(tail -3 "$work/sync.err")"
snapshot=$work/sync/snapshot.ndjson
bench_log "mariadb-dump --no-create-info"
"$BENCH_MARIADB_DUMP" --no-defaults --socket="$THROWAWAY_SOCKET" -uroot --no-create-info bench sbtest1 >"$work/dump.sql"
bench_log "snapshot $(du -m "$snapshot" | cut -f1) MB, dump $(du -m "$work/dump.sql" | cut -f1) MB"

fresh_copy() {
  bench_sql -e "DROP DATABASE IF EXISTS copy; CREATE DATABASE copy; CREATE TABLE copy.sbtest1 LIKE bench.sbtest1;"
}
check_copy() {  # check_copy WHAT
  local sum
  sum=$(bench_sql -e "CHECKSUM TABLE copy.sbtest1" | cut -f2)
  [[ $sum == "$source_sum" ]] || bench_die "$1: the copy's checksum $sum is not the source's $source_sum"
}

# --- timing, alternating -------------------------------------------------------------------------
: >"$work/A.txt"
: >"$work/B.txt"
client=$(command -v mariadb || command -v mysql)
for ((round = 1; round <= rounds; round++)); do
  fresh_copy
  bench_time "$work/t" "$BENCH_TOOLS/cdc-apply" -S "$THROWAWAY_SOCKET" -u root --database copy "${batch[@]}" \
    "$snapshot" 2>"$work/apply.err" || bench_die "cdc-apply failed: $(tail -3 "$work/apply.err")"
  check_copy cdc-apply
  cat "$work/t" >>"$work/A.txt"
  fresh_copy
  bench_time "$work/t" sh -c 'exec "$1" --no-defaults --socket="$2" -uroot copy <"$3"' load "$client" \
    "$THROWAWAY_SOCKET" "$work/dump.sql" || bench_die "mariadb < dump failed"
  check_copy "mariadb < dump"
  cat "$work/t" >>"$work/B.txt"
  bench_log "round $round/$rounds: cdc-apply $(tail -1 "$work/A.txt" | cut -d' ' -f1) s," \
    "mariadb < dump $(tail -1 "$work/B.txt" | cut -d' ' -f1) s"
done

# --- summary --------------------------------------------------------------------------------------
read -r b_med _ < <(bench_stats "$work/B.txt")
printf '\n%s; %s\n%s (%d CPUs); %d alternating rounds each; %s rows, %d MiB of clustered index\n' \
  "$("$client" --no-defaults --version | head -1)" "$("$BENCH_TOOLS/cdc-apply" --version | head -1)" \
  "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" "$rounds" "$(bench_commas "$rows")" \
  "$((BENCH_TABLE_BYTES / 1048576))"
printf '%-34s %9s %8s %12s %13s %10s %12s\n' "run" "median s" "min s" "client cpu s" "peak RSS MiB" "rows/s" "vs mariadb"
for run in A B; do
  case $run in
    A) name="cdc-apply SNAPSHOT" ;;
    B) name="mariadb < mariadb-dump output" ;;
  esac
  read -r med min cpu rss < <(bench_stats "$work/$run.txt")
  awk -v name="$name" -v med="$med" -v min="$min" -v cpu="$cpu" -v rss="$rss" -v b="$b_med" -v rows="$rows" \
    'BEGIN { printf "%-34s %9.3f %8.3f %12.3f %13.1f %10.0f %11.2fx\n", name, med, min, cpu, rss / 1024, rows / med, b / med }'
done
