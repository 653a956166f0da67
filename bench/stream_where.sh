#!/usr/bin/env bash
# bench/stream_where.sh — cdc-stream --file --where (issue 31) against the same decode without
# it and against mariadb-binlog piped into grep, for "every change to one key".
#
# What it measures: the wall time and peak RSS of finding every change to one row (id = KEY) of
# the same MariaDB binlog files from disk (hot page cache) with
#   A: mariadb-binlog --no-defaults -v --base64-output=decode-rows FILES | grep -x '###   @1=KEY'
#   B: cdc-stream --file FILES > /dev/null                 (every change, unfiltered)
#   C: cdc-stream --file FILES --where 'bench.sbtest1:id = KEY' > /dev/null
#   D: cdc-stream --file FILES --where 'bench.sbtest1:k <= K/2' > /dev/null  (about half the rows)
# A's grep only finds the lines that name the key (not the changes around them), the least it
# can do. C decodes only the id of each row, evaluates it and formats the three lines it keeps;
# D formats half the rows and converts the updates whose k crosses the border.
# The binlog is stream_decode.sh's: sysbench-style rows (sbtest1: id, k, c CHAR(120),
# pad CHAR(60)), 40% INSERTs, 40% UPDATEs (k = k + 1 and a new c), 20% DELETEs, in transactions
# of 10,000 rows. One untimed warm-up run of each fills the page cache and checks the outputs
# (see "sanity"); then A B C D A B C D ... alternate, so that the noise of a shared machine
# falls on all alike.
#
# The table at the end: median s / min s (wall seconds over the rounds), peak RSS MiB, median
# cpu s (user+sys), and each run's median against cdc-stream unfiltered (B).
# It is a benchmark, not a test: there is no speed threshold. It fails only if the sanity check
# fails: C writes exactly the key's insert, update and delete (3 lines and their 3 commit
# lines), A's grep finds the key 4 times (the update names it twice), and D's lines are as many
# as the rows whose images are at most K/2.
#
# Usage: bench/stream_where.sh [--rows N] [--rounds N] [--key N] [--keep-binlog DIR]
#   --rows N    row changes to generate (default 1000000: about 266 MB of binlog)
#   --rounds N  timed runs of each (default 5)
#   --key N     the id whose changes are looked for (default 4242; at most N/5)
#   --keep-binlog DIR  move the generated binlog files to DIR (e.g. to profile on them)
# Environment: CDC_TOOLS_DIR (where cdc-stream is; default build/tools of this clone), TMPDIR.
# Runs as root on Debian 12 (installs missing packages, as scripts/test.sh does).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/bench/lib.sh"

rows=1000000
rounds=5
key=4242
keep_binlog=
bench_args stream_where "--rows --rounds --key --keep-binlog" "" "$@"
bench_positive rows rounds key
((key <= rows / 5)) || bench_die "--key must be at most --rows / 5 (the deleted ids)"
txn_rows=10000

# --- 1. packages, tools, server -----------------------------------------------------------------
bench_setup stream_where
bench_tools_dir cdc-stream
cdc_stream=$BENCH_TOOLS/cdc-stream
bench_mariadb_binlog
mariadb_binlog=$BENCH_MARIADB_BINLOG
work=$BENCH_WORK
bench_start_server

# --- 2. the binlog ------------------------------------------------------------------------------
insert_rows() {  # insert_rows FIRST LAST
  echo "INSERT INTO sbtest1 (id, k, c, pad) SELECT seq + $(($1 - 1)), FLOOR(1 + RAND() * $((rows * 2 / 5))), $BENCH_C_EXPR, $BENCH_PAD_EXPR FROM seq_1_to_$(($2 - $1 + 1));"
}
update_rows() {  # update_rows FIRST LAST
  echo "UPDATE sbtest1 SET k = k + 1, c = $BENCH_C_EXPR WHERE id BETWEEN $1 AND $2;"
}
bench_change_load "$rows" "$txn_rows" sbtest1 "id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0,
  c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)" insert_rows update_rows
half=$((rows / 5))
key_where="bench.sbtest1:id = $key"
half_where="bench.sbtest1:k <= $half"

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
grep_key() { "$mariadb_binlog" --no-defaults -v --base64-output=decode-rows "${files[@]}" | grep -c -x -F "###   @1=$key" || true; }
found=$(grep_key)
[[ $found == 4 ]] || bench_die "sanity: mariadb-binlog | grep found id $key $found times, expected 4"
bench_check_decoded "$("$cdc_stream" --file "${files[@]}" | bench_count_ops)" "$BENCH_ROW_CHANGES"
read -r c u d commits _ < <("$cdc_stream" --file "${files[@]}" --where "$key_where" | bench_count_ops)
[[ "$c $u $d $commits" == "1 1 1 3" ]] ||
  bench_die "sanity: --where '$key_where' wrote $c c, $u u, $d d, $commits commits; expected 1 1 1 3"
# D: the rows whose images are at most K/2, counted from the unfiltered lines (an update counts
# when either image is: it is then a u, c or d line).
want_half=$("$cdc_stream" --file "${files[@]}" |
  jq -c "select(.op == \"c\" or .op == \"u\" or .op == \"d\") | select((.before.k // 1e18) <= $half or (.after.k // 1e18) <= $half)" | wc -l)
got_half=$("$cdc_stream" --file "${files[@]}" --where "$half_where" | grep -c -E '^\{"op":"[cud]"' || true)
[[ $got_half == "$want_half" ]] || bench_die "sanity: --where '$half_where' wrote $got_half change lines, expected $want_half"
bench_log "sanity: grep found the key 4 times, --where the key's 3 changes, --where k <= $half $got_half of $BENCH_ROW_CHANGES"

# --- 4. timing, alternating -----------------------------------------------------------------------
: >"$work/A.txt"
: >"$work/B.txt"
: >"$work/C.txt"
: >"$work/D.txt"
for ((round = 1; round <= rounds; round++)); do
  bench_time "$work/t" bash -c '"$1" --no-defaults -v --base64-output=decode-rows "${@:3}" | grep -x -F "###   @1=$2" >/dev/null' \
    grep_key "$mariadb_binlog" "$key" "${files[@]}" || true
  cat "$work/t" >>"$work/A.txt"
  bench_time "$work/t" "$cdc_stream" --file "${files[@]}" >/dev/null
  cat "$work/t" >>"$work/B.txt"
  bench_time "$work/t" "$cdc_stream" --file "${files[@]}" --where "$key_where" >/dev/null
  cat "$work/t" >>"$work/C.txt"
  bench_time "$work/t" "$cdc_stream" --file "${files[@]}" --where "$half_where" >/dev/null
  cat "$work/t" >>"$work/D.txt"
  bench_log "round $round/$rounds: mariadb-binlog | grep $(tail -1 "$work/A.txt" | cut -d' ' -f1) s," \
    "cdc-stream $(tail -1 "$work/B.txt" | cut -d' ' -f1) s, --where id $(tail -1 "$work/C.txt" | cut -d' ' -f1) s," \
    "--where k $(tail -1 "$work/D.txt" | cut -d' ' -f1) s"
done

# --- 5. summary -------------------------------------------------------------------------------------
read -r b_med _ < <(bench_stats "$work/B.txt")
printf '\n%s; %s\n%s (%d CPUs); hot page cache; %d alternating rounds each\n' \
  "$("$mariadb_binlog" --no-defaults --version | head -1)" "$("$cdc_stream" --version | head -1)" \
  "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" "$rounds"
printf 'binlog: %d files, %.1f MB, %s row changes in %s transactions; every change to id = %s\n' \
  "${#files[@]}" "$(awk -v b="$binlog_bytes" 'BEGIN { print b / 1e6 }')" "$(bench_commas "$BENCH_ROW_CHANGES")" \
  "$(bench_commas "$BENCH_TXNS")" "$key"
printf '%-34s %9s %8s %14s %10s %12s\n' "run" "median s" "min s" "peak RSS MiB" "median cpu s" "vs unfiltered"
for run in A B C D; do
  case $run in
    A) name="mariadb-binlog -v | grep id" ;;
    B) name="cdc-stream --file" ;;
    C) name="cdc-stream --file --where id" ;;
    D) name="cdc-stream --file --where k (1/2)" ;;
  esac
  read -r med min cpu rss < <(bench_stats "$work/$run.txt")
  awk -v name="$name" -v med="$med" -v min="$min" -v cpu="$cpu" -v rss="$rss" -v b="$b_med" \
    'BEGIN { printf "%-34s %9.3f %8.3f %14.1f %10.3f %11.2fx\n", name, med, min, rss / 1024, cpu, med / b }'
done
