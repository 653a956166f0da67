#!/usr/bin/env bash
# cdc-sync, the whole flow in one command, against a throwaway MariaDB of its own: a table of
# 300 rows read in chunks of 50 by two processes.
#   initial_only  prints exactly the table's rows (r lines) and a high line, and exits 0; a
#                 rerun of the finished directory reads nothing again and prints the same;
#                 runs that resume after a lost merge, lost deltas or a lost chunk print the
#                 same too, and reread only what was lost;
#   initial       with changes during and after the snapshot (from the --on-phase hooks) and
#                 --until now: the snapshot plus the stream, applied in order, is the table;
#                 the phases come in order with their positions; a rerun only resumes the
#                 stream; with --output the stream goes to the file and stdout stays empty;
#   no_data       prints only the changes made after its start, resumably, and SIGTERM ends it
#                 with exit 0 and its state saved;
# and usage errors exit 2, a failing --on-phase command stops it with its status.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1
sync_bin="$tools_dir/cdc-sync"

root <<'SQL' >/dev/null || exit 1
CREATE DATABASE s;
USE s;
CREATE TABLE s.items (id INT PRIMARY KEY AUTO_INCREMENT, v INT NOT NULL, name VARCHAR(40) NOT NULL) ENGINE=InnoDB;
INSERT INTO s.items (v, name) SELECT seq * 7 % 101, CONCAT('item-', seq) FROM seq_1_to_300;
CREATE TABLE s.other (id INT PRIMARY KEY) ENGINE=InnoDB;
INSERT INTO s.other SELECT seq FROM seq_1_to_10;
ANALYZE TABLE s.items;
SQL

# sync ARGS...: cdc-sync as the cdc user against the throwaway server (a hang fails as 124).
sync() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir timeout -k 5 120 \
    "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"
}
# sync_bg ARGS...: the same, unbounded, exec'd: run it with & and $! is cdc-sync.
sync_bg() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir exec \
    "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"
}
# table_tsv: the table as the server has it, one id/v/name line per row in id order.
table_tsv() { root -N -B -e 'SELECT id, v, name FROM s.items ORDER BY id'; }
# snapshot_tsv FILE: the r lines of s.items in FILE, as table_tsv prints rows.
snapshot_tsv() {
  jq -r 'select(.op == "r" and .db == "s" and .table == "items") | .after | [.id, .v, .name] | @tsv' "$1" |
    sort -n
}
# replay_tsv FILE...: the r lines, then the c/u/d lines of s.items, applied in order (rows
# by id), as table_tsv prints rows.
replay_tsv() {
  cat "$@" | jq -r -s '
    reduce (.[] | select(.db == "s" and .table == "items")) as $l ({};
      if $l.op == "r" or $l.op == "c" then .[$l.after.id | tostring] = $l.after
      elif $l.op == "u" then del(.[$l.before.id | tostring]) | .[$l.after.id | tostring] = $l.after
      elif $l.op == "d" then del(.[$l.before.id | tostring])
      else . end)
    | [.[]] | sort_by(.id) | .[] | [.id, .v, .name] | @tsv'
}
# same_rows NAME WANT_TSV GOT_TSV: same_file, on the row lists.
same_rows() { same_file "$1" "$2" "$3"; }
# same_snapshot NAME WANT GOT: same_file, but for the time of the merge (the high line's ts_ms).
same_snapshot() {
  sed 's/^\({"op":"high".*\)"ts_ms":[0-9]*/\1/' "$2" >"$work/want.cmp"
  sed 's/^\({"op":"high".*\)"ts_ms":[0-9]*/\1/' "$3" >"$work/got.cmp"
  same_file "$1" "$work/want.cmp" "$work/got.cmp"
}

# ---- usage errors ---------------------------------------------------------------------------
expect "no --dir: exit 2" 2 sync --tables s.items
assert "no --dir: one clear line" grep -q -- "give --dir" "$work/err"
expect "--mode nonsense: exit 2" 2 sync --tables s.items --dir "$work/x" --mode everything
expect "an operand: exit 2" 2 sync --tables s.items --dir "$work/x" extra
expect "--until with initial_only: exit 2" 2 sync --tables s.items --dir "$work/x" --mode initial_only --until now
expect "--chunk-size with no_data: exit 2" 2 sync --tables s.items --dir "$work/x" --mode no_data --chunk-size 10
expect "-j past 18 digits (bash would wrap it): exit 2" 2 sync --tables s.items --dir "$work/x" -j 99999999999999999999
assert "-j past 18 digits: says so" grep -q -- "-j: '99999999999999999999' is not a number of processes" "$work/err"
expect "--chunk-size past 18 digits: exit 2" 2 sync --tables s.items --dir "$work/x" --chunk-size 99999999999999999999
expect "-j 09 is nine (not octal), then --chunk-size 0: exit 2" 2 sync --tables s.items --dir "$work/x" -j 09 --chunk-size 0
assert "-j 09: no shell error" test "$(grep -c "value too great for base" "$work/err")" = 0
assert "-j 09: the error is about --chunk-size" grep -q -- "--chunk-size: '0'" "$work/err"
assert "usage errors leave no state directory behind" test ! -e "$work/x"
expect "--help: exit 0" 0 "$sync_bin" --help
assert "--help: usage on stdout" grep -q '^Usage: cdc-sync' "$work/out"
expect "--version: exit 0" 0 env CDC_TOOLS_DIR="$tools_dir" "$sync_bin" --version
assert "--version: names itself" grep -q '^cdc-sync [0-9]\+\.[0-9]\+\.[0-9]\+$' "$work/out"

# ---- initial_only ---------------------------------------------------------------------------
cat >"$work/hook.sh" <<EOF
#!/usr/bin/env bash
echo "\$1 \$2" >>"\$HOOK_LOG"
EOF
chmod +x "$work/hook.sh"
only=$work/only
table_tsv >"$work/table0.tsv"
export HOOK_LOG=$work/only.phases
expect "initial_only: exit 0" 0 sync --tables 's.items' --dir "$only" --mode initial_only --chunk-size 50 -j 2 \
  --on-phase "$work/hook.sh"
cp "$work/out" "$work/only1.ndjson"
cp "$work/err" "$work/only1.err"
snapshot_tsv "$work/only1.ndjson" >"$work/only1.tsv"
same_rows "initial_only: the r lines are exactly the table's rows" "$work/table0.tsv" "$work/only1.tsv"
assert "initial_only: the last line is the high line" jq -e -s '.[-1].op == "high" and (.[-1].position | length > 0)' \
  "$work/only1.ndjson"
assert "initial_only: one high line, the table line and r lines before it" \
  jq -e -s '([.[].op] | unique) == ["high", "r", "table"] and .[0].op == "table" and .[0].table == "items"
    and .[0].pos == {file: .[-1].file, offset: .[-1].offset, gtid: null} and .[0].key == ["id"]
    and ([.[0].columns[] | "\(.name) \(.type) \(.nullable)"] | index("id int(11) false") != null)' \
  "$work/only1.ndjson"
assert "initial_only: only s.items (not s.other)" jq -e -s '[.[] | select(.op == "r") | .table] | unique == ["items"]' \
  "$work/only1.ndjson"
chunks=$(find "$only/chunks" -name '*.ndjson' | wc -l)
assert "initial_only: the table was read in several chunks (got $chunks)" test "$chunks" -ge 5
assert "initial_only: the merged snapshot stays in DIR/snapshot.ndjson" cmp -s "$only/snapshot.ndjson" "$work/only1.ndjson"
high=$(jq -r -s '.[-1].position' "$work/only1.ndjson")
assert "initial_only: phases snapshot_start, snapshot_end (at the high line), and no stream_start" \
  test "$(cut -d' ' -f1 "$work/only.phases" | tr '\n' ' ')" == "snapshot_start snapshot_end "
assert "initial_only: snapshot_end's position is the high line's" \
  test "$(sed -n 's/^snapshot_end //p' "$work/only.phases")" == "$high"
assert "initial_only: each phase also on stderr" grep -q "^cdc-sync: phase snapshot_end position $high\$" \
  "$work/only1.err"
assert "initial_only: no progress line on a pipe" bash -c "! grep -q 'chunks,' '$work/only1.err'"

# A rerun of the finished directory reads nothing again and prints the same.
touch "$work/stamp"
sleep 1.1
rm -f "$work/only.phases"
expect "initial_only rerun: exit 0" 0 sync --tables 's.items' --dir "$only" --mode initial_only --chunk-size 50 -j 2 \
  --on-phase "$work/hook.sh"
same_file "initial_only rerun: the same output" "$work/only1.ndjson" "$work/out"
assert "initial_only rerun: no file in DIR was rewritten but the emitted marker" \
  test -z "$(find "$only" -newer "$work/stamp" -type f ! -name snapshot.emitted ! -name lock)"
read -r span_from _ <"$only/span"
assert "initial_only rerun: snapshot_start now carries the lowest low ($span_from)" \
  test "$(sed -n 's/^snapshot_start //p' "$work/only.phases")" == "$span_from"

# Crash points, made by removing what a crash would not have written: the merge, then the
# deltas' end marker, then one chunk and the span. Each rerun redoes only that and prints the
# same snapshot.
rm -f "$only/snapshot.ndjson"
expect "resume before the merge: exit 0" 0 sync --tables 's.items' --dir "$only" --mode initial_only --chunk-size 50
same_snapshot "resume before the merge: the same snapshot" "$work/only1.ndjson" "$work/out"
rm -f "$only/snapshot.ndjson" "$only/deltas.done"
expect "resume inside the deltas (state kept): exit 0" 0 sync --tables 's.items' --dir "$only" --mode initial_only \
  --chunk-size 50
same_snapshot "resume inside the deltas: the same snapshot" "$work/only1.ndjson" "$work/out"
touch "$work/stamp2"
sleep 1.1
victim=$(find "$only/chunks" -name '*.ndjson' | sort | sed -n 2p)
rm -f "$only/snapshot.ndjson" "$only/deltas.done" "$only/deltas.state" "$only/span" "$victim"
expect "resume with one chunk lost: exit 0" 0 sync --tables 's.items' --dir "$only" --mode initial_only --chunk-size 50
snapshot_tsv "$work/out" >"$work/only2.tsv"
same_rows "resume with one chunk lost: the same rows" "$work/table0.tsv" "$work/only2.tsv"
assert "resume with one chunk lost: that chunk is read again" test -s "$victim"
assert "resume with one chunk lost: only that chunk is read again" \
  test "$(find "$only/chunks" -name '*.ndjson' -newer "$work/stamp2" | tr '\n' ' ')" == "$victim "

expect "another --tables on the same --dir: exit 2" 2 sync --tables 's.*' --dir "$only" --mode initial_only --chunk-size 50
assert "another --tables: says what differs" grep -q "was: tables=s.items" "$work/err"

# ---- initial, with changes during and after the snapshot --------------------------------------
# The snapshot_start hook starts a writer whose changes overlap the chunk reads (updates all
# over the key range, inserts, deletes, and keys moved between chunks; small chunks make the
# reads last longer than one change); the snapshot_end hook
# waits for it and makes a few changes more, which only the stream can carry.
cat >"$work/writer.sql" <<'SQL'
SQL
for k in $(seq 1 60); do
  case $((k % 6)) in
    0) echo "UPDATE s.items SET v = v + 1000 WHERE id % 50 = $((k % 50));" ;;
    1) echo "INSERT INTO s.items (v, name) VALUES ($k, 'during-$k');" ;;
    2) echo "DELETE FROM s.items WHERE id = $((k * 4 + 1));" ;;
    3) echo "UPDATE s.items SET id = id + 10000 WHERE id = $((k * 4 + 2));" ;;
    4) echo "BEGIN; UPDATE s.items SET name = CONCAT(name, '+') WHERE id BETWEEN $((k * 4)) AND $((k * 4 + 30)); INSERT INTO s.items (v, name) VALUES (-$k, 'tx-$k'); COMMIT;" ;;
    5) echo "UPDATE s.items SET v = -v WHERE id = $((300 - k));" ;;
  esac
  echo "DO SLEEP(0.02);"
done >>"$work/writer.sql"
cat >"$work/phase_hook.sh" <<EOF
#!/usr/bin/env bash
echo "\$1 \$2" >>"$work/initial.phases"
case \$1 in
  snapshot_start)
    mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot <"$work/writer.sql" >/dev/null 2>&1 &
    echo \$! >"$work/writer.pid"
    # The chunks are read once the writer is under way.
    for i in \$(seq 100); do
      [[ \$(mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot -N -e "SELECT COUNT(*) FROM s.items WHERE name = 'during-1'") == 1 ]] && break
      sleep 0.05
    done ;;
  snapshot_end)
    while kill -0 "\$(cat "$work/writer.pid")" 2>/dev/null; do sleep 0.05; done
    mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot -e "INSERT INTO s.items (v, name) VALUES (1, 'after-1'); UPDATE s.items SET v = 4242 WHERE id = 10; DELETE FROM s.items WHERE id = 11" ;;
esac
EOF
chmod +x "$work/phase_hook.sh"
init=$work/initial
expect "initial --until now: exit 0" 0 sync --tables 's.items' --dir "$init" --chunk-size 10 -j 2 \
  --on-phase "$work/phase_hook.sh" --until now
cp "$work/out" "$work/initial1.ndjson"
cp "$work/err" "$work/initial1.err"
table_tsv >"$work/table1.tsv"
replay_tsv "$work/initial1.ndjson" >"$work/initial1.tsv"
same_rows "initial: snapshot + stream, applied in order, is the table" "$work/table1.tsv" "$work/initial1.tsv"
assert "initial: the stream carries the changes made after the snapshot" \
  jq -e -s 'any(.[]; .op == "c" and .after.name == "after-1") and any(.[]; .op == "d" and .before.id == 11)' \
  "$work/initial1.ndjson"
assert "initial: stdout is the whole snapshot, then the stream" \
  jq -e -s '(map(.op == "high") | index(true)) as $h | ([.[:$h][].op] | unique) == ["r", "table"] and .[0].op == "table"
    and ([.[$h + 1:][].op] | all(. != "r"))' \
  "$work/initial1.ndjson"
assert "initial: the writer's changes overlapped the snapshot (deltas were read)" test -s "$init/deltas.ndjson"
phases=$(cut -d' ' -f1 "$work/initial.phases" | tr '\n' ' ')
assert "initial: --on-phase got snapshot_start, snapshot_end, stream_start in order (got: $phases)" \
  test "$phases" == "snapshot_start snapshot_end stream_start "
high=$(jq -r -s 'map(select(.op == "high"))[0].position' "$work/initial1.ndjson")
assert "initial: snapshot_end at H*, the high line's position ($high)" \
  test "$(sed -n 's/^snapshot_end //p' "$work/initial.phases")" == "$high"
assert "initial: stream_start at H* too" test "$(sed -n 's/^stream_start //p' "$work/initial.phases")" == "$high"
assert "initial: the stream saved its state in DIR/stream.state" test -s "$init/stream.state"

# Crash points inside the deltas, on copies of that directory as it was before the merge:
# the deltas' state saved but lines written after it (cut back), and lines written but no
# state yet (started over). Each gives the same merged snapshot.
assert "initial: the deltas were read by cdc-stream, with a state" test -s "$init/deltas.state"
for crash in "lines after the state" "no state yet"; do
  copy=$work/copy
  rm -rf "$copy" && mkdir -p "$copy"
  cp -r "$init/settings" "$init/plan.ndjson" "$init/chunks" "$init/span" "$init/deltas.ndjson" "$copy/"
  if [[ $crash == "no state yet" ]]; then
    head -n 3 "$init/deltas.ndjson" >"$copy/deltas.ndjson"
  else
    cp "$init/deltas.state" "$copy/"
    printf '{"op":"c","v":1,"db":"s","table":"items","torn' >>"$copy/deltas.ndjson"
  fi
  expect "crash in the deltas ($crash): the rerun exits 0" 0 sync --tables 's.items' --dir "$copy" \
    --mode initial_only --chunk-size 10
  same_snapshot "crash in the deltas ($crash): the same snapshot" "$init/snapshot.ndjson" "$work/out"
  same_file "crash in the deltas ($crash): the same deltas" "$init/deltas.ndjson" "$copy/deltas.ndjson"
done

# A rerun resumes the stream from its state: no snapshot again, only what came since.
root -e "INSERT INTO s.items (v, name) VALUES (2, 'after-2')" || exit 1
rm -f "$work/initial.phases"
expect "initial rerun: exit 0" 0 sync --tables 's.items' --dir "$init" --chunk-size 10 -j 2 \
  --on-phase "$work/phase_hook.sh" --until now
assert "initial rerun: only the new change, no snapshot again" \
  jq -e -s '[.[] | select(.op != "commit" and .op != "table" and (.op | startswith("span_") | not)) | "\(.op) \(.after.name)"]
    == ["c after-2"]' \
    "$work/out"
assert "initial rerun: only the stream_start phase, at the saved position" \
  test "$(cut -d' ' -f1 "$work/initial.phases" | tr '\n' ' ')" == "stream_start "
cat "$work/initial1.ndjson" "$work/out" >"$work/initial2.ndjson"
table_tsv >"$work/table2.tsv"
replay_tsv "$work/initial2.ndjson" >"$work/initial2.tsv"
same_rows "initial rerun: everything printed, applied in order, is the table" "$work/table2.tsv" "$work/initial2.tsv"

# --output: the stream to the file, the snapshot left in DIR/snapshot.ndjson, stdout empty.
expect "initial --output --progress: exit 0" 0 sync --tables 's.items' --dir "$work/initial_out" --chunk-size 50 \
  --output "$work/stream_out.ndjson" --until now --progress --metrics "$work/sync.prom"
assert "initial --output: nothing on stdout" test ! -s "$work/out"
assert "--progress: a progress line on a pipe too" \
  grep -q -E 'cdc-sync: snapshot [0-9]+/[0-9]+ chunks, [0-9.]+k? rows, [0-9.]+[kM]? rows/s, ETA' "$work/err"
# --metrics: cdc-sync's file (parsed by prometheus_client) at its last step, the stream, and the
# cdc-stream runs' beside it.
sync_metric() { metric_value "$work/sync.prom" "$@"; }
assert "--metrics: the phase is stream, and only that" \
  test "$(sync_metric cdc_sync_phase phase=stream) $(sync_metric cdc_sync_phase phase=snapshot)" == "1 0"
chunks=$(wc -l <"$work/initial_out/plan.ndjson")
assert "--metrics: every chunk of the plan done ($chunks)" \
  test "$(sync_metric cdc_sync_snapshot_chunks_done) $(sync_metric cdc_sync_snapshot_chunks)" == "$chunks $chunks"
rows=$(grep -c '"op":"r"' "$work/initial_out/snapshot.ndjson")
assert "--metrics: the snapshot's rows ($rows)" test "$(sync_metric cdc_sync_snapshot_rows)" == "$rows"
assert "--metrics: the final cdc-stream wrote its own beside it, its transactions the file's commit lines" \
  test "$(metric_value "$work/sync-stream.prom" cdc_stream_transactions_total)" == \
  "$(grep -c '"op":"commit"' "$work/stream_out.ndjson")"
root -e "INSERT INTO s.items (v, name) VALUES (3, 'after-3')" || exit 1
expect "initial --output rerun: exit 0" 0 sync --tables 's.items' --dir "$work/initial_out" --chunk-size 50 \
  --output "$work/stream_out.ndjson" --until now
assert "initial --output: the change is in the file once" \
  test "$(grep -c '"after-3"' "$work/stream_out.ndjson")" == 1
table_tsv >"$work/table3.tsv"
replay_tsv "$work/initial_out/snapshot.ndjson" "$work/stream_out.ndjson" >"$work/initial3.tsv"
same_rows "initial --output: DIR/snapshot.ndjson + the file is the table" "$work/table3.tsv" "$work/initial3.tsv"

# ---- no_data --------------------------------------------------------------------------------
nd=$work/no_data
expect "no_data, first run --until now: exit 0" 0 sync --tables 's.items' --dir "$nd" --mode no_data --until now
# (cdc-stream --until marks where its output starts and ends: span lines, not changes.)
assert "no_data first run: nothing to print (no snapshot)" \
  jq -e -s 'all(.[]; .op | startswith("span_"))' "$work/out"
assert "no_data: the start is pinned in DIR/stream.state" test -s "$nd/stream.state"
root -e "INSERT INTO s.items (v, name) VALUES (4, 'nd-1'); UPDATE s.items SET v = 5 WHERE name = 'nd-1'; INSERT INTO s.other VALUES (99)" || exit 1
expect "no_data rerun: exit 0" 0 sync --tables 's.items' --dir "$nd" --mode no_data --until now
assert "no_data rerun: exactly the changes after the start, of s.items only" \
  jq -e -s '[.[] | select(.op != "commit" and .op != "table" and (.op | startswith("span_") | not))
    | "\(.op) \(.after.name) \(.after.v)"]
    == ["c nd-1 4", "u nd-1 5"]' "$work/out"

# Unbounded, ended by SIGTERM: exit 0, the change streamed, the state saved.
nd2=$work/no_data_bg
sync_bg --tables 's.items' --dir "$nd2" --mode no_data >"$work/bg.ndjson" 2>"$work/bg.err" &
pid=$!
bg_pids+=("$pid")
assert "no_data unbounded: announces stream_start" wait_for_text "$work/bg.err" "phase stream_start position" 20
wait_dump_threads 1
root -e "INSERT INTO s.items (v, name) VALUES (6, 'nd-bg')" || exit 1
assert "no_data unbounded: the change is streamed" wait_for_text "$work/bg.ndjson" '"nd-bg"' 10
kill -TERM "$pid"
wait_exit "$pid" 10
bg_pids=()
assert "no_data: SIGTERM ends it with exit 0 (got $status)" test "$status" == 0
pos=$(gtid_pos)
assert "no_data: SIGTERM leaves the state saved at the last transaction" jq -e --arg p "$pos" '.position == $p' \
  "$nd2/stream.state"
assert "no_data: no cdc-stream left running" wait_dump_threads 0

# ---- --on-phase failing ------------------------------------------------------------------------
expect "a failing --on-phase command: exit with its status" 7 sync --tables 's.items' --dir "$work/hookfail" \
  --mode no_data --until now --on-phase 'sh -c "exit 7"'
assert "a failing --on-phase command: says so" grep -q 'on-phase command failed at phase stream_start' "$work/err"

finish
