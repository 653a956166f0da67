#!/usr/bin/env bash
# bench/snapshot_big_binlog.sh — does cdc-snapshot's cost per chunk grow with the size of the
# server's active binlog? (It did: BINLOG_GTID_POS for every chunk's low watermark reads the
# binlog file from its start, 0.36 s a chunk at 830 MB.)
#
# Starts its own throwaway MariaDB (bench/lib.sh: durability off, a 1 GiB buffer pool,
# max_binlog_size 1G as on production servers) and fills bench.sbtest1 with --rows rows, out of
# the binlog. Then twice, once right after FLUSH BINARY LOGS (a new, nearly empty active
# binlog) and once after the active binlog was grown to --binlog-mb MB (1 MB rows written to a
# junk table in 10 MB transactions, then the table truncated), each of these reads the whole
# table with its output thrown away, --rounds times, the order rotated per round:
#   cdc-snapshot   cdc-plan --chunk-size N | cdc-snapshot > /dev/null
#   cdc x2         the same plan's chunk lines dealt round-robin to 2 cdc-snapshot processes
#                  in parallel (as bench/snapshot.sh's x2), to compare with mydumper -t 2
#   compare        the same with the cdc-plan and cdc-snapshot of --compare-tools DIR (e.g. a
#                  build of an older commit), when given
#   mariadb-dump   mariadb-dump --single-transaction --quick bench sbtest1 > /dev/null
#   mydumper -t 2  mydumper -t 2 --rows 100000 --trx-consistency-only into a temp dir
# With --writes (the default), a client commits a one-row transaction about every 10 ms
# during all runs, so that the low watermarks of consecutive chunks differ, as on a live
# server; --no-writes leaves the server idle.
# Also printed: what one SELECT BINLOG_GTID_POS(file, offset) at the end of the active binlog
# costs the server, at both sizes (the old per-chunk cost).
#
# How to read the output: wall s and server cpu s (mariadbd's user+sys over the run, /proc),
# medians over the rounds; "growth" is the wall time at --binlog-mb over the wall time on the
# fresh binlog: about 1 when the cost does not depend on the binlog's size. Then the ratios of
# mydumper -t 2 to cdc x2 at both sizes: wall time, and server CPU (> 1: cdc faster, or
# cheaper for the server). It is a benchmark, not a test: no thresholds.
#
# Usage: bench/snapshot_big_binlog.sh [--rows N] [--chunk-size N] [--binlog-mb N] [--rounds N]
#                                     [--compare-tools DIR] [--no-writes]
#   --rows N             rows in bench.sbtest1 (default 1000000)
#   --chunk-size N       cdc-plan --chunk-size (default 8096, cdc-plan's own; 18200 makes the 55
#                        chunks of 1M rows of issue 11)
#   --binlog-mb N        the active binlog's size for the second half, in MB (default 300)
#   --rounds N           timed rounds per binlog size; medians reported (default 3)
#   --compare-tools DIR  also time cdc-plan and cdc-snapshot from DIR
#   --no-writes          no concurrent writes
# Environment: CDC_TOOLS_DIR (default build/tools of this clone), TMPDIR.
# Runs as root on Debian 12 (installs missing packages, mydumper among them).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/bench/lib.sh"

rows=1000000
chunk_size=8096
binlog_mb=300
rounds=3
compare_tools=
writes=yes
no_writes=
bench_args snapshot_big_binlog "--rows --chunk-size --binlog-mb --rounds --compare-tools" "--no-writes" "$@"
bench_positive rows chunk_size binlog_mb rounds
[[ -z $no_writes ]] || writes=no
if [[ -n $compare_tools ]]; then
  for tool in cdc-plan cdc-snapshot; do
    [[ -x $compare_tools/$tool ]] || { echo "snapshot_big_binlog: $compare_tools/$tool not found" >&2; exit 2; }
  done
fi

CDC_PACKAGES+=(mydumper)
bench_setup snapshot_big_binlog
bench_tools_dir cdc-plan cdc-snapshot
bench_dumpers
mydumper=$BENCH_MYDUMPER
mariadb_dump=$BENCH_MARIADB_DUMP

bench_start_server
work=$BENCH_WORK
bench_reference_account
bench_password=$BENCH_REF_PASSWORD
ref_conn=("${BENCH_REF_CONN[@]}")
bench_load_sbtest "$rows"
bench_sql -e "CREATE TABLE bench.junk (id INT AUTO_INCREMENT PRIMARY KEY, b LONGBLOB) ENGINE=InnoDB;
              CREATE TABLE bench.ticks (id INT AUTO_INCREMENT PRIMARY KEY, at TIMESTAMP(6)) ENGINE=InnoDB"
bench_sql -e 'SELECT COUNT(*) FROM bench.sbtest1' >/dev/null # warm-up

writer_pid=
start_writer() {
  [[ $writes == yes ]] || return 0
  # The client as the pipeline's last command, not a function: $! is then the client itself,
  # which a kill ends at once (a subshell would wait for it, with bench_setup's TERM trap).
  while :; do echo "INSERT INTO bench.ticks (at) VALUES (NOW(6)); DO SLEEP(0.01);"; done |
    "$(command -v mariadb || command -v mysql)" --no-defaults --socket="$THROWAWAY_SOCKET" -uroot -N -B 2>/dev/null &
  writer_pid=$!
}
stop_writer() {
  [[ -n $writer_pid ]] || return 0
  kill "$writer_pid" 2>/dev/null || true
  wait "$writer_pid" 2>/dev/null || true
  writer_pid=
}
trap 'stop_writer; _bench_cleanup' EXIT

# run NAME command...: appends "wall_s server_cpu_s" to $work/NAME.txt
run() {
  local name=$1 start server0
  shift
  server0=$(bench_server_cpu)
  start=$EPOCHREALTIME
  "$@" >/dev/null 2>>"$work/$name.err" || { echo "snapshot_big_binlog: $name failed:" >&2; tail -3 "$work/$name.err" >&2; exit 1; }
  awk -v s="$start" -v e="$EPOCHREALTIME" -v c0="$server0" -v c1="$(bench_server_cpu)" \
    'BEGIN { printf "%.3f %.2f\n", e - s, c1 - c0 }' >>"$work/$name.txt"
}
cdc() { # cdc TOOLS_DIR: plan and snapshot the table, the chunk count into $work/chunks
  "$1/cdc-plan" "${BENCH_CDC_CONN[@]}" --tables bench.sbtest1 --chunk-size "$chunk_size" >"$work/plan.ndjson"
  grep -c '"op":"chunk"' "$work/plan.ndjson" >"$work/chunks"
  "$1/cdc-snapshot" "${BENCH_CDC_CONN[@]}" "$work/plan.ndjson"
}
cdc2() { # cdc2: the plan's chunks dealt round-robin to 2 cdc-snapshot processes
  local p0 p1 failed=0
  "$BENCH_TOOLS/cdc-plan" "${BENCH_CDC_CONN[@]}" --tables bench.sbtest1 --chunk-size "$chunk_size" >"$work/plan2.ndjson"
  rm -f "$work"/plan2.part.*
  split -n r/2 "$work/plan2.ndjson" "$work/plan2.part."
  "$BENCH_TOOLS/cdc-snapshot" "${BENCH_CDC_CONN[@]}" "$work/plan2.part.aa" >/dev/null &
  p0=$!
  "$BENCH_TOOLS/cdc-snapshot" "${BENCH_CDC_CONN[@]}" "$work/plan2.part.ab" >/dev/null &
  p1=$!
  wait "$p0" || failed=1
  wait "$p1" || failed=1
  return "$failed"
}
dump() { "$mariadb_dump" --no-defaults "${ref_conn[@]}" --single-transaction --quick bench sbtest1; }
my_dumper() {
  rm -rf "$work/mydumper.out"
  "$mydumper" -h 127.0.0.1 -P "$BENCH_PORT" -u bench -p "$bench_password" -B bench -T sbtest1 -t 2 --rows 100000 \
    --trx-consistency-only -v 1 -o "$work/mydumper.out"
  rm -rf "$work/mydumper.out"
}
tools=(cdc cdc2 dump mydumper)
[[ -n $compare_tools ]] && tools=(cdc compare cdc2 dump mydumper)
active_binlog() { bench_sql -e 'SHOW MASTER STATUS' | awk '{ print $1, $2 }'; }
gtid_pos_cost() { # the server's time for one BINLOG_GTID_POS at the end of the active binlog
  local file offset start
  read -r file offset < <(active_binlog)
  start=$EPOCHREALTIME
  bench_sql -e "SELECT BINLOG_GTID_POS('$file', $offset)" >/dev/null
  awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.3f", e - s }'
}
measure() { # measure LABEL: every tool --rounds times on the binlog as it is
  local label=$1 round i n=${#tools[@]} tool
  read -r file offset < <(active_binlog)
  bench_log "$label: active binlog $file, $((offset / 1048576)) MB; one BINLOG_GTID_POS there takes $(gtid_pos_cost) s"
  echo "$offset" >"$work/$label.binlog"
  gtid_pos_cost >"$work/$label.gtid_pos"
  start_writer
  for ((round = 1; round <= rounds; round++)); do
    for ((i = 0; i < n; i++)); do
      tool=${tools[(i + round - 1) % n]}
      case $tool in
        cdc) run "$label.cdc" cdc "$BENCH_TOOLS" ;;
        compare) run "$label.compare" cdc "$compare_tools" ;;
        cdc2) run "$label.cdc2" cdc2 ;;
        dump) run "$label.dump" dump ;;
        mydumper) run "$label.mydumper" my_dumper ;;
      esac
    done
    bench_log "$label round $round/$rounds: $(for t in "${tools[@]}"; do printf '%s %s s, ' "$t" "$(tail -1 "$work/$label.$t.txt" | cut -d' ' -f1)"; done)"
  done
  stop_writer
}

bench_sql -e 'FLUSH BINARY LOGS'
measure fresh
bench_log "growing the active binlog to $binlog_mb MB (1 MB rows, 10 MB transactions)"
read -r _ offset < <(active_binlog)
while ((offset < binlog_mb * 1048576)); do
  bench_sql -e "USE bench; INSERT INTO bench.junk (b) SELECT REPEAT('x', 1048576) FROM seq_1_to_10"
  read -r _ offset < <(active_binlog)
done
bench_sql -e 'TRUNCATE TABLE bench.junk'
measure big

median() { cut -d' ' -f"$2" "$1" | bench_median; }
name_of() {
  case $1 in
    cdc) echo "cdc-snapshot" ;; compare) echo "compare" ;; cdc2) echo "cdc x2" ;; dump) echo "mariadb-dump" ;; mydumper) echo "mydumper -t 2" ;;
  esac
}
printf '\nMariaDB %s; %s (%d CPUs); bench.sbtest1: %s rows, %s chunks of %s; %d rounds, medians; concurrent writes: %s\n' \
  "$(bench_sql -e 'SELECT VERSION()')" "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" \
  "$(bench_commas "$rows")" "$(cat "$work/chunks")" "$chunk_size" "$rounds" "$writes"
[[ -n $compare_tools ]] && printf 'compare: %s\n' "$compare_tools"
printf 'active binlog: fresh %d MB, big %d MB; one BINLOG_GTID_POS at its end: %s s, %s s\n\n' \
  "$(($(cat "$work/fresh.binlog") / 1048576))" "$(($(cat "$work/big.binlog") / 1048576))" \
  "$(cat "$work/fresh.gtid_pos")" "$(cat "$work/big.gtid_pos")"
printf '%-14s %13s %13s %8s %17s %17s\n' tool "fresh wall s" "big wall s" growth "fresh server cpu" "big server cpu"
for tool in "${tools[@]}"; do
  fresh=$(median "$work/fresh.$tool.txt" 1)
  big=$(median "$work/big.$tool.txt" 1)
  printf '%-14s %13.2f %13.2f %7.2fx %17.2f %17.2f\n' "$(name_of "$tool")" "$fresh" "$big" \
    "$(awk -v a="$big" -v b="$fresh" 'BEGIN { print a / b }')" \
    "$(median "$work/fresh.$tool.txt" 2)" "$(median "$work/big.$tool.txt" 2)"
done
ratio() { # ratio SIZE COLUMN: mydumper -t 2's median over cdc x2's
  awk -v a="$(median "$work/$1.mydumper.txt" "$2")" -v b="$(median "$work/$1.cdc2.txt" "$2")" \
    'BEGIN { printf "%.2fx", (b > 0 ? a / b : 0) }'
}
printf '\nratios, mydumper -t 2 / cdc x2 (> 1: cdc better)\n'
printf '  wall:       fresh %s, big %s\n' "$(ratio fresh 1)" "$(ratio big 1)"
printf '  server cpu: fresh %s, big %s\n' "$(ratio fresh 2)" "$(ratio big 2)"
