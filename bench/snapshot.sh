#!/usr/bin/env bash
# bench/snapshot.sh — how fast cdc-plan | cdc-snapshot reads a whole table, next to the usual dumpers.
#
# Starts its own throwaway MariaDB (durability off: innodb_flush_log_at_trx_commit=0,
# sync_binlog=0, no doublewrite; a 1 GiB buffer pool so the table is read from memory) and fills
# a sysbench-style table, bench.sbtest1 (id INT PRIMARY KEY, k INT with KEY k_1, c CHAR(120),
# pad CHAR(60)), with --rows rows as sysbench does: k random in 1..rows, c ten and pad five
# groups of 11 random digits joined by '-'. The load is INSERT ... SELECT from the sequence
# engine (seq_1_to_N) in batches, kept out of the binlog. Then, over loopback TCP, each of these
# reads the whole table with its output thrown away (> /dev/null, or a temp dir for mydumper):
#   cdc x1      cdc-plan --tables bench.sbtest1 | cdc-snapshot > /dev/null
#   cdc x2      cdc-plan --tables bench.sbtest1 > chunks.ndjson; the chunk lines dealt round-robin
#               into 2 files (split -n r/2); 2 cdc-snapshot processes, one a file, in parallel
#   mariadb     mariadb --quick -N -e 'SELECT * FROM bench.sbtest1' > /dev/null
#   mariadb-dump  mariadb-dump --single-transaction --quick bench sbtest1 > /dev/null
#   mydumper -t 2 mydumper -t 2 --rows 100000 --trx-consistency-only into a temp dir (removed
#               after each round; it writes about as many bytes as mariadb-dump, to the page cache)
# An untimed sanity run of the cdc tools first checks that cdc-snapshot printed exactly one r
# line per row and one low and one high line per chunk (in both layouts); a warm-up SELECT fills
# the buffer pool. Then --rounds rounds; each round runs every tool once, the order rotated from
# round to round so that a shared machine's noise falls on all alike. The cdc tools connect as
# the cdc account (the grants cdc-plan(1) lists); the others as a bench account with all grants.
#
# How to read the output (the table at the end; medians over the rounds):
#   wall s          wall seconds of the whole job (for cdc: planning included)
#   rows/s          table rows per wall second
#   client cpu s    user+sys CPU seconds of the client processes (GNU time of each: cdc-plan and
#                   every cdc-snapshot; mariadb; mariadb-dump; mydumper with its threads)
#   cpu s/Mrow      client cpu s per million rows
#   server cpu s    user+sys CPU seconds mariadbd spent during the run (/proc), for context
#   peak RSS MiB    the largest peak resident set of a client process over the rounds (for cdc:
#                   of the cdc-snapshot processes, max over processes and rounds)
# Then the ratios the issue asks for: > 1 means cdc is faster (or leaner). It is a benchmark,
# not a test: there are no thresholds. It fails only if the setup fails or a cdc sanity check
# fails (after printing the reference tools' figures all the same). The server, the table and
# GNU time come from bench/lib.sh, which bench/merge.sh shares.
#
# Usage: bench/snapshot.sh [--rows N] [--rounds N] [--batch-rows N] [--mydumper-rows N]
#   --rows N           rows in bench.sbtest1 (default 2000000)
#   --rounds N         timed rounds; the median is reported (default 3)
#   --batch-rows N     rows per INSERT ... SELECT while loading (default 100000)
#   --mydumper-rows N  mydumper --rows, its chunk size (default 100000)
# Environment: CDC_TOOLS_DIR (where cdc-plan and cdc-snapshot are; default build/tools of this
# clone, so build first: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j),
# CDC_PLAN_ARGS (extra cdc-plan options, e.g. a chunk size; split on spaces), TMPDIR.
# Runs as root on Debian 12 (installs missing packages, mydumper among them, as scripts/test.sh does).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/bench/lib.sh"

rows=2000000
rounds=3
batch_rows=100000
mydumper_rows=100000
bench_args snapshot "--rows --rounds --batch-rows --mydumper-rows" "" "$@"
bench_positive rows rounds batch_rows mydumper_rows
((rows >= 10)) || { echo "snapshot: --rows must be at least 10" >&2; exit 2; }

# --- 1. packages and tools --------------------------------------------------------------------
CDC_PACKAGES+=(mydumper)
bench_setup snapshot
bench_tools_dir cdc-plan cdc-snapshot
tools_dir=$BENCH_TOOLS
cdc_plan="$tools_dir/cdc-plan"
cdc_snapshot="$tools_dir/cdc-snapshot"
read -r -a plan_extra <<<"${CDC_PLAN_ARGS:-}"
cdc_state=ok  # "failed" when the sanity run fails
bench_dumpers
mydumper=$BENCH_MYDUMPER
mariadb_dump=$BENCH_MARIADB_DUMP
mariadb_client=$(command -v mariadb || command -v mysql)
gnu_time=/usr/bin/time

# --- 2. throwaway server ----------------------------------------------------------------------
bench_start_server
work=$BENCH_WORK
port=$BENCH_PORT
sql() { bench_sql "$@"; }
bench_reference_account
bench_password=$BENCH_REF_PASSWORD
cdc_conn=("${BENCH_CDC_CONN[@]}")
ref_conn=("${BENCH_REF_CONN[@]}")

# --- 3. the table -----------------------------------------------------------------------------
bench_load_sbtest "$rows" "$batch_rows"
table_bytes=$BENCH_TABLE_BYTES
bench_log "warm-up: one untimed SELECT * to fill the buffer pool"
"$mariadb_client" --no-defaults "${ref_conn[@]}" --quick -N -e 'SELECT * FROM bench.sbtest1' >/dev/null

# --- 4. the runs ------------------------------------------------------------------------------
# Each run appends one line to $work/NAME.txt: "wall_s client_cpu_s peak_rss_kib server_cpu_s".
# Client CPU and RSS come from GNU time around every client process; the server's CPU from /proc.
tm() {  # tm NAME command...: the command under GNU time, its figures into $work/t.NAME
  local name=$1
  shift
  "$gnu_time" -f '%M %U %S' -o "$work/t.$name" "$@"
}
record() {  # record TOOL START_REALTIME START_SERVER_CPU RSS_FILES_GLOB...: sums the t.* files
  local tool=$1 start=$2 cpu0=$3
  shift 3
  local end cpu1
  end=$EPOCHREALTIME
  cpu1=$(bench_server_cpu)
  # GNU time writes "Command exited with non-zero status N" before the figures when it fails.
  awk -v s="$start" -v e="$end" -v c0="$cpu0" -v c1="$cpu1" -v rss_files="$*" '
    BEGIN { n = split(rss_files, rf, " "); for (i = 1; i <= n; i++) is_rss[rf[i]] = 1 }
    /^Command/ { next }
    { cpu += $2 + $3; if (FILENAME in is_rss && $1 > rss) rss = $1; if (!(FILENAME in is_rss) && rss_any < $1) rss_any = $1 }
    END { printf "%.3f %.3f %d %.2f\n", e - s, cpu, (n ? rss : rss_any), c1 - c0 }' "$work"/t.* >>"$work/$tool.txt"
  rm -f "$work"/t.*
}
fail_run() {  # fail_run TOOL: the run failed; say so with the tool's stderr, and stop
  echo "snapshot: $1 failed; its stderr:" >&2
  tail -5 "$work/$1.err" >&2
  exit 1
}

run_cdc1() {  # cdc-plan | cdc-snapshot (one process)
  local start server0
  rm -f "$work"/t.*
  server0=$(bench_server_cpu)
  start=$EPOCHREALTIME
  tm plan "$cdc_plan" "${cdc_conn[@]}" --tables bench.sbtest1 "${plan_extra[@]}" 2>>"$work/cdc1.err" |
    tm snap0 "$cdc_snapshot" "${cdc_conn[@]}" - >"${1:-/dev/null}" 2>>"$work/cdc1.err" || fail_run cdc1
  record cdc1 "$start" "$server0" "$work/t.snap0"
}
run_cdc2() {  # cdc-plan > chunks; 2 cdc-snapshot processes over the chunks dealt round-robin
  local start server0 p0 p1 out=${1:-/dev/null}
  rm -f "$work"/t.* "$work"/chunks.*
  server0=$(bench_server_cpu)
  start=$EPOCHREALTIME
  tm plan "$cdc_plan" "${cdc_conn[@]}" --tables bench.sbtest1 "${plan_extra[@]}" >"$work/chunks.ndjson" \
    2>>"$work/cdc2.err" || fail_run cdc2
  split -n r/2 "$work/chunks.ndjson" "$work/chunks.part."
  tm snap0 "$cdc_snapshot" "${cdc_conn[@]}" "$work/chunks.part.aa" >"${out/\%/0}" 2>>"$work/cdc2.err" &
  p0=$!
  tm snap1 "$cdc_snapshot" "${cdc_conn[@]}" "$work/chunks.part.ab" >"${out/\%/1}" 2>>"$work/cdc2.err" &
  p1=$!
  wait "$p0" || fail_run cdc2
  wait "$p1" || fail_run cdc2
  record cdc2 "$start" "$server0" "$work/t.snap0" "$work/t.snap1"
}
run_mariadb() {
  local start server0
  rm -f "$work"/t.*
  server0=$(bench_server_cpu)
  start=$EPOCHREALTIME
  tm client "$mariadb_client" --no-defaults "${ref_conn[@]}" --quick -N -e 'SELECT * FROM bench.sbtest1' \
    >/dev/null 2>>"$work/mariadb.err" || fail_run mariadb
  record mariadb "$start" "$server0"
}
run_dump() {
  local start server0
  rm -f "$work"/t.*
  server0=$(bench_server_cpu)
  start=$EPOCHREALTIME
  tm client "$mariadb_dump" --no-defaults "${ref_conn[@]}" --single-transaction --quick bench sbtest1 \
    >/dev/null 2>>"$work/dump.err" || fail_run dump
  record dump "$start" "$server0"
}
run_mydumper() {
  local start server0
  rm -rf "$work"/t.* "$work/mydumper.out"
  server0=$(bench_server_cpu)
  start=$EPOCHREALTIME
  tm client "$mydumper" -h 127.0.0.1 -P "$port" -u bench -p "$bench_password" -B bench -T sbtest1 \
    -t 2 --rows "$mydumper_rows" --trx-consistency-only -v 1 -o "$work/mydumper.out" \
    >/dev/null 2>>"$work/mydumper.err" || fail_run mydumper
  record mydumper "$start" "$server0"
  # Its output went to the page cache: count what it wrote (and check it dumped rows) before it goes.
  local files
  files=$(find "$work/mydumper.out" -name 'bench.sbtest1.*sql' ! -name '*-schema.sql' | wc -l)
  ((files > 0)) || { echo "snapshot: mydumper wrote no data files for bench.sbtest1: $(ls "$work/mydumper.out")" >&2; exit 1; }
  echo "$(du -sb "$work/mydumper.out" | cut -f1) $files" >"$work/mydumper.bytes"
  rm -rf "$work/mydumper.out"
}

cdc_note=
if [[ $cdc_state == ok ]]; then
  bench_log "sanity: cdc-plan | cdc-snapshot, then 2 cdc-snapshot processes; counting r, low and high lines"
  # count: r lines, low lines, high lines, other lines, sum of the rows fields of the high lines
  # (the table line after each low line is not counted)
  count_awk='/^\{"op":"table",/ { next } /"op":"r"/ { r++; next } /"op":"low"/ { lo++; next }
    /"op":"high"/ { hi++; if (match($0, /"rows":[0-9]+/)) hr += substr($0, RSTART + 7, RLENGTH - 7); next }
    { other++ } END { print r + 0, lo + 0, hi + 0, other + 0, hr + 0 }'
  sane=1
  if (
    set -e
    run_cdc1 "$work/sanity1.ndjson"
    run_cdc2 "$work/sanity2-%.ndjson"
  ) 2>>"$work/sanity.err"; then
    chunks=$(grep -c '"op":"chunk"' "$work/chunks.ndjson" || true)
    read -r r1 lo1 hi1 o1 hr1 < <(awk "$count_awk" "$work/sanity1.ndjson")
    read -r r2 lo2 hi2 o2 hr2 < <(cat "$work/sanity2-0.ndjson" "$work/sanity2-1.ndjson" | awk "$count_awk")
    per_proc=$(for f in "$work"/sanity2-?.ndjson; do grep -c '"op":"r"' "$f" || true; done | paste -sd/)
    bench_log "cdc-plan: $chunks chunks; 1 process: $r1 r, $lo1 low, $hi1 high; 2 processes: $r2 r ($per_proc), $lo2 low, $hi2 high"
    for got in "$r1 $lo1 $hi1 $o1 $hr1" "$r2 $lo2 $hi2 $o2 $hr2"; do
      [[ $got == "$rows $chunks $chunks 0 $rows" ]] || sane=0
    done
    ((chunks >= 1)) || sane=0
    if ((sane == 0)); then
      cdc_note="cdc-plan/cdc-snapshot: SANITY CHECK FAILED (wanted $rows r lines and $chunks low/high pairs in each layout)"
    elif ((chunks < 2)); then
      bench_log "note: cdc-plan made a single chunk, so the second cdc-snapshot process idles (CDC_PLAN_ARGS sets a chunk size)"
    fi
  else
    sane=0
    cdc_note="cdc-plan/cdc-snapshot: the sanity run failed: $(grep -v '^$' "$work/sanity.err" "$work"/cdc?.err 2>/dev/null | tail -1)"
  fi
  rm -f "$work"/sanity*.ndjson
  : >"$work/cdc1.txt"
  : >"$work/cdc2.txt"
  if ((sane == 0)); then
    echo "snapshot: $cdc_note" >&2
    cdc_state=failed
  fi
fi
tools=(mariadb dump mydumper)
[[ $cdc_state == ok ]] && tools=(cdc1 cdc2 "${tools[@]}")
for tool in "${tools[@]}"; do : >"$work/$tool.txt"; done
for ((round = 1; round <= rounds; round++)); do
  # Rotate the order each round: A B C D E, B C D E A, ...
  n=${#tools[@]}
  line=
  for ((i = 0; i < n; i++)); do
    tool=${tools[(i + round - 1) % n]}
    case $tool in
      cdc1) run_cdc1 ;;
      cdc2) run_cdc2 ;;
      mariadb) run_mariadb ;;
      dump) run_dump ;;
      mydumper) run_mydumper ;;
    esac
    line+=" $tool $(tail -1 "$work/$tool.txt" | cut -d' ' -f1) s,"
  done
  bench_log "round $round/$rounds:${line%,}"
done

# --- 5. summary -------------------------------------------------------------------------------
median='{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
stats() {  # stats TOOL: "median_wall median_cpu max_rss_kib median_server_cpu"
  local f="$work/$1.txt"
  echo "$(cut -d' ' -f1 "$f" | sort -g | awk "$median") $(cut -d' ' -f2 "$f" | sort -g | awk "$median")" \
    "$(cut -d' ' -f3 "$f" | sort -g | tail -1) $(cut -d' ' -f4 "$f" | sort -g | awk "$median")"
}
summary=()
for tool in "${tools[@]}"; do summary+=("$tool $(stats "$tool")"); done
server_version=$(sql -e "SELECT VERSION()")
cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
cdc_version=$("$cdc_snapshot" --version 2>/dev/null | head -1 || true)
case $cdc_state in
  ok) cdc_note="" ;;
esac
printf '%s\n' "${summary[@]}" | awk -v rows="$rows" -v rounds="$rounds" -v bytes="$table_bytes" \
  -v srv="$server_version" -v cpu="$cpu_model" -v ncpu="$(nproc)" -v cdcv="${cdc_version:-}" \
  -v chunks="${chunks:-}" -v mydumper_rows="$mydumper_rows" -v note="$cdc_note" \
  -v mydb="$(cut -d' ' -f1 "$work/mydumper.bytes")" -v mydf="$(cut -d' ' -f2 "$work/mydumper.bytes")" -v mydv="$("$mydumper" --version 2>&1 | head -1)" -v dumpv="$("$mariadb_dump" --version | head -1)" '
  function commas(x,   s, r) { s = sprintf("%d", x); while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } return s r }
  { wall[$1] = $2; ccpu[$1] = $3; rss[$1] = $4; scpu[$1] = $5 }
  END {
    name["cdc1"] = "cdc-snapshot x1"; name["cdc2"] = "cdc-snapshot x2"; name["mariadb"] = "mariadb --quick"
    name["dump"] = "mariadb-dump"; name["mydumper"] = "mydumper -t 2"
    printf "\nMariaDB %s over loopback TCP; %s (%d CPUs)\n", srv, cpu, ncpu
    if (cdcv != "") printf "%s; ", cdcv
    printf "%s; %s\n", dumpv, mydv
    printf "bench.sbtest1: %s rows, %.0f MiB clustered index, in the buffer pool; %d rounds, medians\n", commas(rows), bytes / 1048576, rounds
    if ("cdc1" in wall) printf "cdc-plan made %d chunks; ", chunks
    printf "mydumper --rows %d wrote %d data files, %.0f MB a run (to the page cache)\n", mydumper_rows, mydf, mydb / 1e6
    printf "\n%-16s %8s %11s %13s %11s %13s %13s\n", "tool", "wall s", "rows/s", "client cpu s", "cpu s/Mrow", "server cpu s", "peak RSS MiB"
    split("cdc1 cdc2 mariadb dump mydumper", order, " ")
    for (i = 1; i <= 5; i++) {
      t = order[i]
      if (!(t in wall)) { printf "%-16s %s\n", name[t], note; continue }
      printf "%-16s %8.2f %11s %13.2f %11.2f %13.2f %13.1f\n", name[t], wall[t], commas(rows / wall[t]), ccpu[t],
        ccpu[t] / (rows / 1e6), scpu[t], rss[t] / 1024
    }
    if (!("cdc1" in wall)) {
      printf "\nratios: none (%s)\n", note
      exit
    }
    printf "\nratios (> 1: cdc better)\n"
    printf "  wall, mariadb-dump / cdc-snapshot x1:       %.2fx\n", wall["dump"] / wall["cdc1"]
    printf "  wall, mariadb --quick / cdc-snapshot x1:    %.2fx\n", wall["mariadb"] / wall["cdc1"]
    printf "  wall, mydumper -t 2 / cdc-snapshot x2:      %.2fx\n", wall["mydumper"] / wall["cdc2"]
    printf "  client cpu/Mrow, mydumper / cdc x1:         %.2fx\n", ccpu["mydumper"] / ccpu["cdc1"]
    printf "  client cpu/Mrow, mydumper / cdc x2:         %.2fx\n", ccpu["mydumper"] / ccpu["cdc2"]
    printf "  cdc-snapshot peak RSS: %.1f MiB (x1), %.1f MiB (x2, max over processes); target < 32 MiB: %s\n",
      rss["cdc1"] / 1024, rss["cdc2"] / 1024, (rss["cdc1"] < 32768 && rss["cdc2"] < 32768) ? "met" : "NOT MET"
  }'
[[ $cdc_state != failed ]] || { echo "snapshot: $cdc_note" >&2; exit 1; }
