#!/usr/bin/env bash
# cdc-stream --archive DIR mirrors the server's binlog files byte for byte, alone and next to a
# stream's change lines. A writer commits
# transactions of 1 to 5,000 rows (and one of a 3 MB row, an event larger than the archive's
# write chunk) while FLUSH BINARY LOGS rotates the binlog every 0.6 s; the archiver runs in the
# background and is killed with SIGKILL at random moments and restarted, and the server kills
# its Binlog Dump thread now and then. Then, after a SIGTERM stop:
#   - every archived complete file equals the server's file byte for byte (cmp), and the file
#     in progress equals the server's current file;
#   - no file is missing, none is left twice, and DIR/* lists the complete files only;
#   - cdc-stream --file and mariadb-binlog read the archive without error, and --file on it
#     writes what --file on the server's own files writes;
#   - a stream with --archive, --output and --state, killed with SIGKILL as well, leaves an
#     archive equal to the server's files and an output with every transaction once;
#   - a second archiver on the same DIR is refused (exit 2) while one runs;
#   - --archive-keep deletes the oldest complete files by age (their time is their last
#     event's) and by size, never the file in progress, and refuses malformed values (exit 2).
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

{
  writer_table_sql
  echo 'CREATE TABLE t.big (id INT PRIMARY KEY, body LONGTEXT) ENGINE=InnoDB;'
} | root || exit 1
archive=$work/archive

seed=${STREAM_ARCHIVE_SEED:-$((RANDOM * 32768 + RANDOM))}
echo "random seed $seed (STREAM_ARCHIVE_SEED=$seed reproduces the writer and the fault times)"
RANDOM=$seed
{
  writer_sql 1 120 0.03
  echo "INSERT INTO t.big VALUES (1, REPEAT('z', 3000000));"
  writer_sql 121 200 0.03
} >"$work/writer.sql"
root <"$work/writer.sql" >"$work/writer.log" 2>&1 &
writer=$!
bg_pids+=("$writer")
(while kill -0 "$writer" 2>/dev/null; do
  root -e 'FLUSH BINARY LOGS' 2>>"$work/rotator.log"
  sleep 0.6
done) &
rotator=$!
bg_pids+=("$rotator")

runs=0
start_archiver() {
  runs=$((runs + 1))
  live_bg --archive "$archive" --from earliest 2>>"$work/archiver.err" &
  archiver=$!
  bg_pids+=("$archiver")
}
# Beside it, a stream with --archive next to its change lines (one connection for both), with
# --state and --output, killed and restarted too.
both_runs=0
start_both() {
  both_runs=$((both_runs + 1))
  live_bg --archive "$work/both" --output "$work/both.ndjson" --state "$work/both.state" --from earliest \
    2>>"$work/both.err" &
  both=$!
  bg_pids+=("$both")
}
start_archiver
start_both
sleep 1
expect "a second archiver on the same directory is refused (exit 2)" 2 live --archive "$archive" --from earliest
assert "its message says the directory is in use" grep -q "in use by another cdc-stream --archive" "$work/err"

kills=0 dump_kills=0 round=0
while kill -0 "$writer" 2>/dev/null; do
  sleep "0.$((3 + RANDOM % 5))"
  round=$((round + 1))
  if ((round % 4 == 2)); then
    id=$(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' ORDER BY RAND() LIMIT 1")
    [[ -n $id ]] && root -e "KILL $id" 2>/dev/null && dump_kills=$((dump_kills + 1))
  elif ((round % 4 == 3)) && kill -0 "$both" 2>/dev/null; then
    kill -9 "$both"
    wait "$both" 2>/dev/null
    start_both
  elif kill -0 "$archiver" 2>/dev/null; then
    kill -9 "$archiver"
    wait "$archiver" 2>/dev/null
    kills=$((kills + 1))
    start_archiver
  else
    fail "the archiver ended by itself: $(tail -c 400 "$work/archiver.err")"
    break
  fi
done
wait "$writer"
wait "$rotator"
assert "the writer committed everything" test ! -s "$work/writer.log"
echo "killed the archiver $kills times (SIGKILL), the stream with --archive $((both_runs - 1)) times, a dump thread $dump_kills times; $(root -N -e 'SHOW BINARY LOGS' | wc -l) binlog files"
assert "the archiver was killed at least 3 times" test "$kills" -ge 3
root -e 'INSERT INTO t.r (batch, n, pad) VALUES (9999, 1, "last")' || exit 1
current=$(root -N -e 'SHOW MASTER STATUS' | cut -f1)
current_size=$(root -N -e 'SHOW MASTER STATUS' | cut -f2)
caught_up() { [[ $(stat -c %s "$archive/.$current.partial" 2>/dev/null) == "$current_size" ]]; }
assert "the archive catches up with the server's end ($current:$current_size), idle" wait_until 20 caught_up
# A kill -9 inside a write of the file in progress, made sure of: its last 7 bytes gone.
kill -9 "$archiver"
wait "$archiver" 2>/dev/null
truncate -s -7 "$archive/.$current.partial"
start_archiver
assert "a restart cuts the torn event back" wait_until 10 grep -q "$current.partial: cut back from $((current_size - 7))" "$work/archiver.err"
assert "and catches up again" wait_until 20 caught_up
kill -TERM "$archiver"
wait_exit "$archiver" 10
assert "SIGTERM stops the archiver with exit 0" test "$status" == 0
grep -c "cut back" "$work/archiver.err" | sed 's/^/restarts that cut a torn file back: /'
assert "the dump thread kills were reconnected from" bash -c "(($dump_kills == 0)) || grep -q reconnecting '$work/archiver.err' '$work/both.err'"
assert "no error in any run but the kills" bash -c "! grep -v -e 'notice:' '$work/archiver.err' | grep -q ."

# Byte for byte: every file of the server, in the archive, complete but the current one.
mapfile -t server_files < <(root -N -e 'SHOW BINARY LOGS' | cut -f1)
compare_archive() {
  local dir=$1 name
  differ=0 missing=0
  for name in "${server_files[@]}"; do
    if [[ $name == "$current" ]]; then
      cmp -s "$srv/data/$name" "$dir/.$name.partial" || { differ=$((differ + 1)); echo "  differs: .$name.partial"; }
    elif [[ -f $dir/$name ]]; then
      cmp "$srv/data/$name" "$dir/$name" || differ=$((differ + 1))
    else
      missing=$((missing + 1))
      echo "  missing: $name"
    fi
  done
}
compare_archive "$archive"
assert "every archived file equals the server's, byte for byte (${#server_files[@]} files)" test "$differ" == 0
assert "no server file is missing from the archive" test "$missing" == 0
# The stream with --archive: its archive is the server's files too, and its output holds every
# transaction once, as --file decoding of the server's files has them.
both_caught_up() { grep -q '"batch":9999' "$work/both.ndjson" && [[ $(stat -c %s "$work/both/.$current.partial" 2>/dev/null) == "$current_size" ]]; }
assert "the stream with --archive catches up" wait_until 20 both_caught_up
kill -TERM "$both"
wait_exit "$both" 10
assert "SIGTERM stops it with exit 0" test "$status" == 0
compare_archive "$work/both"
assert "the stream's archive equals the server's files too (differ $differ, missing $missing)" \
  test "$differ$missing" == 00
"$stream" --file "${server_files[@]/#/$srv/data/}" >"$work/all.ndjson" 2>/dev/null
same_changes "the stream's output holds every transaction once" "$work/all.ndjson" "$work/both.ndjson"
assert "no error in the stream's runs" bash -c "! grep -v -e 'notice:' '$work/both.err' | grep -q ."
mapfile -t visible < <(cd "$archive" && ls)
assert "DIR/* lists the complete files only (${#visible[@]})" test "${#visible[@]}" == "$((${#server_files[@]} - 1))"
assert "one file in progress, no other hidden file but .lock" \
  test "$(cd "$archive" && ls -A | grep '^\.' | sort | tr '\n' ' ')" == ".$current.partial .lock "

# Readers of the archive.
bad=0
for f in "$archive"/*; do mariadb-binlog "$f" >/dev/null 2>"$work/mariadb-binlog.err" || bad=$((bad + 1)); done
assert "mariadb-binlog reads every complete file without error" test "$bad" == 0
expect "cdc-stream --file reads the archive's complete files" 0 "$stream" --file "$archive"/*
mv "$work/out" "$work/archive.ndjson"
server_complete=()
for name in "${server_files[@]}"; do [[ $name == "$current" ]] || server_complete+=("$srv/data/$name"); done
"$stream" --file "${server_complete[@]}" >"$work/server.ndjson" 2>/dev/null
same_file "--file on the archive writes what --file on the server's files writes" "$work/server.ndjson" "$work/archive.ndjson"
assert "the big transaction's row is in it" grep -q '"table":"big"' "$work/archive.ndjson"

# Retention. By age: the two oldest files look ten days old (a file's time is its last
# event's); the next run deletes them at start.
expect "a malformed --archive-keep is a usage error (exit 2)" 2 live --archive "$archive" --archive-keep 7
assert "its message names the accepted forms" grep -q "give an age" "$work/err"
mapfile -t complete < <(cd "$archive" && ls)
touch -d '10 days ago' "$archive/${complete[0]}" "$archive/${complete[1]}"
live_bg --archive "$archive" --archive-keep 7d 2>"$work/keep.err" &
keeper=$!
bg_pids+=("$keeper")
assert "--archive-keep 7d deletes the two files older than 7 days" wait_until 10 \
  bash -c "[[ ! -e '$archive/${complete[0]}' && ! -e '$archive/${complete[1]}' ]]"
assert "and keeps the next one" test -e "$archive/${complete[2]}"
assert "and says so" grep -q "deleted ${complete[1]} (--archive-keep 1w)" "$work/keep.err"
kill -TERM "$keeper"
wait_exit "$keeper" 10
# By size: a limit the archive fits in at start, by less than a KiB; the next rotation
# completes a file 20 kB larger, and the oldest files go until the archive fits again.
total_b=$(cat "$archive"/* "$archive/.$current.partial" | wc -c)
limit_k=$((total_b / 1024 + 1))
live_bg --archive "$archive" --archive-keep "${limit_k}K" 2>"$work/keep.err" &
keeper=$!
bg_pids+=("$keeper")
sleep 1
assert "--archive-keep ${limit_k}K deletes nothing while the archive fits" test "$(grep -c deleted "$work/keep.err")" == 0
root -e 'INSERT INTO t.r (batch, n, pad) SELECT 10000, seq, REPEAT("s", 190) FROM t.seq_1_to_100; FLUSH BINARY LOGS' || exit 1
new_current=$(root -N -e 'SHOW MASTER STATUS' | cut -f1)
assert "the rotation reaches the archive" wait_until 10 test -e "$archive/$current"
kill -TERM "$keeper"
wait_exit "$keeper" 10
assert "a completed file over the limit deletes the oldest" grep -q "deleted ${complete[2]} (--archive-keep ${limit_k}K)" "$work/keep.err"
size_b=$(cat "$archive"/* | wc -c)
assert "--archive-keep ${limit_k}K: the complete files fit ($size_b bytes)" test "$size_b" -le "$((limit_k * 1024))"
assert "the file in progress is kept" test -e "$archive/.$new_current.partial"
mapfile -t left < <(cd "$archive" && ls)
assert "the newest complete file is kept (${left[-1]:-none})" test "${left[-1]:-}" == "$current"
first_left=${left[0]}
contiguous=1
for name in "${server_files[@]}" "$new_current"; do
  [[ $name < $first_left ]] && continue
  [[ -e $archive/$name || -e $archive/.$name.partial ]] || contiguous=0
done
assert "what is left is an unbroken run of files from $first_left" test "$contiguous" == 1
for name in "${left[@]}"; do cmp -s "$srv/data/$name" "$archive/$name" || differ=$((differ + 1)); done
assert "and still equal to the server's" test "$differ" == 0
finish
