#!/usr/bin/env bash
# cdc-stream --archive-source DIR: a live run whose position the server has purged reads it from
# a binlog archive, then goes on from the server. An archiver runs beside a writer that rotates
# the binlog; a stream with --state and --output is stopped half-way, the writer goes on, the
# archive's file in progress is cut inside a transaction (its archiver stopped), and the server
# purges every file but its current one. Then:
#   - the stream resumed without the archive exits 5, and with --archive-source DIR it reads the
#     archive from its state, drops the transaction the archive's end cuts off, and goes on from
#     the server while the writer commits more;
#   - its output holds every transaction exactly once: what --file decoding of the archive's
#     files (every file the server ever had, after the archiver catches up again) writes.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

writer_table_sql | root || exit 1
archive=$work/archive
seed=${STREAM_ARCHIVE_SOURCE_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "random seed $seed (STREAM_ARCHIVE_SOURCE_SEED=$seed reproduces the writer)"
RANDOM=$seed

# write FIRST LAST: the writer's transactions FIRST..LAST, a FLUSH BINARY LOGS after every 20th.
write() {
  writer_sql "$1" "$2" 0.01 | awk '{print} /^DO SLEEP/ && ++n % 20 == 0 {print "FLUSH BINARY LOGS;"}' | root
}
start_archiver() {
  live_bg --archive "$archive" --from earliest 2>>"$work/archiver.err" &
  archiver=$!
  bg_pids+=("$archiver")
}
start_archiver
live_bg --from earliest --state "$work/state" --output "$work/out.ndjson" 2>>"$work/stream.err" &
stream_pid=$!
bg_pids+=("$stream_pid")
write 1 80 || exit 1
assert "the stream reads the first part" wait_until 20 grep -q '"batch":80' "$work/out.ndjson"
kill -TERM "$stream_pid"
wait_exit "$stream_pid" 10
assert "the stream stops (exit 0)" test "$status" == 0
stopped_at=$(jq -r .position "$work/state")

# While the stream is stopped: more transactions, the last of 3,000 rows (many events).
write 81 160 || exit 1
root -e "INSERT INTO t.r (batch, n, pad) SELECT 161, seq, REPEAT('y', 150) FROM t.seq_1_to_3000" || exit 1
current=$(root -N -e 'SHOW MASTER STATUS' | cut -f1)
current_size=$(root -N -e 'SHOW MASTER STATUS' | cut -f2)
caught_up() { [[ $(stat -c %s "$archive/.$current.partial" 2>/dev/null) == "$current_size" ]]; }
assert "the archiver catches up ($current:$current_size)" wait_until 20 caught_up
kill -TERM "$archiver"
wait_exit "$archiver" 10
# The archive's end inside the last transaction: cut at the event boundary after its third
# event (its GTID, TABLE_MAP and first rows event), as an archiver stopped there leaves it.
inside=$(mariadb-binlog "$archive/.$current.partial" 2>/dev/null | awk '/^# at /{print $3}' | tail -n 4 | head -n 1)
echo "the archive's $current cut at $inside (of $current_size)"
truncate -s "$inside" "$archive/.$current.partial"

root -e "PURGE BINARY LOGS TO '$current'" || exit 1
assert "the server has only $current left" test "$(root -N -e 'SHOW BINARY LOGS' | cut -f1)" == "$current"
expect "without the archive the stream exits 5 (purged)" 5 live --state "$work/state" --output "$work/out.ndjson"
assert "the state is still $stopped_at" test "$(jq -r .position "$work/state")" == "$stopped_at"

live_bg --state "$work/state" --output "$work/out.ndjson" --archive-source "$archive" 2>>"$work/stream.err" &
stream_pid=$!
bg_pids+=("$stream_pid")
write 162 200 || exit 1
assert "the stream reads to the writer's last transaction" wait_until 20 grep -q '"batch":200' "$work/out.ndjson"
kill -TERM "$stream_pid"
wait_exit "$stream_pid" 10
assert "the stream stops (exit 0)" test "$status" == 0
assert "it read the archive from $stopped_at" grep -q "the server no longer has the binlog for $stopped_at; reading it from the archive" "$work/stream.err"
assert "and went on from the server" grep -q "going on from the server at" "$work/stream.err"
assert "no error or warning" bash -c "! grep -v -e 'notice:' '$work/stream.err' | grep -q ."

# The archiver again: it takes its cut file up at its end and catches up with the server.
current=$(root -N -e 'SHOW MASTER STATUS' | cut -f1)
current_size=$(root -N -e 'SHOW MASTER STATUS' | cut -f2)
start_archiver
assert "the archiver catches up again" wait_until 20 caught_up
kill -TERM "$archiver"
wait_exit "$archiver" 10
# The file in progress under its server name, as positions name it.
ln -s "$archive/.$current.partial" "$work/$current"
files=("$archive"/* "$work/$current")
echo "the archive: ${#files[@]} files; the server: $(root -N -e 'SHOW BINARY LOGS' | wc -l)"
"$stream" --file "${files[@]}" >"$work/all.ndjson" 2>"$work/file.err"
assert "--file reads the whole archive" test ! -s "$work/file.err"
same_changes "the stream's output holds every transaction once: what --file on the archive writes" \
  "$work/all.ndjson" "$work/out.ndjson"
assert "no transaction twice" bash -c "[[ -z \$(commit_gtids() { grep '\"op\":\"commit\"' \"\$1\" | jq -r .gtid; }; commit_gtids '$work/out.ndjson' | sort | uniq -d) ]]"
assert "the 3,000-row transaction cut by the archive's end is there once, whole" \
  test "$(grep -c '"batch":161' "$work/out.ndjson")" == 3000
finish
