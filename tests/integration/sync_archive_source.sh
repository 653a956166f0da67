#!/usr/bin/env bash
# A snapshot that outlives the server's binlog retention, finished from a binlog archive
# (issue 14): cdc-stream --archive mirrors the server's binlog while cdc-sync --mode
# initial_only reads a table in many small chunks under a random load; half-way through the
# chunks the server rotates and purges every binlog but the newest, so the binlog between the
# chunks' lowest low and the purge exists only in the archive. Without --archive-source the
# deltas cannot be read (exit 5); with it, cdc-sync reads them from the archive and the merged
# snapshot, replayed with the stream after it, equals the source row for row.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
proof_require_tools
sync_tool=$tools_dir/cdc-sync
export CDC_TOOLS_DIR=$tools_dir
throwaway_start "$srv" || exit 1
connection=(-h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc)

archive="$work/archive"
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$stream" "${connection[@]}" --archive "$archive" --from earliest \
  2>"$work/archiver.err" &
archiver=$!
bg_pids+=("$archiver")

table=src.orders
proof_create int "$table" 20000 41 || exit 1
proof_load_bg int "$table" 41 15

# purge_mid_snapshot DIR: once DIR/chunks holds 20 chunk files, FLUSH BINARY LOGS, wait for
# the archive to have the flushed file whole, and purge every binlog but the newest.
purge_mid_snapshot() {
  local dir=$1 newest
  wait_until 60 bash -c "(( \$(ls '$dir/chunks' 2>/dev/null | grep -c '\\.ndjson$') >= 20 ))" || return 1
  root -e 'FLUSH BINARY LOGS' || return 1
  newest=$(root -N -e 'SHOW BINARY LOGS' | tail -1 | cut -f1)
  # The archive has every file before the newest complete once the newest one is begun.
  wait_until 20 test -e "$archive/.$newest.partial" -o -e "$archive/$newest" || return 1
  root -e "PURGE BINARY LOGS TO '$newest'" || return 1
  echo "  purged up to $newest with $(ls "$dir/chunks" | grep -c '\.ndjson$') chunk files read"
}

sync_run() {  # DIR EXTRA...: cdc-sync initial_only of the table in 200 chunks, one process
  local dir=$1
  shift
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 180 "$sync_tool" "${connection[@]}" --tables "$table" --dir "$dir" \
    --mode initial_only -j 1 --chunk-size 100 --no-progress "$@"
}

# Without the archive: the deltas start in a purged binlog.
sync_run "$work/plain.sync" >"$work/plain.ndjson" 2>"$work/plain.err" &
plain=$!
purge_mid_snapshot "$work/plain.sync" || echo "  (the purge came late)"
status=0
wait "$plain" || status=$?
assert "without --archive-source the purged deltas stop cdc-sync with exit 5 (exit $status)" test "$status" == 5
assert "saying the binlog is gone" grep -q "no longer has the binlog" "$work/plain.err"

# With it: the same, and the archive gives what was purged.
sync_run "$work/archived.sync" --archive-source "$archive" >"$work/snapshot.ndjson" 2>"$work/archived.err" &
archived=$!
purge_mid_snapshot "$work/archived.sync" || echo "  (the purge came late)"
status=0
wait "$archived" || status=$?
assert "with --archive-source cdc-sync finishes (exit $status)" test "$status" == 0 || sed 's/^/    /' "$work/archived.err" | tail -5
assert "its deltas were read from the archive" grep -q "reading it from the archive" "$work/archived.err"
proof_wait_load || exit 1

high=$(tail -1 "$work/snapshot.ndjson" | jq -r .position)
MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$stream" "${connection[@]}" --from "$high" --until now --tables "$table" \
  --archive-source "$archive" >"$work/tail.ndjson" 2>/dev/null
echo "  $(grep -c '"op":"[cud]"' "$work/archived.sync/deltas.ndjson") changes merged, $(grep -c '"op":"[cud]"' "$work/tail.ndjson") after the high line"
if proof_replay copy "$work/snapshot.ndjson" "$work/tail.ndjson" >"$work/replay.out" 2>&1; then
  proof_compare "$table" copy
else
  fail "the replay: $(tail -3 "$work/replay.out")"
fi
kill "$archiver" 2>/dev/null
wait "$archiver" 2>/dev/null
bg_pids=()
finish
