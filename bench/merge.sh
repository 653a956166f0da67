#!/usr/bin/env bash
# bench/merge.sh — how fast cdc-merge reconciles a whole table's chunks with the binlog changes
# made after they were read, next to the snapshot read itself, and how much memory it takes.
#
# Starts its own throwaway MariaDB (durability off, a 1 GiB buffer pool; bench/lib.sh) and fills
# the sysbench-style table bench.sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))
# with --rows rows from the sequence engine, out of the binlog. Then, over loopback TCP:
#   plan        cdc-plan --tables bench.sbtest1 > plan.ndjson            (default chunk size)
#   snapshot    cdc-snapshot --output-dir chunks plan.ndjson   (timed, --rounds times into a
#               fresh directory each: the snapshot read the merge is compared with)
#   changes     --changed-percent P of the rows touched with real changes, in transactions of
#               about 1000 rows each, every transaction a mix over one id range: updates of k and
#               c (0.8 P % of the rows), deletes (0.1 P %), primary-key moves id -> id + 3000000
#               (0.01 P %: into the last chunk, from all the others) and inserts of new ids past
#               the end (0.1 P % of the row count). Which rows: CRC32(id) % 100000 in a band.
#   deltas      cdc-stream --from FROM --until UNTIL --tables bench.sbtest1 > deltas.ndjson, FROM
#               from cdc-merge --span chunks/*, UNTIL = @@gtid_binlog_pos after the changes
#   merge       cdc-merge chunks/* --deltas deltas.ndjson --until UNTIL > /dev/null, with the
#               default --memory-limit (6M, which spills) and with --memory-limit 256M (which
#               does not), alternating, --rounds times each
# Sanity checks first (untimed, once): the merged output has one r line per row of the table
# after the changes (SELECT COUNT(*)) and its high line says so; its rows' "after" objects are the
# same as those of a fresh cdc-snapshot of the changed table (jq -c .after, sorted, md5sum); both
# limits give byte-identical output (the high line's ts_ms aside). The spill runs (run files,
# merged ones included) and extra output passes each limit made are counted from the files
# cdc-merge creates in its spill directory (strace, in that untimed run), since it does not
# print them.
#
# How to read the output (medians over the rounds; peak RSS is the largest over the rounds):
#   wall s          wall seconds of the process
#   rows/s          rows written (merge) or read (snapshot) per wall second
#   cpu s           user+sys CPU seconds of the process
#   peak RSS MiB    its peak resident set (GNU time %M); "- limit": less the --memory-limit
# then the merge/snapshot ratio (> 1: the merge is faster than the read it follows) and whether
# the targets of issue 15 are met: merge at least 5 million rows/s with the default limit, a
# default peak RSS under 32 MiB, and the default limit no more than 10% slower than the large
# one. It is a benchmark, not a test: it exits non-zero only when the setup or a sanity check
# fails, never for a missed target.
#
# Usage: bench/merge.sh [--rows N] [--rounds N] [--changed-percent P] [--large-limit SIZE] [--keep-data DIR]
#   --rows N               rows in bench.sbtest1 (default 2000000)
#   --rounds N             timed rounds; the median is reported (default 3)
#   --changed-percent P    percent of the rows touched, an integer 1..100 (default 10)
#   --large-limit SIZE     the --memory-limit the default is compared with (default 256M)
#   --keep-data DIR        also copy the chunks, deltas.ndjson and until.txt (the --until position)
#                          to DIR, made if missing, to profile cdc-merge on them later
# Environment: CDC_TOOLS_DIR (where the cdc tools are; default build/tools of this clone, so build
# first: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j), TMPDIR (the
# work directory: chunks, deltas and cdc-merge's spill files go there).
# Runs as root on Debian 12 (installs missing packages, as scripts/test.sh does).
set -euo pipefail
export LC_ALL=C

CDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$CDC_ROOT/bench/lib.sh"

rows=2000000
rounds=3
changed_percent=10
large_limit=256M
keep_data=
bench_args merge "--rows --rounds --changed-percent --large-limit --keep-data" "" "$@"
bench_positive rows rounds changed_percent
((rows >= 1000)) || { echo "merge: --rows must be at least 1000" >&2; exit 2; }
((changed_percent <= 100)) || { echo "merge: --changed-percent must be 1..100" >&2; exit 2; }
[[ $large_limit =~ ^[1-9][0-9]*[KMG]$ ]] || { echo "merge: --large-limit is a size like 256M" >&2; exit 2; }
size_kib() {  # 16M -> 16384
  local n=${1%?}
  case ${1: -1} in K) echo "$n" ;; M) echo $((n * 1024)) ;; G) echo $((n * 1048576)) ;; esac
}
limits=(6M "$large_limit")  # 6M is cdc-merge's default; it is run without the option
limit_names=(default "$large_limit")

# --- 1. packages, tools, server, table --------------------------------------------------------
CDC_PACKAGES+=(strace)
bench_setup merge
bench_tools_dir cdc-plan cdc-snapshot cdc-stream cdc-merge
plan=$BENCH_TOOLS/cdc-plan snapshot=$BENCH_TOOLS/cdc-snapshot stream=$BENCH_TOOLS/cdc-stream merge=$BENCH_TOOLS/cdc-merge
work=$BENCH_WORK
bench_start_server
conn=("${BENCH_CDC_CONN[@]}")
bench_load_sbtest "$rows"

# --- 2. plan and snapshot ---------------------------------------------------------------------
"$plan" "${conn[@]}" --tables bench.sbtest1 >"$work/plan.ndjson" 2>"$work/plan.err" ||
  { tail -5 "$work/plan.err" >&2; bench_die "cdc-plan failed"; }
chunks=$(grep -c '"op":"chunk"' "$work/plan.ndjson" || true)
bench_log "cdc-plan: $chunks chunks"
bench_log "warm-up: one untimed snapshot to fill the buffer pool"
mkdir "$work/chunks"
"$snapshot" "${conn[@]}" --output-dir "$work/chunks" "$work/plan.ndjson" 2>"$work/snapshot.err" ||
  { tail -5 "$work/snapshot.err" >&2; bench_die "cdc-snapshot failed"; }
: >"$work/snapshot.txt"
for ((round = 1; round <= rounds; round++)); do
  rm -rf "$work/chunks"
  mkdir "$work/chunks"
  bench_time "$work/t" "$snapshot" "${conn[@]}" --output-dir "$work/chunks" "$work/plan.ndjson" 2>"$work/snapshot.err" ||
    { tail -5 "$work/snapshot.err" >&2; bench_die "cdc-snapshot failed"; }
  cat "$work/t" >>"$work/snapshot.txt"
  bench_log "snapshot round $round/$rounds: $(cut -d' ' -f1 "$work/t") s"
done
snap_rows=$(cat "$work"/chunks/*.ndjson | grep -c '"op":"r"' || true)
[[ $snap_rows == "$rows" ]] || bench_die "cdc-snapshot wrote $snap_rows r lines, wanted $rows"
read -r from span_until <<<"$("$merge" --span "$work"/chunks/*.ndjson)"
before=$(bench_sql -e 'SELECT @@gtid_binlog_pos')
bench_log "chunks span $from .. $span_until; the server is at $before before the changes"

# --- 3. the changes ---------------------------------------------------------------------------
# Transactions over consecutive id ranges of `range` ids; in each, the rows whose
# CRC32(id) % 100000 falls in a band: [0, upd) updated, [upd, del) deleted, [del, mov) moved.
range=$(((100000 + changed_percent - 1) / changed_percent))
upd=$((800 * changed_percent)) del=$((900 * changed_percent)) mov=$((910 * changed_percent))
inserts=$((rows * changed_percent / 1000))
move_offset=3000000
while ((move_offset <= rows + inserts)); do move_offset=$((move_offset * 2)); done
transactions=$(((rows + range - 1) / range))
band="CRC32(id) % 100000"
{
  echo "USE bench;"
  for ((t = 0; t < transactions; t++)); do
    lo=$((t * range + 1)) hi=$(((t + 1) * range))
    ins_from=$((t * inserts / transactions)) ins_to=$(((t + 1) * inserts / transactions))
    echo "BEGIN;"
    echo "UPDATE sbtest1 SET k = k + 1, c = $BENCH_C_EXPR WHERE id BETWEEN $lo AND $hi AND $band < $upd;"
    echo "DELETE FROM sbtest1 WHERE id BETWEEN $lo AND $hi AND $band >= $upd AND $band < $del;"
    echo "UPDATE sbtest1 SET id = id + $move_offset WHERE id BETWEEN $lo AND $hi AND $band >= $del AND $band < $mov;"
    if ((ins_to > ins_from)); then
      echo "INSERT INTO sbtest1 (id, k, c, pad) SELECT $((rows + ins_from)) + seq, FLOOR(1 + RAND() * $rows), $BENCH_C_EXPR, $BENCH_PAD_EXPR FROM seq_1_to_$((ins_to - ins_from));"
    fi
    echo "COMMIT;"
  done
  echo "SELECT COUNT(*) FROM sbtest1;"
  echo "SELECT @@gtid_binlog_pos;"
} >"$work/changes.sql"
bench_log "changing $changed_percent% of the rows in $transactions transactions"
change_start=$SECONDS
{ read -r rows_after; read -r until; } < <(bench_sql <"$work/changes.sql")
bench_log "changed in $((SECONDS - change_start)) s: $rows_after rows now, server at $until"

# --- 4. the deltas ----------------------------------------------------------------------------
"$stream" "${conn[@]}" --from "$from" --until "$until" --tables bench.sbtest1 >"$work/deltas.ndjson" \
  2>"$work/stream.err" || { tail -5 "$work/stream.err" >&2; bench_die "cdc-stream failed"; }
delta_lines=$(wc -l <"$work/deltas.ndjson")
delta_rows=$(grep -c -E '^\{"op":"[cud]"' "$work/deltas.ndjson" || true)
delta_mib=$(du -m "$work/deltas.ndjson" | cut -f1)
bench_log "cdc-stream: $delta_lines lines, $delta_rows row changes, $delta_mib MiB"
if [[ -n $keep_data ]]; then
  mkdir -p "$keep_data/chunks"
  cp "$work"/chunks/*.ndjson "$keep_data/chunks/"
  cp "$work/deltas.ndjson" "$keep_data/"
  echo "$until" >"$keep_data/until.txt"
  bench_log "kept the chunks, deltas.ndjson and until.txt in $keep_data"
fi

# --- 5. sanity (untimed, once per limit) ------------------------------------------------------
merge_args() {  # merge_args LIMIT_INDEX: the cdc-merge command line
  local i=$1
  echo "$merge"
  printf '%s\n' "$work"/chunks/*.ndjson
  printf '%s\n' --deltas "$work/deltas.ndjson" --until "$until" --spill-dir "$work/spill"
  ((i == 0)) || printf '%s\n' --memory-limit "${limits[i]}"
}
mkdir -p "$work/spill"
failures=()
for i in 0 1; do
  mapfile -t cmd < <(merge_args "$i")
  strace -f -qq -e trace=openat -o "$work/strace.$i" "${cmd[@]}" >"$work/merged.$i" 2>"$work/merge.err.$i" ||
    { tail -5 "$work/merge.err.$i" >&2; bench_die "cdc-merge (${limit_names[i]}) failed"; }
  spill_runs[i]=$(grep -c -E 'cdc-merge\.[^/"]*/run\.[0-9]+"' "$work/strace.$i" || true)
  extra_passes[i]=$(grep -c -E 'cdc-merge\.[^/"]*/pass\.[0-9]+"' "$work/strace.$i" || true)
  rm -f "$work/strace.$i"
done
merged_rows=$(grep -c '^{"op":"r"' "$work/merged.0" || true)
high_rows=$(tail -1 "$work/merged.0" | jq -r 'select(.op == "high") | .rows')
[[ $merged_rows == "$rows_after" && $high_rows == "$rows_after" ]] ||
  failures+=("the merge wrote $merged_rows r lines (high line: ${high_rows:-none}); the table has $rows_after rows")
cmp -s <(grep -v '^{"op":"high"' "$work/merged.0") <(grep -v '^{"op":"high"' "$work/merged.1") ||
  failures+=("--memory-limit ${limit_names[1]} gave different output than the default")
mkdir "$work/fresh"
"$plan" "${conn[@]}" --tables bench.sbtest1 >"$work/plan2.ndjson" 2>"$work/plan.err" ||
  { tail -5 "$work/plan.err" >&2; bench_die "cdc-plan failed"; }
"$snapshot" "${conn[@]}" --output-dir "$work/fresh" "$work/plan2.ndjson" 2>"$work/snapshot.err" ||
  { tail -5 "$work/snapshot.err" >&2; bench_die "cdc-snapshot failed"; }
merged_sum=$(grep '^{"op":"r"' "$work/merged.0" | jq -c .after | sort | md5sum | cut -d' ' -f1)
fresh_sum=$(cat "$work"/fresh/*.ndjson | grep '^{"op":"r"' | jq -c .after | sort | md5sum | cut -d' ' -f1)
[[ $merged_sum == "$fresh_sum" ]] ||
  failures+=("the merged rows differ from a fresh snapshot of the changed table (md5 of sorted after objects: $merged_sum, fresh $fresh_sum)")
rm -rf "$work/fresh" "$work"/merged.*
bench_log "sanity: $merged_rows rows merged; after objects md5 $merged_sum (fresh snapshot $fresh_sum);" \
  "spill runs ${spill_runs[0]}/${spill_runs[1]}, extra passes ${extra_passes[0]}/${extra_passes[1]}"
if ((${#failures[@]} > 0)); then
  printf 'merge: SANITY CHECK FAILED: %s\n' "${failures[@]}" >&2
  exit 1
fi

# --- 6. timed merges --------------------------------------------------------------------------
: >"$work/merge.0.txt"
: >"$work/merge.1.txt"
for ((round = 1; round <= rounds; round++)); do
  line=
  for j in 0 1; do
    i=$(((j + round - 1) % 2))  # alternate which limit goes first
    mapfile -t cmd < <(merge_args "$i")
    bench_time "$work/t" "${cmd[@]}" >/dev/null 2>"$work/merge.err.$i" ||
      { tail -5 "$work/merge.err.$i" >&2; bench_die "cdc-merge (${limit_names[i]}) failed"; }
    cat "$work/t" >>"$work/merge.$i.txt"
    line+=" ${limit_names[i]} $(cut -d' ' -f1 "$work/t") s,"
  done
  bench_log "merge round $round/$rounds:${line%,}"
done

# --- 7. summary -------------------------------------------------------------------------------
stats() {  # stats FILE: "median_wall median_cpu max_rss_kib"
  echo "$(cut -d' ' -f1 "$1" | bench_median) $(cut -d' ' -f2 "$1" | bench_median) $(cut -d' ' -f3 "$1" | sort -g | tail -1)"
}
read -r snap_wall snap_cpu snap_rss < <(stats "$work/snapshot.txt")
read -r m0_wall m0_cpu m0_rss < <(stats "$work/merge.0.txt")
read -r m1_wall m1_cpu m1_rss < <(stats "$work/merge.1.txt")
bench_time "$work/t" "$merge" --version >/dev/null
base_rss=$(cut -d' ' -f3 "$work/t")
awk -v rows="$rows" -v after="$rows_after" -v chunks="$chunks" -v rounds="$rounds" -v pct="$changed_percent" \
  -v dlines="$delta_lines" -v drows="$delta_rows" -v dmib="$delta_mib" -v txns="$transactions" \
  -v srv="$(bench_sql -e 'SELECT VERSION()')" -v cpu="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" \
  -v ncpu="$(nproc)" -v cdcv="$("$merge" --version 2>/dev/null | head -1)" \
  -v sw="$snap_wall" -v sc="$snap_cpu" -v sr="$snap_rss" \
  -v w0="$m0_wall" -v c0="$m0_cpu" -v r0="$m0_rss" -v l0="$(size_kib "${limits[0]}")" -v n0="${limit_names[0]}" \
  -v w1="$m1_wall" -v c1="$m1_cpu" -v r1="$m1_rss" -v l1="$(size_kib "${limits[1]}")" -v n1="${limit_names[1]}" \
  -v base="$base_rss" -v s0="${spill_runs[0]}" -v s1="${spill_runs[1]}" -v p0="${extra_passes[0]}" -v p1="${extra_passes[1]}" '
  function commas(x,   s, r) { s = sprintf("%d", x); while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } return s r }
  BEGIN {
    printf "\nMariaDB %s over loopback TCP; %s (%d CPUs)\n%s\n", srv, cpu, ncpu, cdcv
    printf "bench.sbtest1: %s rows in %d chunks; %d%% changed in %d transactions -> %s rows\n", commas(rows), chunks, pct, txns, commas(after)
    printf "deltas: %s lines, %s row changes, %d MiB; %d rounds, medians (peak RSS: max)\n", commas(dlines), commas(drows), dmib, rounds
    printf "\n%-25s %7s %11s %7s %13s %11s %11s %8s\n", "run", "wall s", "rows/s", "cpu s", "peak RSS MiB", "- limit MiB", "spill runs", "passes+"
    printf "%-25s %7.2f %11s %7.2f %13.1f %11s %11s %8s\n", "cdc-snapshot (the read)", sw, commas(rows / sw), sc, sr / 1024, "-", "-", "-"
    printf "%-25s %7.2f %11s %7.2f %13.1f %11.1f %11d %8d\n", "cdc-merge 6M (default)", w0, commas(after / w0), c0, r0 / 1024, (r0 - l0) / 1024, s0, p0
    printf "%-25s %7.2f %11s %7.2f %13.1f %11.1f %11d %8d\n", "cdc-merge " n1, w1, commas(after / w1), c1, r1 / 1024, (r1 - l1) / 1024, s1, p1
    printf "(cdc-merge --version alone: %.1f MiB resident: the program and its libraries)\n", base / 1024
    printf "\nratios (> 1: the merge is faster than the snapshot read)\n"
    printf "  merge/snapshot rows/s, limit %s: %.2fx\n", n0, (after / w0) / (rows / sw)
    printf "  merge/snapshot rows/s, limit %s: %.2fx\n", n1, (after / w1) / (rows / sw)
    printf "targets\n"
    printf "  merge >= 5,000,000 rows/s (default limit): %s, %s rows/s\n", after / w0 >= 5e6 ? "met" : "NOT MET",
      commas(after / w0)
    printf "  default peak RSS < 32 MiB: %s, %.1f MiB\n", r0 < 32768 ? "met" : "NOT MET", r0 / 1024
    printf "  default at most 10%% slower than limit %s: %s, %.1f%% (wall), %.1f%% (cpu)\n", n1,
      w0 <= w1 * 1.10 ? "met" : "NOT MET", (w0 / w1 - 1) * 100, (c0 / c1 - 1) * 100
  }'
