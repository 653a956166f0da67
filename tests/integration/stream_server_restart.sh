#!/usr/bin/env bash
# cdc-stream live mode survives server restarts: while a writer commits, the throwaway server
# is shut down cleanly and restarted on the same datadir and port, then killed with SIGKILL
# and restarted again. The stream must reconnect by itself and, in the end, have written
# exactly what `cdc-stream --file` decodes from the binlogs over the same range: nothing lost,
# nothing twice.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

# The server's own command line, to start it again exactly as throwaway_start did.
mapfile -d '' -t server_argv <"/proc/$(cat "$srv/launcher.pid")/cmdline"
server_pid() { cat "$srv/launcher.pid"; }
server_start() {
  "${server_argv[@]}" >>"$srv/stdout.log" 2>&1 &
  echo $! >"$srv/launcher.pid"
  local i
  for ((i = 0; i < 600; i++)); do
    mariadb-admin --no-defaults --socket="$THROWAWAY_SOCKET" -uroot ping >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the server did not start again: $(tail -5 "$srv/error.log")"
  return 1
}
server_shutdown() {
  local pid
  pid=$(server_pid)
  mariadb-admin --no-defaults --socket="$THROWAWAY_SOCKET" -uroot shutdown
  wait "$pid" 2>/dev/null
}
server_crash() {
  local pid
  pid=$(server_pid)
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
}

root -e 'CREATE DATABASE t; CREATE TABLE t.w (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 0, v VARCHAR(100)) ENGINE=InnoDB' || exit 1
from=$(gtid_pos)
read -r from_file from_offset < <(root -N -e 'SHOW MASTER STATUS' | awk '{print $1, $2}')

live_bg --from "$from" >"$work/live.ndjson" 2>"$work/live.err" &
pid=$!
bg_pids+=("$pid")

# The writer: 500 small transactions, each retried until the server takes it (a transaction
# whose commit the client did not see acknowledged may be there already: INSERT IGNORE).
writer() {
  local i tries
  for ((i = 1; i <= 500; i++)); do
    for ((tries = 0; tries < 300; tries++)); do
      root -e "BEGIN; INSERT IGNORE INTO t.w (id, v) VALUES ($i, REPEAT('v', $i % 90)); UPDATE t.w SET n = n + 1 WHERE id = $((i / 2 + 1)); COMMIT" \
        2>/dev/null && break
      sleep 0.1
    done
  done
}
writer &
writer_pid=$!
bg_pids+=("$writer_pid")

sleep 2
echo "shutting the server down cleanly"
server_shutdown
sleep 2
server_start || exit 1
assert "the stream survived a clean server shutdown" kill -0 "$pid"
sleep 2
echo "killing the server with SIGKILL"
server_crash
sleep 1
server_start || exit 1
assert "the stream survived a server crash" kill -0 "$pid"
wait "$writer_pid"
until_pos=$(gtid_pos)
echo "range: $from ($from_file:$from_offset) .. $until_pos"

assert "the stream reached the end ($until_pos) after the restarts" \
  wait_for_text "$work/live.ndjson" "\"position\":\"$until_pos\"" 45
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
bg_pids=()
assert "SIGTERM exits 0 (got $status)" test "$status" == 0
echo "  stream stderr: $(head -c 800 "$work/live.err")"

mapfile -t files < <(root -N -e 'SHOW BINARY LOGS' | awk -v d="$srv/data" -v f="$from_file" '$1 >= f {print d "/" $1}')
"$stream" --file "${files[@]}" --start-position "$from_offset" >"$work/want.ndjson" 2>"$work/want.err" || {
  echo "FAIL decoding the binlogs with --file: $(head -c 600 "$work/want.err")"
  exit 1
}
assert "the restarts rotated the binlog (3 or more files)" test "${#files[@]}" -ge 3
assert "the writer's 500 transactions are in the binlog" test "$(grep -c '"op":"commit"' "$work/want.ndjson")" -ge 500
table_lines_checked "the live stream across two server restarts" "$work/live.ndjson"
same_changes "the live stream across two server restarts equals --file decoding" "$work/want.ndjson" "$work/live.ndjson"
assert "no transaction twice" bash -c "grep '\"op\":\"commit\"' '$work/live.ndjson' | sort | uniq -d | grep -q . && exit 1 || exit 0"

finish
