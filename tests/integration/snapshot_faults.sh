#!/usr/bin/env bash
# cdc-snapshot and cdc-plan survive lost connections. On a throwaway server of its own (it is
# restarted and shut down here), a 60,000-row table in chunks of 5,000 rows:
#   1. stdout: the reader stalls mid-chunk (the pipe fills), the test KILLs the snapshot's
#      connection, four times; every kill is retried, the cut chunks are followed by discard
#      lines, and with them dropped (and through cdc-merge) the rows are those of a run
#      without faults, row for row;
#   2. --output-dir, chunk lines fed one at a time: the idle connection KILLed between chunks
#      twice, the SELECT KILLed while it waits for a table lock twice, the server restarted
#      between chunks; the chunk files are those of a run without faults, row for row;
#   3. the server down for longer than --retry-for: exit 69 and a message that says so, no
#      chunk file published half;
#   4. under writes: every low watermark is the GTID position the server gives for its binlog
#      point (BINLOG_GTID_POS), though at most the first was asked of it (none, when the point
#      sampled before the first view was still);
#   5. cdc-plan: its query is KILLed while it waits for a table lock; it reconnects, runs the
#      query again and writes the plan of a run without faults;
#   6. the server SIGKILLed as it wrote a transaction's GTID event and not the rest: the next
#      chunk's low, advanced over that file, does not count the dangling GTID (the restarted
#      server gives its number to the next transaction), and cdc-stream writes that next
#      transaction once;
#   7. the connection KILLed while cdc-snapshot waits for the next row: the client library
#      leaves that error on the connection, not on the statement (whose error number is 0);
#      it is a lost connection all the same, and the chunk is read again.
# Beside the reference run, the --progress line's last drawing is checked.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
snapshot="$tools_dir/cdc-snapshot"
plan="$tools_dir/cdc-plan"
merge="$tools_dir/cdc-merge"
throwaway_start "$srv" || exit 1

mapfile -d '' -t server_argv <"/proc/$(cat "$srv/launcher.pid")/cmdline"
server_start() {
  # Without the test's other descriptors: a server holding the FIFO's write end open would
  # keep cdc-snapshot from ever seeing its end.
  (
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      ((fd > 2)) && eval "exec $fd>&-"
    done 2>/dev/null
    exec "${server_argv[@]}"
  ) >>"$srv/stdout.log" 2>&1 &
  echo $! >"$srv/launcher.pid"
  wait_until 60 mariadb-admin --no-defaults --socket="$THROWAWAY_SOCKET" -uroot ping >/dev/null 2>&1
}
server_shutdown() {
  local pid
  pid=$(cat "$srv/launcher.pid")
  mariadb-admin --no-defaults --socket="$THROWAWAY_SOCKET" -uroot shutdown
  wait "$pid" 2>/dev/null
}
tool() { # tool BINARY ARGS...: as the cdc user over TCP
  local binary=$1
  shift
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD "$binary" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"
}
# kill_tool_connections: KILLs every connection of the cdc user but binlog dumps; prints how many.
kill_tool_connections() {
  local id killed=0
  for id in $(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'cdc' AND COMMAND NOT LIKE 'Binlog Dump%'"); do
    root -e "KILL $id" 2>/dev/null && killed=$((killed + 1))
  done
  echo "$killed"
}
# rows_of FILE: the r lines of a snapshot output whose discarded parts are dropped, as a reader
# must: a discard line voids the lines of its chunk since the chunk's low line.
rows_of() {
  awk '/^\{"op":"low"/ { n = 0; open = 1; next }
       /^\{"op":"discard"/ { n = 0; open = 0; next }
       /^\{"op":"high"/ { for (i = 1; i <= n; i++) print held[i]; n = 0; open = 0; next }
       /^\{"op":"r"/ { if (open) held[++n] = $0 }' "$1"
}

# rows_of FILE: the r lines without their ts_ms (the time of the read view, which differs from
# run to run).
strip_ts() { sed 's/,"ts_ms":[0-9]*}$/}/'; }

root -e "CREATE DATABASE t; USE t; CREATE TABLE t.big (id INT PRIMARY KEY, v VARCHAR(200) NOT NULL) ENGINE=InnoDB;
  INSERT INTO t.big SELECT seq, CONCAT(seq, ':', REPEAT(CHAR(97 + seq % 26), 100 + seq % 80)) FROM seq_1_to_60000;
  ANALYZE TABLE t.big" >/dev/null || exit 1
tool "$plan" --tables t.big --chunk-size 5000 >"$work/plan.ndjson" || exit 1
chunks=$(grep -c '"op":"chunk"' "$work/plan.ndjson")
assert "the plan has at least 10 chunks ($chunks)" test "$chunks" -ge 10
tool "$snapshot" "$work/plan.ndjson" >"$work/reference.ndjson" 2>"$work/reference.err" || exit 1
rows_of "$work/reference.ndjson" | strip_ts >"$work/reference.rows"
assert "the reference run has every row" test "$(wc -l <"$work/reference.rows")" -eq 60000
# The progress line (--progress on a stderr that is not a terminal): its last drawing counts
# every chunk and row, out of the plan file's chunks; a plan on a pipe has no known total.
tool "$snapshot" --progress --metrics "$work/progress.prom" "$work/plan.ndjson" >/dev/null 2>"$work/progress.err"
assert "--progress: the last line counts all $chunks chunks of the plan file and their 60,000 rows" \
  grep -q -E "cdc-snapshot: $chunks/$chunks chunks, 60k rows, [0-9.]+[kM]? rows/s, ETA 0:00.\[K\$" "$work/progress.err"
for metric in "cdc_snapshot_chunks_done $chunks" "cdc_snapshot_chunks $chunks" "cdc_snapshot_rows 60000" \
  "cdc_snapshot_reconnects_total 0"; do
  got=$(metric_value "$work/progress.prom" "${metric% *}")
  assert "--metrics: ${metric% *} is ${metric#* } (got $got)" test "$got" == "${metric#* }"
done
cat "$work/plan.ndjson" | tool "$snapshot" --progress >/dev/null 2>"$work/progress_pipe.err"
assert "--progress: a plan on a pipe counts out of ? with no time left" \
  grep -q -E "cdc-snapshot: $chunks/\? chunks, 60k rows, [0-9.]+[kM]? rows/s, ETA -.\[K\$" "$work/progress_pipe.err"
# deltas_for INPUT: the deltas cdc-merge needs for INPUT's span, as cdc-stream writes them.
deltas_for() {
  local from until
  read -r from until < <("$merge" --span "$1") || return 1
  tool "$tools_dir/cdc-stream" --from "$from" --until "$until" --tables 't.*' >"$1.deltas" 2>"$1.deltas.err"
}
deltas_for "$work/reference.ndjson" || exit 1
"$merge" "$work/reference.ndjson" --deltas "$work/reference.ndjson.deltas" | grep '^{"op":"r"' | strip_ts >"$work/reference.merged"

# ---- 1. stdout, connection killed while the reader stalls mid-chunk ----
stalling_reader() {
  local k
  for ((k = 0; k < 4; k++)); do
    head -c 2000000 >>"$work/stdout.ndjson"
    sleep 0.5 # cdc-snapshot fills the pipe and blocks in the middle of a chunk
    echo "killed $(kill_tool_connections)" >>"$work/kills"
  done
  cat >>"$work/stdout.ndjson"
}
: >"$work/stdout.ndjson"
: >"$work/kills"
status=0
tool "$snapshot" "$work/plan.ndjson" 2>"$work/stdout.err" | stalling_reader || status=$?
assert "stdout: exit 0 after four killed connections" test "$status" -eq 0
assert "stdout: four connections were killed ($(echo $(cat "$work/kills")))" test "$(grep -c 'killed 1' "$work/kills")" -eq 4
assert "stdout: a notice per retry" test "$(grep -c 'notice: t.big chunk [0-9]*/[0-9]*: .*; reconnecting in .* s, then reading the chunk again with new watermarks' "$work/stdout.err")" -ge 4
assert "stdout: cut chunks are followed by discard lines" grep -q '^{"op":"discard","v":1,"db":"t","table":"big","index":' "$work/stdout.ndjson"
rows_of "$work/stdout.ndjson" | strip_ts >"$work/stdout.rows"
same_file "stdout: the rows, discarded parts dropped, are those of a run without faults" "$work/reference.rows" "$work/stdout.rows"
assert "stdout: every chunk finished once" test "$(grep -c '^{"op":"high"' "$work/stdout.ndjson")" -eq "$chunks"
merged=0
deltas_for "$work/stdout.ndjson" || merged=$?
"$merge" "$work/stdout.ndjson" --deltas "$work/stdout.ndjson.deltas" 2>"$work/merge.err" >"$work/stdout.merged.all" || merged=$?
assert "stdout: cdc-merge takes the output with its discard lines" test "$merged" -eq 0
grep '^{"op":"r"' "$work/stdout.merged.all" | strip_ts >"$work/stdout.merged"
same_file "stdout: cdc-merge's rows are those of a run without faults" "$work/reference.merged" "$work/stdout.merged"

# ---- 2. --output-dir, chunk lines fed one at a time through a FIFO ----
# Between chunks: the idle connection is KILLed, or the server restarted. In a chunk: its
# SELECT waits for a table lock another session holds, and is KILLed there.
mkdir -p "$work/reference.dir" "$work/dir"
tool "$snapshot" --output-dir "$work/reference.dir" "$work/plan.ndjson" 2>/dev/null || exit 1
mkfifo "$work/feed"
tool "$snapshot" --output-dir "$work/dir" --metrics "$work/dir.prom" "$work/feed" 2>"$work/dir.err" &
pid=$!
bg_pids+=("$pid")
exec {feed}>"$work/feed"
files_are() { [[ $(ls "$1" | grep -c '\.ndjson$') == "$2" ]]; }
waiting_for_lock() { [[ -n $(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'cdc' AND STATE LIKE 'Waiting for table metadata lock%'") ]]; }
kills=0
for ((k = 1; k <= chunks; k++)); do
  kill -0 "$pid" 2>/dev/null || break # it gave up: the asserts below say so
  case $k in
    3 | 6) kills=$((kills + $(kill_tool_connections))) ;; # between chunks
    9)
      echo "restarting the server between chunks"
      server_shutdown
      server_start || exit 1
      ;;
  esac
  if ((k == 4 || k == 7)); then
    root -e "LOCK TABLES t.big WRITE; SELECT SLEEP(3); UNLOCK TABLES" >/dev/null &
    lock_pid=$!
    sleep 0.3
    sed -n "${k}p" "$work/plan.ndjson" >&"$feed"
    assert "--output-dir: chunk $k waits for the table lock" wait_until 10 waiting_for_lock
    kills=$((kills + $(kill_tool_connections)))
    wait "$lock_pid"
  else
    sed -n "${k}p" "$work/plan.ndjson" >&"$feed"
  fi
  wait_until 30 files_are "$work/dir" "$k" || break
done
exec {feed}>&-
wait_exit "$pid" 60
bg_pids=()
assert "--output-dir: exit 0 after four kills and a server restart (exit $status: $(tail -1 "$work/dir.err" | cut -c1-300))" test "$status" = 0
assert "--output-dir: four connections were killed ($kills)" test "$kills" -eq 4
assert "--output-dir: a notice per retry" test "$(grep -c 'reconnecting in' "$work/dir.err")" -ge 5
got=$(metric_value "$work/dir.prom" cdc_snapshot_reconnects_total)
assert "--output-dir --metrics: a reconnect per notice (got $got)" test "$got" == "$(grep -c 'reconnecting in' "$work/dir.err")"
got=$(metric_value "$work/dir.prom" cdc_snapshot_rows)
assert "--output-dir --metrics: every row once, the chunks read again counted once (got $got)" test "$got" == 60000
got=$(metric_value "$work/dir.prom" cdc_snapshot_chunks)
assert "--output-dir --metrics: chunk lines from a FIFO: no total (got $got)" test "$got" == absent
for file in "$work/reference.dir"/*.ndjson; do
  rows_of "$file" | strip_ts >"$work/want.rows"
  rows_of "$work/dir/${file##*/}" 2>/dev/null | strip_ts >"$work/got.rows"
  same_file "--output-dir: ${file##*/} holds the rows of a run without faults" "$work/want.rows" "$work/got.rows"
done
assert "--output-dir: no partial file is left" test -z "$(ls "$work/dir" | grep -v '\.ndjson$')"

# ---- 3. the server down longer than --retry-for, between two chunks ----
mkdir -p "$work/down"
rm -f "$work/feed" && mkfifo "$work/feed"
tool "$snapshot" --output-dir "$work/down" --retry-for 2 "$work/feed" 2>"$work/down.err" &
pid=$!
bg_pids+=("$pid")
exec {feed}>"$work/feed"
sed -n 1p "$work/plan.ndjson" >&"$feed"
wait_until 30 files_are "$work/down" 1
server_shutdown
sed -n 2p "$work/plan.ndjson" >&"$feed"
exec {feed}>&-
wait_exit "$pid" 60
bg_pids=()
assert "server down: exit 69" test "$status" = 69
assert "server down: the error says it gave up after --retry-for ($(tail -1 "$work/down.err" | cut -c1-300))" \
  grep -q 'cdc-snapshot: error: .*feed:2: t.big chunk 1/[0-9]*: gave up reconnecting after 2 s (--retry-for): cannot connect to 127.0.0.1' "$work/down.err"
assert "server down: it tried more than once" test "$(grep -c 'reconnecting in' "$work/down.err")" -ge 2
assert "server down: only the chunk read before is published" test "$(ls "$work/down" | grep '\.ndjson$')" = "t.big.0.ndjson"
server_start || exit 1

# ---- 4. the low watermarks under writes: each chunk's GTID position is the one the server
# gives for its binlog point (BINLOG_GTID_POS), though cdc-snapshot asked it at most for the
# first chunk (not when its sample of the binlog's end before the first view found no commit
# in between) and advanced it over the binlog for the others. A read view per chunk
# (--share-view 0), so that every chunk has a low of its own to check ----
root -e "CREATE TABLE t.w (id INT AUTO_INCREMENT PRIMARY KEY, v INT) ENGINE=InnoDB" || exit 1
( for ((k = 0; k < 400; k++)); do echo "INSERT INTO t.w (v) VALUES ($k); DO SLEEP(0.005);"; done | root ) &
writer_pid=$!
bg_pids+=("$writer_pid")
root -e "SET GLOBAL log_output = 'TABLE'; TRUNCATE TABLE mysql.general_log; SET GLOBAL general_log = ON" || exit 1
tool "$snapshot" --share-view 0 "$work/plan.ndjson" >"$work/written.ndjson" 2>"$work/written.err"
assert "writes: the snapshot under writes exits 0" test $? -eq 0
root -e "SET GLOBAL general_log = OFF"
wait "$writer_pid"
bg_pids=()
# The server's cost per chunk must not grow with the binlog: BINLOG_GTID_POS, which reads
# the binlog file from its start, is asked at most once per process, not once per chunk.
asked=$(root -N -e "SELECT COUNT(*) FROM mysql.general_log WHERE user_host LIKE 'cdc[cdc]%' AND argument LIKE 'SELECT BINLOG_GTID_POS%'")
assert "writes: BINLOG_GTID_POS was asked at most once, not per chunk ($asked times)" test "$asked" -le 1
grep '^{"op":"low"' "$work/written.ndjson" |
  sed -n 's/.*"position":"\([^"]*\)","file":"\([^"]*\)","offset":\([0-9]*\).*/\1 \2 \3/p' >"$work/lows"
assert "writes: a low line per chunk" test "$(wc -l <"$work/lows")" -eq "$chunks"
assert "writes: the lows moved (there were writes between the chunks)" test "$(cut -d' ' -f1 "$work/lows" | sort -u | wc -l)" -ge 3
exact=0
while read -r position file offset; do
  server=$(root -N -e "SELECT BINLOG_GTID_POS('$file', $offset)")
  if [[ $server == "$position" ]]; then exact=$((exact + 1)); else echo "  $file:$offset: cdc-snapshot wrote $position, the server says $server"; fi
done <"$work/lows"
assert "writes: every low position is the server's GTID position of its binlog point" test "$exact" -eq "$chunks"

# ---- 5. cdc-plan: a killed query is run again ----
tool "$plan" --tables t.big --chunk-size 5000 >"$work/plan.now" || exit 1
root -e "LOCK TABLES t.big WRITE; SELECT SLEEP(4); UNLOCK TABLES" >/dev/null &
lock_pid=$!
sleep 0.5
tool "$plan" --tables t.big --chunk-size 5000 >"$work/plan.again" 2>"$work/plan.err" &
pid=$!
bg_pids+=("$pid" "$lock_pid")
assert "cdc-plan: its query waits for the table lock" wait_until 10 waiting_for_lock
kill_tool_connections >/dev/null
wait_exit "$pid" 60
wait "$lock_pid" 2>/dev/null
bg_pids=()
assert "cdc-plan: exit 0 after its connection was killed" test "$status" = 0
assert "cdc-plan: a notice says it reconnects and runs the query again" \
  grep -q 'cdc-plan: notice: .*; reconnecting in 0.5 s, then running the query again' "$work/plan.err"
same_file "cdc-plan: the plan is that of a run without faults" "$work/plan.now" "$work/plan.again"

# ---- 6. the server killed while writing a transaction to its binlog ----
# It leaves the transaction's GTID event at the end of the file without the rest (made here by
# appending one after the kill): the restarted server does not count that GTID and gives its
# number to the next transaction. A low watermark advanced over that file must not count it
# either (it would claim a transaction the chunk does not hold, and cdc-merge would skip it),
# and cdc-stream must write the transaction that comes with that number, once.
mkdir -p "$work/crash"
rm -f "$work/feed" && mkfifo "$work/feed"
tool "$snapshot" --output-dir "$work/crash" "$work/feed" 2>"$work/crash.err" &
pid=$!
bg_pids+=("$pid")
exec {feed}>"$work/feed"
sed -n 1p "$work/plan.ndjson" >&"$feed"
wait_until 30 files_are "$work/crash" 1
read -r crash_file crash_offset _ < <(root -N -e "SHOW MASTER STATUS")
crash_before=$(root -N -e "SELECT @@global.gtid_binlog_pos")
server_pid=$(cat "$srv/launcher.pid")
kill -KILL "$server_pid"
wait "$server_pid" 2>/dev/null
dangling=$(python3 "$source_dir/tests/tools/append_dangling_gtid.py" "$srv/data/$crash_file") || exit 1
echo "killed the server; appended the GTID event $dangling to $crash_file without its transaction"
server_start || exit 1
assert "crash: the restarted server does not count the dangling $dangling" \
  test "$(root -N -e "SELECT @@global.gtid_binlog_pos")" == "$crash_before"
sed -n 2p "$work/plan.ndjson" >&"$feed"
wait_until 60 files_are "$work/crash" 2
exec {feed}>&-
wait_exit "$pid" 60
bg_pids=()
assert "crash: the snapshot goes on after the restart (exit $status: $(tail -1 "$work/crash.err" | cut -c1-300))" test "$status" = 0
read -r position file offset < <(head -n 1 "$work/crash/t.big.1.ndjson" |
  sed -n 's/.*"position":"\([^"]*\)","file":"\([^"]*\)","offset":\([0-9]*\).*/\1 \2 \3/p')
server=$(root -N -e "SELECT BINLOG_GTID_POS('${file:-none}', ${offset:-0})")
assert "crash: the next chunk's low ($position at $file:$offset) is the server's position there ($server), without $dangling" \
  test -n "$position" -a "$position" == "$server"
root -e "INSERT INTO t.w (v) VALUES (-1)" || exit 1
after=$(root -N -e "SELECT @@global.gtid_binlog_pos")
assert "crash: the next transaction is given the dangling number ($after)" test "$after" == "$dangling"
for from in "$crash_file:$crash_offset" "$crash_before"; do
  tool "$tools_dir/cdc-stream" --from "$from" --until "$after" --tables 't.*' >"$work/crash.stream" 2>"$work/crash.stream.err"
  assert "crash: cdc-stream from $from over the dangling GTID exits 0 ($(tail -1 "$work/crash.stream.err"))" test $? -eq 0
  assert "crash: from $from, the transaction numbered $after is written once, with its row" \
    test "$(grep -c '"op":"c".*"v":-1' "$work/crash.stream")/$(grep -c '"op":"commit"' "$work/crash.stream")" == 1/1
done

# ---- 7. the connection KILLed while the rows come ----
# A view that sleeps a tenth of a second before each of its 20 rows, rows of 40 kB (each sent
# as it comes, and flushed to stdout two at a time): cdc-snapshot waits in the fetch of the
# next row when the KILL comes. The client library then has the error on the connection and
# none on the statement (the run once ended with exit 1: "reading the rows of ... failed:  [0]").
root -e "USE t; CREATE TABLE t.wide (id INT PRIMARY KEY, v LONGTEXT NOT NULL) ENGINE=InnoDB;
  INSERT INTO t.wide SELECT seq, REPEAT(CHAR(96 + seq), 40000) FROM seq_1_to_20;
  CREATE VIEW t.slow AS SELECT id, IF(SLEEP(0.1) = 0, v, v) AS v FROM t.wide;
  GRANT SHOW VIEW ON t.* TO 'cdc'@'127.0.0.1'" || exit 1
echo '{"op":"chunk","v":1,"db":"t","table":"slow","key":[],"key_types":[],"start":null,"end":null,"index":0,"count":1,"columns":[{"name":"id","type":"int(11)","collation_id":0},{"name":"v","type":"longtext","collation_id":45}],"identity":null}' >"$work/slow.chunk"
tool "$snapshot" "$work/slow.chunk" >"$work/slow.ndjson" 2>"$work/slow.err" &
pid=$!
bg_pids+=("$pid")
fetching() { grep -q '^{"op":"r"' "$work/slow.ndjson"; }
assert "fetch: rows are out before the KILL" wait_until 10 fetching
killed=$(kill_tool_connections)
wait_exit "$pid" 30
bg_pids=()
assert "fetch: exit 0 after the connection was KILLed while the rows came (exit $status: $(tail -1 "$work/slow.err" | cut -c1-300))" \
  test "$status" = 0
assert "fetch: one connection was killed ($killed)" test "$killed" = 1
assert "fetch: the notice names the fetch of the rows, and the chunk is read again" \
  grep -q "notice: t.slow chunk 0/1: .*: reading the rows of 'SELECT .*' failed: .*; reconnecting in .* s, then reading the chunk again" "$work/slow.err"
assert "fetch: what was written of the chunk is voided by a discard line" grep -q '^{"op":"discard"' "$work/slow.ndjson"
assert "fetch: the rows, discarded parts dropped, are the view's 20" test "$(rows_of "$work/slow.ndjson" | wc -l)" -eq 20

finish
