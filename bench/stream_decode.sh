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
# With --formats, each round also times cdc-stream --file --format F for F = debezium, canal and
# maxwell (each format's defaults; cdc-formats(7)), and the table adds their rows and each one's
# time against the NDJSON run's: the output stage's cost, which the formats promise to keep
# under 1.5x. Their sanity check: as many data messages as row changes (Canal's messages carry
# a rows event each, so its lines are counted by their rows).
#
# Usage: bench/stream_decode.sh [--rows N] [--rounds N] [--txn-rows N] [--keep-binlog DIR]
#                             [--verify-checksums] [--formats]
#   --rows N          row changes to generate (default 1000000)
#   --rounds N        timed runs of each tool (default 5)
#   --txn-rows N      rows per transaction (default 10000)
#   --keep-binlog DIR move the generated binlog files to DIR (e.g. to profile on them)
#   --verify-checksums make mariadb-binlog check the CRC32 of every event too, as cdc-stream
#                     always does (mariadb-binlog does not by default)
# Environment: CDC_TOOLS_DIR (where cdc-stream is; default build/tools of this clone, so build
# first: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j), TMPDIR.
# Runs as root on Debian 12 (installs missing packages, as scripts/test.sh does).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/bench/lib.sh"

rows=1000000
rounds=5
txn_rows=10000
keep_binlog=
verify_checksums=
formats=
bench_args stream_decode "--rows --rounds --txn-rows --keep-binlog" "--verify-checksums --formats" "$@"
format_names=()
[[ -z $formats ]] || format_names=(debezium canal maxwell)
bench_positive rows rounds txn_rows
((rows >= 10)) || bench_die "--rows must be at least 10"
mb_verify=()
[[ -z $verify_checksums ]] || mb_verify=(--verify-binlog-checksum)

# --- 1. packages, tools, server -----------------------------------------------------------------
bench_setup stream_decode
bench_tools_dir cdc-stream
cdc_stream=$BENCH_TOOLS/cdc-stream
bench_mariadb_binlog
mariadb_binlog=$BENCH_MARIADB_BINLOG
work=$BENCH_WORK
bench_start_server

# --- 2. the binlog ------------------------------------------------------------------------------
# sysbench's c (10 groups of 11 digits) and pad (5 groups), from RAND().
insert_rows() {  # insert_rows FIRST LAST
  echo "INSERT INTO sbtest1 (id, k, c, pad) SELECT seq + $(($1 - 1)), FLOOR(1 + RAND() * $((rows * 2 / 5))), $BENCH_C_EXPR, $BENCH_PAD_EXPR FROM seq_1_to_$(($2 - $1 + 1));"
}
update_rows() {  # update_rows FIRST LAST
  echo "UPDATE sbtest1 SET k = k + 1, c = $BENCH_C_EXPR WHERE id BETWEEN $1 AND $2;"
}
bench_change_load "$rows" "$txn_rows" sbtest1 "id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0,
  c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)" insert_rows update_rows

# Stop the server (its shutdown closes the last file), then take the binlog files away from it:
# the timing runs alone on the machine.
binlog_dir=${keep_binlog:-$work/binlog}
mkdir -p "$binlog_dir"
binlog_dir=$(cd "$binlog_dir" && pwd)
bench_sql -e "SHOW BINARY LOGS" | awk '{print $1}' >"$work/binlogs.txt"
mapfile -t names <"$work/binlogs.txt"
mariadb-admin --no-defaults --socket="$THROWAWAY_SOCKET" -uroot shutdown >/dev/null
while kill -0 "$BENCH_SERVER_PID" 2>/dev/null; do sleep 0.1; done
for name in "${names[@]}"; do mv "$work/server/data/$name" "$binlog_dir/"; done
throwaway_stop "$work/server"
files=()
for name in "${names[@]}"; do files+=("$binlog_dir/$name"); done
binlog_bytes=$(cat "${files[@]}" | wc -c)

# --- 3. sanity (untimed warm-up) ---------------------------------------------------------------
bench_log "warm-up and sanity check on ${#files[@]} file(s), $binlog_bytes bytes"
bench_check_decoded "$("$cdc_stream" --file "${files[@]}" | bench_count_ops)" \
  "$("$mariadb_binlog" --no-defaults -v --base64-output=decode-rows "${files[@]}" | bench_count_mb_rows)"

# Each format's data messages: Debezium's and Maxwell's lines are one row change each (Debezium
# writes no tombstones without --key); a Canal message holds its rows event's rows.
format_rows() {
  case $1 in
    canal) jq -r 'select(.isDdl == false and .data != null) | .data | length' | awk '{ n += $1 } END { print n + 0 }' ;;
    *) grep -c -E '"op":"[cud]"|"type":"(insert|update|delete)"' || true ;;
  esac
}
for format in "${format_names[@]}"; do
  got=$("$cdc_stream" --file "${files[@]}" --format "$format" | format_rows "$format")
  [[ $got == "$BENCH_ROW_CHANGES" ]] || bench_die "sanity: cdc-stream --format $format wrote $got row messages, expected $BENCH_ROW_CHANGES"
done

# --- 4. timing, alternating -----------------------------------------------------------------------
# Wall time from bash's clock around GNU time (which adds a fork); CPU and peak RSS from GNU time.
: >"$work/A.txt"
: >"$work/B.txt"
for ((round = 1; round <= rounds; round++)); do
  bench_time "$work/t" "$mariadb_binlog" --no-defaults "${mb_verify[@]}" -v --base64-output=decode-rows "${files[@]}" >/dev/null
  cat "$work/t" >>"$work/A.txt"
  bench_time "$work/t" "$cdc_stream" --file "${files[@]}" >/dev/null
  cat "$work/t" >>"$work/B.txt"
  for format in "${format_names[@]}"; do
    bench_time "$work/t" "$cdc_stream" --file "${files[@]}" --format "$format" >/dev/null
    cat "$work/t" >>"$work/F.$format.txt"
  done
  bench_log "round $round/$rounds: mariadb-binlog $(tail -1 "$work/A.txt" | cut -d' ' -f1) s," \
    "cdc-stream $(tail -1 "$work/B.txt" | cut -d' ' -f1) s"
done

# --- 5. summary -------------------------------------------------------------------------------------
read -r a_med a_min a_cpu a_rss < <(bench_stats "$work/A.txt")
read -r b_med b_min b_cpu b_rss < <(bench_stats "$work/B.txt")
mb_version=$("$mariadb_binlog" --no-defaults --version | head -1)
cdc_version=$("$cdc_stream" --version | head -1)
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mb_verifies="no (add --verify-checksums)"
((${#mb_verify[@]} == 0)) || mb_verifies=yes
awk -v files="${#files[@]}" -v bytes="$binlog_bytes" -v rows="$BENCH_ROW_CHANGES" -v txns="$BENCH_TXNS" -v rounds="$rounds" \
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
for format in "${format_names[@]}"; do
  read -r f_med f_min f_cpu f_rss < <(bench_stats "$work/F.$format.txt")
  awk -v name="$format" -v rows="$BENCH_ROW_CHANGES" -v bytes="$binlog_bytes" -v med="$f_med" -v min="$f_min" \
    -v rss="$f_rss" -v c="$f_cpu" -v b_med="$b_med" -v a_med="$a_med" '
    function commas(x,   s, r) { s = sprintf("%d", x); while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } return s r }
    BEGIN {
      printf "%-15s %9.3f %8.3f %12s %9.1f %14.1f %10.3f   %.2fx ndjson time, %.1fx faster than mariadb-binlog\n",
        name, med, min, commas(rows / med), bytes / 1e6 / med, rss / 1024, c, med / b_med, a_med / med
    }'
done
