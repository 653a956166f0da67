#!/usr/bin/env bash
# bench/huge_table.sh — planning and snapshotting tables of tens of millions of rows, larger than
# the buffer pool, keyed by a VARCHAR and by a composite primary key, next to mydumper and
# mariadb-dump: does the plan's cost grow faster than the rows, and does any tool's memory grow?
#
# Starts its own throwaway MariaDB (bench/lib.sh: durability off) with a buffer pool of
# --buffer-pool (default 256M), well below the tables, and loads, out of the binlog, from the
# sequence engine (n = 1, 2, ...), for each --key kind a table of --rows rows and its "tenth" of
# --rows/10 rows, for the growth figures:
#   varchar     bench.huge_varchar (id VARCHAR(64) utf8mb4_general_ci PRIMARY KEY, k INT,
#               c CHAR(120), pad CHAR(60)): sysbench's table with a string key, the first 8 hex
#               digits of MD5(n DIV 65536), '-' and n in 10 digits ('c4ca4238-0000065536'): runs
#               of 65,536 rows in n's order, the runs in hash order, so that the key order is not
#               n's and every comparison is the collation's
#   composite   bench.huge_composite (tenant_id INT, created DATETIME(6), id BIGINT, k, c, pad;
#               PRIMARY KEY (tenant_id, created, id)): 1,000 tenants, skewed as real ones are
#               (tenant_id = 1 + FLOOR(1000 u^4) with u = n / (rows + 1): tenant 1 has 18% of
#               the rows, tenants 1 to 63 half of them), created rising with n (a 997 µs step
#               every second row, so that ties on created are broken by id), id = n
# k, c and pad are as wide as sysbench's, from n (cheaper to make than its random digits, the
# same bytes to read and write). Each run of keys is inserted in key order, so the tables are
# laid out in key order, as after a rebuild, and InnoDB reads them ahead; 20,000,000 rows take
# about 4.4 GB of clustered index for each kind, their tenths 440 MB. The server reads with
# O_DIRECT, so every tool reads the tables from disk, as on a production server whose tables
# outgrew its memory. (A table grown by random inserts is read at the disk's random-read rate
# instead, by every tool alike.)
#
# Then, over loopback TCP, for each kind, --rounds rounds, every run once a round, the order
# rotated from round to round (output thrown away, or to a directory removed after each run):
#   cdc-plan          cdc-plan --tables bench.T > plan.ndjson (and on the tenth, bench.T_tenth)
#   cdc-snapshot x2   cdc-plan, then 2 cdc-snapshot processes over the chunk lines dealt
#                     round-robin (as bench/snapshot.sh's "cdc x2"); planning included
#   cdc-sync -j 2     cdc-sync --mode initial_only -j 2 --dir DIR --tables bench.T > /dev/null:
#                     plan, 2 snapshot processes, span, deltas, merge, the snapshot to stdout
#   mydumper -t 2     mydumper -t 2 --rows 100000 --trx-consistency-only into a directory
#                     (mydumper 0.10 splits integer keys only: the varchar table is one job)
#   mariadb-dump      mariadb-dump --single-transaction --quick bench T > /dev/null
# Untimed, before the rounds of a kind: both cdc layouts checked to print one r line per row of
# the table (cdc-snapshot x2 on the table, cdc-sync on its tenth; every timed cdc-sync run is
# counted too, after its clock stops), each cdc process's peak memory at a tenth of the rows,
# and the server's handler counters over one plan of each size: Handler_read_next per table row
# is 1.00 for a walk that reads each index record once, and would be about chunks/2 for one
# that restarted each OFFSET from the first row.
#
# How to read the output (medians over the rounds; peak RSS: the largest over the rounds):
#   wall s        wall seconds of the whole job
#   rows/s        table rows per wall second
#   client cpu s  user+sys CPU seconds of the client processes (GNU time; for cdc-sync, of it
#                 and all its children)
#   server cpu s  user+sys CPU seconds mariadbd spent during the run (/proc)
#   peak RSS MiB  per process, at rows/10 and at rows: cdc-snapshot's is the larger of its two
#                 processes; cdc-sync's children are each timed by GNU time (a CDC_TOOLS_DIR of
#                 wrappers), cdc-sync itself is sampled (VmHWM, every 0.2 s)
# then the plan's growth from the tenth to the table (wall and server CPU against the row ratio,
# which is 10) and the ratios to the other tools: > 1 means cdc is faster or leaner. It is a
# benchmark, not a test: no thresholds; it fails only when the setup or a sanity check fails.
#
# Usage: bench/huge_table.sh [--rows N] [--key varchar|composite|both] [--rounds N]
#                            [--buffer-pool SIZE] [--batch-rows N]
#   --rows N                  rows in each table (default 20000000; at least 1000)
#   --key KIND                varchar, composite or both (default both)
#   --rounds N                timed rounds per kind; medians reported (default 2)
#   --buffer-pool SIZE        innodb_buffer_pool_size, e.g. 256M or 1G (default 256M)
#   --batch-rows N            rows per INSERT ... SELECT while loading (default 100000)
# Environment: CDC_TOOLS_DIR (where the cdc tools are; default build/tools of this clone, so
# build first: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j), TMPDIR
# (the server's datadir, mydumper's and cdc-sync's outputs: about 1.3 KB a row of free space for
# both kinds; checked first). At the default size the run takes about 35 minutes of a 2-core
# machine: 5 to load, 3 for the sanity runs and 12 a round.
# Runs as root on Debian 12 (installs missing packages, mydumper among them, as scripts/test.sh does).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/bench/lib.sh"

rows=20000000
key=both
rounds=2
buffer_pool=256M
batch_rows=100000
bench_args huge_table "--rows --key --rounds --buffer-pool --batch-rows" "" "$@"
bench_positive rows rounds batch_rows
((rows >= 1000)) || { echo "huge_table: --rows must be at least 1000" >&2; exit 2; }
case $key in
  varchar | composite) kinds=("$key") ;;
  both) kinds=(varchar composite) ;;
  *) echo "huge_table: --key is varchar, composite or both, not '$key'" >&2; exit 2 ;;
esac
size_mib() {  # 256M -> 256, 2G -> 2048; empty when not a size
  case $1 in [1-9]*M) [[ ${1%M} =~ ^[0-9]+$ ]] && echo "${1%M}" ;; [1-9]*G) [[ ${1%G} =~ ^[0-9]+$ ]] && echo "$((${1%G} * 1024))" ;; esac
}
pool_mib=$(size_mib "$buffer_pool") || true
[[ -n $pool_mib ]] || { echo "huge_table: --buffer-pool is a size like 256M or 1G, not '$buffer_pool'" >&2; exit 2; }
tenth=$((rows / 10))

# --- 1. packages, tools, space ----------------------------------------------------------------
CDC_PACKAGES+=(mydumper)
bench_setup huge_table
bench_tools_dir cdc-plan cdc-snapshot cdc-stream cdc-merge cdc-sync
bench_dumpers
tools=$BENCH_TOOLS work=$BENCH_WORK
# Each table and its tenth on the server (about 260 bytes a row), then at most one cdc-sync
# directory at a time (its chunks and the merged snapshot, about 350 bytes a row each).
need_kib=$((rows * (${#kinds[@]} * 290 + 700) / 1024))
free_kib=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
((free_kib >= need_kib)) ||
  bench_die "$work has $((free_kib / 1048576)) GiB free; --rows $rows needs about $((need_kib / 1048576 + 1)) GiB (set TMPDIR)"
bench_log "$((free_kib / 1048576)) GiB free in $work, about $((need_kib / 1048576 + 1)) GiB needed; $(uptime)"

# --- 2. the server and the tables -------------------------------------------------------------
bench_start_server --innodb-buffer-pool-size="${pool_mib}M"
bench_reference_account
payload="k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL"
payload_values="seq * 7919 % $rows + 1, RPAD(CONCAT_WS('-', seq, CRC32(seq), seq * 7919), 120, '-0123456789'),"
payload_values+=" RPAD(CRC32(seq), 60, '-9876543210')"
load_kind() {  # load_kind KIND: its table and its tenth
  local kind=$1 table n
  for table in "huge_$kind" "huge_${kind}_tenth"; do
    n=$rows
    [[ $table == *_tenth ]] && n=$tenth
    case $kind in
      varchar)
        bench_load_table "$table" "$n" "$batch_rows" \
          "id VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, $payload" \
          "CONCAT(LEFT(MD5(seq DIV 65536), 8), '-', LPAD(seq, 10, '0')), $payload_values" ;;
      composite)
        bench_load_table "$table" "$n" "$batch_rows" \
          "tenant_id INT NOT NULL, created DATETIME(6) NOT NULL, id BIGINT NOT NULL, $payload, PRIMARY KEY (tenant_id, created, id)" \
          "1 + FLOOR(1000 * POW(seq / ($n + 1E0), 4)), TIMESTAMP'2024-01-01 00:00:00' + INTERVAL (seq DIV 2) * 997 MICROSECOND, seq, $payload_values" ;;
    esac
  done
}
load_start=$SECONDS
bench_log "loading the kinds side by side"
load_pids=()
for kind in "${kinds[@]}"; do
  load_kind "$kind" &
  load_pids+=($!)
done
for pid in "${load_pids[@]}"; do wait "$pid" || bench_die "a load failed"; done
load_seconds=$((SECONDS - load_start))
table_mib() { bench_sql -e "SELECT DATA_LENGTH DIV 1048576 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'bench' AND TABLE_NAME = '$1'"; }

# --- 3. the runs ------------------------------------------------------------------------------
# Each run appends "wall_s client_cpu_s server_cpu_s" to $work/KIND.RUN.txt and, for each of its
# cdc processes, "PROCESS rss_kib" lines to $work/KIND.RUN.rss.
gnu_time=/usr/bin/time
# cdc-sync runs these wrappers (CDC_TOOLS_DIR): each tool under GNU time, its figures into
# $work/rss.TOOL.PID, so that every child's peak memory is its own.
mkdir "$work/timed-tools"
for tool in cdc-plan cdc-snapshot cdc-stream cdc-merge; do
  printf '#!/bin/sh\nexec %s -f "%%M %%U %%S" -o "%s/rss.%s.$$" "%s/%s" "$@"\n' \
    "$gnu_time" "$work" "$tool" "$tools" "$tool" >"$work/timed-tools/$tool"
  chmod +x "$work/timed-tools/$tool"
done

fail_run() {  # fail_run NAME: say so with its stderr, and stop
  echo "huge_table: $1 failed; its stderr:" >&2
  tail -5 "$work/$1.err" >&2
  exit 1
}
timed() {  # timed NAME command...: the command under GNU time, its figures into $work/t.NAME
  local name=$1
  shift
  "$gnu_time" -f '%M %U %S' -o "$work/t.$name" "$@"
}
# record KIND.RUN START SERVER_CPU0 PROCESS=FILE...: "wall client_cpu server_cpu" into KIND.RUN.txt
# and "PROCESS rss_kib" into KIND.RUN.rss for each FILE (GNU time's "rss user sys"); the CPU of a
# PROCESS written +PROCESS is counted (cdc-sync's counts its children's: theirs are not).
record() {
  local name=$1 start=$2 server0=$3 entry process rss user sys cpu=0 wall server1
  shift 3
  wall=$(awk -v s="$start" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.3f", e - s }')
  server1=$(bench_server_cpu)
  for entry in "$@"; do
    process=${entry%%=*}
    # GNU time writes "Command exited with non-zero status N" before its figures when it fails.
    read -r rss user sys < <(grep -v '^Command' "${entry#*=}")
    [[ $process == +* ]] && cpu=$(awk -v a="$cpu" -v u="$user" -v s="$sys" 'BEGIN { print a + u + s }')
    echo "${process#+} $rss" >>"$work/$name.rss"
  done
  awk -v w="$wall" -v c="$cpu" -v s0="$server0" -v s1="$server1" 'BEGIN { printf "%s %.2f %.2f\n", w, c, s1 - s0 }' \
    >>"$work/$name.txt"
  rm -f "$work"/t.*
}
run_plan() {  # run_plan KIND TABLE RUN
  local start server0
  server0=$(bench_server_cpu) start=$EPOCHREALTIME
  timed plan "$tools/cdc-plan" "${BENCH_CDC_CONN[@]}" --tables "bench.$2" >"$work/plan.ndjson" 2>>"$work/$1.$3.err" ||
    fail_run "$1.$3"
  record "$1.$3" "$start" "$server0" "+cdc-plan=$work/t.plan"
}
run_cdc2() {  # run_cdc2 KIND TABLE RUN [OUTPUT]: OUTPUT's % becomes the process number (0, 1)
  local start server0 p0 p1 out=${4:-/dev/null}
  rm -f "$work"/chunks.*
  server0=$(bench_server_cpu) start=$EPOCHREALTIME
  timed plan "$tools/cdc-plan" "${BENCH_CDC_CONN[@]}" --tables "bench.$2" >"$work/chunks.ndjson" \
    2>>"$work/$1.$3.err" || fail_run "$1.$3"
  split -n r/2 "$work/chunks.ndjson" "$work/chunks.part."
  timed snap0 "$tools/cdc-snapshot" "${BENCH_CDC_CONN[@]}" "$work/chunks.part.aa" >"${out/\%/0}" 2>>"$work/$1.$3.err" &
  p0=$!
  timed snap1 "$tools/cdc-snapshot" "${BENCH_CDC_CONN[@]}" "$work/chunks.part.ab" >"${out/\%/1}" 2>>"$work/$1.$3.err" &
  p1=$!
  wait "$p0" || fail_run "$1.$3"
  wait "$p1" || fail_run "$1.$3"
  record "$1.$3" "$start" "$server0" "+cdc-plan=$work/t.plan" "+cdc-snapshot=$work/t.snap0" "+cdc-snapshot=$work/t.snap1"
}
run_sync() {  # run_sync KIND TABLE RUN: the r lines of the snapshot it printed into $work/sync.rows
  local start server0 pid='' time_pid hwm=0 line file entries
  rm -rf "$work/sync" "$work"/rss.*
  server0=$(bench_server_cpu) start=$EPOCHREALTIME
  # GNU time itself in the background (not through timed, a subshell), so that cdc-sync is its child.
  CDC_TOOLS_DIR=$work/timed-tools "$gnu_time" -f '%M %U %S' -o "$work/t.sync" "$tools/cdc-sync" "${BENCH_CDC_CONN[@]}" \
    --mode initial_only -j 2 --dir "$work/sync" --tables "bench.$2" --no-progress >/dev/null 2>>"$work/$1.$3.err" &
  time_pid=$!
  # cdc-sync's own peak, sampled: GNU time's is the largest of it and its children.
  while kill -0 "$time_pid" 2>/dev/null; do
    [[ -n $pid ]] || pid=$(pgrep -P "$time_pid" -x cdc-sync || true)
    if [[ -n $pid ]] && line=$(grep '^VmHWM:' "/proc/$pid/status" 2>/dev/null); then
      line=${line//[!0-9]/}
      ((line > hwm)) && hwm=$line
    fi
    sleep 0.2
  done
  wait "$time_pid" || fail_run "$1.$3"
  echo "$hwm 0 0" >"$work/t.own"
  entries=("+cdc-sync.tree=$work/t.sync" "cdc-sync=$work/t.own")
  for file in "$work"/rss.*; do
    file=${file#"$work"/rss.}
    entries+=("${file%.*}=$work/rss.$file")
  done
  record "$1.$3" "$start" "$server0" "${entries[@]}"
  rm -f "$work"/rss.*
  # What it printed is a copy of this file.
  grep -c '^{"op":"r"' "$work/sync/snapshot.ndjson" >"$work/sync.rows" || true
  rm -rf "$work/sync"
}
run_mydumper() {  # run_mydumper KIND TABLE RUN
  local start server0
  rm -rf "$work/mydumper.out"
  server0=$(bench_server_cpu) start=$EPOCHREALTIME
  timed client "$BENCH_MYDUMPER" -h 127.0.0.1 -P "$BENCH_PORT" -u bench -p "$BENCH_REF_PASSWORD" -B bench -T "$2" \
    -t 2 --rows 100000 --trx-consistency-only -v 1 -o "$work/mydumper.out" >/dev/null 2>>"$work/$1.$3.err" ||
    fail_run "$1.$3"
  record "$1.$3" "$start" "$server0" "+mydumper=$work/t.client"
  find "$work/mydumper.out" -name "bench.$2.*sql" ! -name '*-schema.sql' | wc -l >"$work/$1.mydumper.files"
  rm -rf "$work/mydumper.out"
}
run_dump() {  # run_dump KIND TABLE RUN
  local start server0
  server0=$(bench_server_cpu) start=$EPOCHREALTIME
  timed client "$BENCH_MARIADB_DUMP" --no-defaults "${BENCH_REF_CONN[@]}" --single-transaction --quick bench "$2" \
    >/dev/null 2>>"$work/$1.$3.err" || fail_run "$1.$3"
  record "$1.$3" "$start" "$server0" "+mariadb-dump=$work/t.client"
}
handler_reads() {  # Handler_read_next and Com_select so far
  bench_sql -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_read_next', 'Com_select')" | awk '{ v[NR] = $2 } END { print v[1], v[2] }'
}

failures=()
for kind in "${kinds[@]}"; do
  table=huge_$kind
  # --- sanity and the tenth's memory (untimed) ---
  for name in "$table" "${table}_tenth"; do
    read -r select0 next0 < <(handler_reads)
    "$tools/cdc-plan" "${BENCH_CDC_CONN[@]}" --tables "bench.$name" >"$work/plan.ndjson" 2>"$work/$kind.sanity.err" ||
      fail_run "$kind.sanity"
    read -r select1 next1 < <(handler_reads)
    echo "$((next1 - next0)) $((select1 - select0)) $(grep -c '"op":"chunk"' "$work/plan.ndjson")" >"$work/$name.walk"
  done
  bench_log "$kind: sanity runs (cdc-snapshot x2 on bench.$table, cdc-sync on its tenth)"
  # The r lines of the 2 processes, counted from FIFOs: no copy of the table on disk.
  rm -f "$work"/sanity-?.fifo
  mkfifo "$work/sanity-0.fifo" "$work/sanity-1.fifo"
  grep -c '^{"op":"r"' <"$work/sanity-0.fifo" >"$work/sanity-0.rows" &
  count0=$!
  grep -c '^{"op":"r"' <"$work/sanity-1.fifo" >"$work/sanity-1.rows" &
  count1=$!
  run_cdc2 "$kind" "$table" sanity "$work/sanity-%.fifo"
  wait "$count0" "$count1" || true
  got=$(($(cat "$work/sanity-0.rows") + $(cat "$work/sanity-1.rows")))
  rm -f "$work"/sanity-?.* "$work/$kind.sanity.txt" "$work/$kind.sanity.rss"
  [[ $got == "$rows" ]] || failures+=("$kind: cdc-snapshot x2 printed $got r lines; bench.$table has $rows rows")
  run_cdc2 "$kind" "${table}_tenth" cdc2.tenth
  run_sync "$kind" "${table}_tenth" sync.tenth
  got=$(cat "$work/sync.rows")
  [[ $got == "$tenth" ]] || failures+=("$kind: cdc-sync printed $got r lines; bench.${table}_tenth has $tenth rows")
  ((${#failures[@]} == 0)) || break

  runs=(plan plan.tenth cdc2 sync mydumper dump)
  for run in "${runs[@]}"; do : >"$work/$kind.$run.txt"; done
  for ((round = 1; round <= rounds; round++)); do
    line=
    for ((i = 0; i < ${#runs[@]}; i++)); do
      run=${runs[(i + round - 1) % ${#runs[@]}]}
      case $run in
        plan) run_plan "$kind" "$table" plan ;;
        plan.tenth) run_plan "$kind" "${table}_tenth" plan.tenth ;;
        cdc2) run_cdc2 "$kind" "$table" cdc2 ;;
        sync)
          run_sync "$kind" "$table" sync
          got=$(cat "$work/sync.rows")
          [[ $got == "$rows" ]] || failures+=("$kind: cdc-sync printed $got r lines; bench.$table has $rows rows") ;;
        mydumper) run_mydumper "$kind" "$table" mydumper ;;
        dump) run_dump "$kind" "$table" dump ;;
      esac
      line+=" $run $(tail -1 "$work/$kind.$run.txt" | cut -d' ' -f1) s,"
    done
    bench_log "$kind round $round/$rounds:${line%,}"
  done
done

# --- 4. summary -------------------------------------------------------------------------------
median() { cut -d' ' -f"$2" "$1" | bench_median; }
peak() {  # peak KIND.RUN PROCESS: the largest peak RSS of that process, in MiB
  awk -v p="$2" '$1 == p && $2 > m { m = $2 } END { printf "%.1f", m / 1024 }' "$work/$1.rss" 2>/dev/null
}
printf '\nMariaDB %s over loopback TCP; %s (%d CPUs); load average %s\n' "$(bench_sql -e 'SELECT VERSION()')" \
  "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s; %s; %s\n' "$("$tools/cdc-plan" --version 2>/dev/null | head -1)" \
  "$("$BENCH_MARIADB_DUMP" --version | head -1)" "$("$BENCH_MYDUMPER" --version 2>&1 | head -1)"
printf 'loaded in %d s; buffer pool %d MiB while timing; %d rounds, medians\n' "$load_seconds" "$pool_mib" "$rounds"
for kind in "${kinds[@]}"; do
  [[ -s $work/$kind.dump.txt ]] || continue
  table=huge_$kind
  case $kind in
    varchar) what="id VARCHAR(64) utf8mb4_general_ci" ;;
    composite) what="(tenant_id INT, created DATETIME(6), id BIGINT)" ;;
  esac
  read -r walk_next walk_selects chunks <"$work/$table.walk"
  read -r tenth_next _ _ <"$work/${table}_tenth.walk"
  printf '\nbench.%s: %s rows, %s MiB, key %s; %s chunks; mydumper wrote %s data files\n' "$table" \
    "$(bench_commas "$rows")" "$(bench_commas "$(table_mib "$table")")" "$what" "$(bench_commas "$chunks")" \
    "$(cat "$work/$kind.mydumper.files")"
  printf '%-20s %8s %11s %13s %13s\n' tool "wall s" rows/s "client cpu s" "server cpu s"
  for run in plan.tenth plan cdc2 sync mydumper dump; do
    n=$rows
    case $run in
      plan.tenth) name="cdc-plan (rows/10)" n=$tenth ;; plan) name=cdc-plan ;; cdc2) name="cdc-snapshot x2" ;;
      sync) name="cdc-sync -j 2" ;; mydumper) name="mydumper -t 2" ;; dump) name=mariadb-dump ;;
    esac
    wall=$(median "$work/$kind.$run.txt" 1)
    printf '%-20s %8.2f %11s %13.2f %13.2f\n' "$name" "$wall" "$(bench_commas "$(awk -v n="$n" -v w="$wall" 'BEGIN { print n / w }')")" \
      "$(median "$work/$kind.$run.txt" 2)" "$(median "$work/$kind.$run.txt" 3)"
  done
  printf '%-28s %9s %9s\n' "peak RSS MiB" rows/10 rows
  rss_row() { printf '%-28s %9s %9s\n' "$1" "$2" "$3"; }
  rss_row cdc-plan "$(peak "$kind.plan.tenth" cdc-plan)" "$(peak "$kind.plan" cdc-plan)"
  rss_row "cdc-snapshot (of 2)" "$(peak "$kind.cdc2.tenth" cdc-snapshot)" "$(peak "$kind.cdc2" cdc-snapshot)"
  for tool in cdc-sync cdc-plan cdc-snapshot cdc-stream cdc-merge; do
    rss_row "cdc-sync -j 2: $tool" "$(peak "$kind.sync.tenth" "$tool")" "$(peak "$kind.sync" "$tool")"
  done
  rss_row "mydumper -t 2" - "$(peak "$kind.mydumper" mydumper)"
  rss_row mariadb-dump - "$(peak "$kind.dump" mariadb-dump)"
  awk -v rows="$rows" -v tenth="$tenth" -v nx="$walk_next" -v tnx="$tenth_next" -v sel="$walk_selects" \
    -v pw="$(median "$work/$kind.plan.txt" 1)" -v tw="$(median "$work/$kind.plan.tenth.txt" 1)" \
    -v ps="$(median "$work/$kind.plan.txt" 3)" -v ts="$(median "$work/$kind.plan.tenth.txt" 3)" \
    -v cw="$(median "$work/$kind.cdc2.txt" 1)" -v sw="$(median "$work/$kind.sync.txt" 1)" \
    -v mw="$(median "$work/$kind.mydumper.txt" 1)" -v dw="$(median "$work/$kind.dump.txt" 1)" \
    -v cc="$(median "$work/$kind.cdc2.txt" 2)" -v mc="$(median "$work/$kind.mydumper.txt" 2)" \
    -v dc="$(median "$work/$kind.dump.txt" 2)" -v crss="$(peak "$kind.cdc2" cdc-snapshot)" \
    -v mrss="$(peak "$kind.mydumper" mydumper)" -v drss="$(peak "$kind.dump" mariadb-dump)" '
    BEGIN {
      printf "plan growth, rows/10 -> rows (x%.0f rows): wall x%.1f, server cpu %s; the server read %.2f index records a row (Handler_read_next; %.2f at rows/10) in %d queries\n",
        rows / tenth, pw / tw, (ts > 0 ? sprintf("x%.1f", ps / ts) : "n/a"), nx / rows, tnx / tenth, sel
      printf "ratios (> 1: cdc better)\n"
      printf "  wall, mydumper -t 2 / cdc-snapshot x2:   %.2fx\n", mw / cw
      printf "  wall, mariadb-dump / cdc-snapshot x2:    %.2fx\n", dw / cw
      printf "  wall, mydumper -t 2 / cdc-sync -j 2:     %.2fx\n", mw / sw
      printf "  wall, mariadb-dump / cdc-sync -j 2:      %.2fx\n", dw / sw
      printf "  client cpu, mydumper / cdc-snapshot x2:  %.2fx\n", mc / cc
      printf "  client cpu, mariadb-dump / cdc x2:       %.2fx\n", dc / cc
      printf "  peak RSS, mydumper -t 2 / cdc-snapshot:  %.2fx\n", mrss / crss
      printf "  peak RSS, mariadb-dump / cdc-snapshot:   %.2fx\n", drss / crss
    }'
done
if ((${#failures[@]} > 0)); then
  printf 'huge_table: SANITY CHECK FAILED: %s\n' "${failures[@]}" >&2
  exit 1
fi
