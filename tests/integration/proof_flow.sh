# The proof of issue 6, for one table kind: a snapshot taken under a random concurrent load,
# merged with its binlog deltas and followed by the stream, replays into an empty copy that
# equals the source row for row. Not a test itself: sync_proof_<kind>.sh run it (one script per
# kind, so CTest runs them side by side, each on its own throwaway server).
# Usage, after lib.sh, live_lib.sh and proof_lib.sh:   proof_flow KIND SEED...
# For each SEED, two runs on fresh tables, each under its own load:
#   tools  the four tools by hand, as DESIGN.md's full-sync example: cdc-plan with small chunks;
#          two cdc-snapshot workers taking one chunk at a time with pauses between, so that the
#          chunks are read at different moments of the load (their low watermarks differ);
#          cdc-merge --span; cdc-stream --from --until for the deltas; cdc-merge; then, once the
#          load has stopped, cdc-stream from the merged high line --until now.
#   crash  cdc-sync --mode initial -j 2, killed with SIGKILL (its whole process group) at a
#          random moment while the load runs, then rerun with --until now to the end (a keyless
#          table with --chunk-key on its unindexed grp column; by hand it is one chunk).
# Each replays the merged snapshot and then the stream into an empty copy with the strict
# replay helper (a row inserted twice, or an update or delete that finds no row, fails), and
# compares every row of the copy with the source. When that fails, each chunk and the merged
# snapshot are checked against the table's history (proof_check_history), to tell which of
# them, or the stream after, made the difference.

plan=$tools_dir/cdc-plan
snapshot=$tools_dir/cdc-snapshot
merge=$tools_dir/cdc-merge
sync_tool=$tools_dir/cdc-sync
export CDC_TOOLS_DIR=$tools_dir  # cdc-sync runs the tools under test (build/ or build-sanitize/)
proof_rows_initial=${PROOF_ROWS:-3000}
proof_chunk_size=${PROOF_CHUNK_SIZE:-150}
proof_load_seconds=${PROOF_LOAD_SECONDS:-5}

cdc_as() { MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 120 "$@"; }
connection() { echo -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc; }

# _proof_snapshot_worker PLAN_PART CHUNK_DIR: one chunk line at a time, 20-120 ms apart.
_proof_snapshot_worker() {
  local line status=0
  while IFS= read -r line; do
    [[ -n $line ]] || continue
    printf '%s\n' "$line" | cdc_as "$snapshot" $(connection) --output-dir "$2" - || status=$?
    ((status == 0)) || return $status
    sleep "0.0$((RANDOM % 10 + 2))"
  done <"$1"
}

# proof_by_tools KIND SEED: the flow with the four tools by hand.
proof_by_tools() {
  local kind=$1 seed=$2
  local table="src.${kind}_tools_$seed" copy="copy_${kind}_tools_$seed" dir="$work/tools_${kind}_$seed"
  mkdir -p "$dir/chunks"
  local start
  start=$(proof_binlog_now) || return 1
  proof_create "$kind" "$table" "$proof_rows_initial" "$seed" || return 1
  proof_load_bg "$kind" "$table" "$seed" "$proof_load_seconds"
  sleep 0.3
  cdc_as "$plan" $(connection) --tables "$table" --chunk-size "$proof_chunk_size" >"$dir/plan.ndjson" || return 1
  split -n r/2 "$dir/plan.ndjson" "$dir/plan.part."
  local p1 p2 s1=0 s2=0
  _proof_snapshot_worker "$dir/plan.part.aa" "$dir/chunks" &
  p1=$!
  _proof_snapshot_worker "$dir/plan.part.ab" "$dir/chunks" &
  p2=$!
  wait "$p1" || s1=$?
  wait "$p2" || s2=$?
  if ((s1 != 0 || s2 != 0)); then
    echo "  cdc-snapshot failed: exit $s1 / $s2"
    return 1
  fi
  proof_wait_load || return 1
  local from until
  read -r from until < <("$merge" --span "$dir"/chunks/*) || return 1
  echo "  $table: $(wc -l <"$dir/plan.ndjson") chunks, span $from .. $until"
  cdc_as "$stream" $(connection) --from "$from" --until "$until" --tables "$table" >"$dir/deltas.ndjson" || return 1
  "$merge" "$dir"/chunks/* --deltas "$dir/deltas.ndjson" >"$dir/merged.ndjson" || return 1
  local high
  high=$(jq -r 'select(.op=="high").position' "$dir/merged.ndjson")
  cdc_as "$stream" $(connection) --from "$high" --until now --tables "$table" >"$dir/tail.ndjson" || return 1
  echo "  $(grep -c '"op":"[cud]"' "$dir/deltas.ndjson") changes in the span, $(grep -c '"op":"[cud]"' "$dir/tail.ndjson") after it"
  if ! proof_replay "$copy" "$dir/merged.ndjson" "$dir/tail.ndjson" || ! proof_compare "$table" "$copy"; then
    proof_check_history "the chunks and merged snapshot of $table" "$start" "$table" "$dir/merged.ndjson" "$dir"/chunks/*
    return 1
  fi
}

# proof_by_sync_crash KIND SEED: cdc-sync killed at a random moment, then rerun to the end.
proof_by_sync_crash() {
  local kind=$1 seed=$2
  local table="src.${kind}_sync_$seed" copy="copy_${kind}_sync_$seed" dir="$work/sync_${kind}_$seed"
  local start
  start=$(proof_binlog_now) || return 1
  proof_create "$kind" "$table" "$proof_rows_initial" "$seed" || return 1
  proof_load_bg "$kind" "$table" "$seed" "$proof_load_seconds"
  # Anywhere from planning to the stream's first seconds (the load runs 5 s; the snapshot
  # of its small chunks takes about as long again under it): which phase it hits is printed.
  RANDOM=$seed
  local kill_after="$((RANDOM % 7)).$((RANDOM % 10))"
  # A table without a key is split by a column no index starts with (the server sorts it for
  # the boundaries): many chunks, rows moving between them, duplicates in each.
  local split=()
  [[ $kind == keyless ]] && split=(--chunk-key "$table=grp")
  # setsid: its own process group, so that SIGKILL reaches the tools it runs as well.
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD setsid "$sync_tool" $(connection) --tables "$table" --dir "$dir" \
    --mode initial -j 2 --chunk-size "$((proof_chunk_size / 3))" "${split[@]}" --output "$work/sync_${kind}_$seed.ndjson" \
    --no-progress >/dev/null 2>"$work/sync_first.err" &
  local sync_pid=$!
  bg_pids+=("$sync_pid")
  sleep "$kill_after"
  # Its process group exists once setsid has run in the child: a kill in the first moments
  # may come before that, and is tried again.
  while ! kill -9 -- "-$sync_pid" 2>/dev/null && kill -0 "$sync_pid" 2>/dev/null; do sleep 0.01; done
  wait "$sync_pid" 2>/dev/null
  echo "  cdc-sync killed after ${kill_after}s; phases it had begun: $(grep -o 'phase [a-z_]*' "$work/sync_first.err" | cut -d' ' -f2 | tr '\n' ' ')"
  proof_wait_load || return 1
  local status=0
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 120 "$sync_tool" $(connection) --tables "$table" --dir "$dir" \
    --mode initial -j 2 --chunk-size "$((proof_chunk_size / 3))" "${split[@]}" --output "$work/sync_${kind}_$seed.ndjson" \
    --no-progress --until now >/dev/null 2>"$work/sync_rerun.err" || status=$?
  if ((status != 0)); then
    echo "  cdc-sync rerun failed: exit $status"
    sed 's/^/    /' "$work/sync_rerun.err" | tail -5
    return 1
  fi
  if ! proof_replay "$copy" "$dir/snapshot.ndjson" "$work/sync_${kind}_$seed.ndjson" || ! proof_compare "$table" "$copy"; then
    proof_check_history "cdc-sync's chunks and merged snapshot of $table" "$start" "$table" "$dir/snapshot.ndjson" \
      "$dir"/chunks/*.ndjson
    return 1
  fi
}

# proof_flow KIND SEED...: both runs for every seed; the test's result.
proof_flow() {
  local kind=$1
  shift
  proof_require_tools
  throwaway_start "$srv" || exit 1
  # CDC_PROOF_ONE_SEED=1 (CI's sanitized pass, .ci/run): the first seed only. The sanitizers
  # watch the same code paths on every seed; the first pass runs them all.
  [[ -z ${CDC_PROOF_ONE_SEED:-} ]] || set -- "$1"
  local seed
  for seed in "$@"; do
    echo "# $kind, seed $seed: the tools by hand"
    proof_by_tools "$kind" "$seed" || { fail "$kind seed $seed by hand"; }
    echo "# $kind, seed $seed: cdc-sync killed and rerun"
    proof_by_sync_crash "$kind" "$seed" || { fail "$kind seed $seed cdc-sync crash"; }
  done
  echo "$passes passed, $failures failed"
  ((failures == 0))
}
