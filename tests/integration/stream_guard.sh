#!/usr/bin/env bash
# cdc-stream live mode's guards and connection failures, on a throwaway MariaDB of its own:
# --require-read-only streams from a read-only server and exits 4, state saved, within a few
# seconds of read_only turning OFF (and at once when it is OFF); two concurrent streams with
# the default server ids both see every change; a wrong password exits 69 with a clear
# message; binlog_format=STATEMENT exits 78 naming the setting.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

root -e 'CREATE DATABASE t; CREATE TABLE t.g (id INT PRIMARY KEY) ENGINE=InnoDB' || exit 1

# --require-read-only.
root -e 'SET GLOBAL read_only = ON' || exit 1
live_bg --require-read-only --from now --state "$work/ro.state" >"$work/ro.ndjson" 2>"$work/ro.err" &
pid=$!
bg_pids+=("$pid")
assert "read_only=ON: the stream connects" wait_dump_threads 1
root -e 'INSERT INTO t.g VALUES (1)' || exit 1   # root may write: READ_ONLY ADMIN
pos1=$(gtid_pos)
assert "read_only=ON: the change is streamed" wait_for_text "$work/ro.ndjson" "\"position\":\"$pos1\"" 10
sleep 1
assert "read_only=ON: the stream keeps running" kill -0 "$pid"
root -e 'SET GLOBAL read_only = OFF' || exit 1
flipped=$SECONDS
wait_exit "$pid" 20
bg_pids=()
echo "  it ended $((SECONDS - flipped)) s after read_only turned OFF"
assert "read_only turned OFF: exit 4 within 20 s (got $status)" test "$status" == 4
assert "read_only turned OFF: stderr says so" grep -q -i 'read.only' "$work/ro.err"
echo "  stderr: $(head -c 400 "$work/ro.err")"
assert "read_only turned OFF: the state was saved at the last transaction" \
  jq -e --arg p "$pos1" '.position == $p' "$work/ro.state"
expect "read_only=OFF at start: exit 4" 4 live --require-read-only --from now
assert "read_only=OFF at start: stderr says so" grep -q -i 'read.only' "$work/err"

# Two concurrent streams with the default (derived) server ids.
from=$(gtid_pos)
live_bg --from now >"$work/s1.ndjson" 2>"$work/s1.err" &
s1=$!
bg_pids+=("$s1")
live_bg --from now >"$work/s2.ndjson" 2>"$work/s2.err" &
s2=$!
bg_pids+=("$s2")
assert "two streams: both connected" wait_dump_threads 2
for i in 11 12 13 14 15; do root -e "INSERT INTO t.g VALUES ($i)" || exit 1; done
end=$(gtid_pos)
assert "two streams: the first sees every change" wait_for_text "$work/s1.ndjson" "\"position\":\"$end\"" 10
assert "two streams: the second sees every change" wait_for_text "$work/s2.ndjson" "\"position\":\"$end\"" 10
assert "two streams: both are still connected" test "$(dump_threads)" == 2
root -N -e 'SHOW SLAVE HOSTS' >"$work/hosts"
assert "two streams: registered with two different server ids in 1e9..2^32-1 ($(cut -f1 "$work/hosts" | tr '\n' ' '))" \
  awk 'BEGIN {ok = 0} $1 >= 1000000000 && $1 <= 4294967295 {ids[$1] = 1} END {n = 0; for (i in ids) n++; exit n == 2 ? 0 : 1}' "$work/hosts"
kill -TERM "$s1" "$s2"
st1=0; wait "$s1" || st1=$?
st2=0; wait "$s2" || st2=$?
bg_pids=()
assert "two streams: SIGTERM exits 0 ($st1, $st2)" test "$st1:$st2" == 0:0
assert "two streams: the same lines" cmp -s "$work/s1.ndjson" "$work/s2.ndjson"
assert "two streams: 5 transactions each" test "$(grep -c '"op":"commit"' "$work/s1.ndjson")" == 5
assert "two streams: nothing on stderr about being disconnected" \
  bash -c "! grep -q -i -e 'reconnect' -e 'lost' '$work/s1.err' '$work/s2.err'"

# Two streams given the same --server-id: the server drops the older one, which says why.
live_bg --from now --server-id 4242 >/dev/null 2>"$work/same1.err" &
same1=$!
bg_pids+=("$same1")
assert "same server id: the first is connected" wait_dump_threads 1
live_bg --from now --server-id 4242 >/dev/null 2>"$work/same2.err" &
same2=$!
bg_pids+=("$same2")
st_same=0
wait "$same1" || st_same=$?
kill -TERM "$same2"
wait "$same2" || true
bg_pids=()
assert "same server id: the dropped stream exits 2 ($st_same)" test "$st_same" == 2
assert "same server id: it names the id and the way out" grep -q "another replica registered with server id 4242.*--server-id" "$work/same1.err"

# A wrong password.
started=$SECONDS
expect "a wrong password: exit 69" 69 env MYSQL_PWD=wrong-password timeout -k 5 60 "$stream" -h 127.0.0.1 \
  -P "$THROWAWAY_PORT" -u cdc --from now
echo "  it took $((SECONDS - started)) s; stderr: $(head -c 300 "$work/err")"
assert "a wrong password: stderr says the login was refused" grep -q -i -e 'access denied' -e 'authenticat' "$work/err"
assert "a wrong password: stderr names the server" grep -q -F "127.0.0.1:$THROWAWAY_PORT" "$work/err"
assert "a wrong password: nothing on stdout" test ! -s "$work/out"

# binlog_format=STATEMENT.
root -e "SET GLOBAL binlog_format = 'STATEMENT'" || exit 1
expect "binlog_format=STATEMENT: exit 78" 78 live --from now
assert "binlog_format=STATEMENT: stderr names the setting and its value" \
  bash -c "grep -q binlog_format '$work/err' && grep -q STATEMENT '$work/err'"
echo "  stderr: $(head -c 300 "$work/err")"

finish
