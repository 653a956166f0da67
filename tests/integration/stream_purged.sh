#!/usr/bin/env bash
# cdc-stream live mode when the binlog it needs is gone: after PURGE BINARY LOGS past the
# position in its state file (or a --from position), it must exit 5 with a message naming
# that position and the oldest binlog the server still has, and leave the state alone;
# --from earliest still works.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

root -e 'CREATE DATABASE t; CREATE TABLE t.p (id INT PRIMARY KEY) ENGINE=InnoDB; INSERT INTO t.p VALUES (1); INSERT INTO t.p VALUES (2)' || exit 1
expect "a first run saves its state" 0 live --from earliest --until now --state "$work/state"
[[ -s $work/state ]] || { echo "FAIL the first run saved no state; nothing more to test"; finish; exit 1; }
saved=$(jq -r .position "$work/state")
saved_file=$(jq -r .file "$work/state")
cp "$work/state" "$work/state.before"
echo "state: $(cat "$work/state")"

root -e 'INSERT INTO t.p VALUES (3); FLUSH BINARY LOGS; INSERT INTO t.p VALUES (4); FLUSH BINARY LOGS; INSERT INTO t.p VALUES (5)' || exit 1
oldest=$(root -N -e 'SHOW BINARY LOGS' | tail -1 | cut -f1)
root -e "PURGE BINARY LOGS TO '$oldest'" || exit 1
assert "only $oldest is left on the server" test "$(root -N -e 'SHOW BINARY LOGS' | cut -f1)" == "$oldest"
root -e 'INSERT INTO t.p VALUES (6)' || exit 1

expect "resuming from a state in a purged binlog exits 5" 5 live --state "$work/state" --until now
assert "stdout is empty" test ! -s "$work/out"
assert "the message names the state's position ($saved)" grep -q -F -- "$saved" "$work/err"
assert "the message names the oldest binlog still there ($oldest)" grep -q -F -- "$oldest" "$work/err"
assert "the state file is unchanged" cmp -s "$work/state.before" "$work/state"

expect "--from $saved_file:4 (purged) exits 5" 5 live --from "$saved_file:4" --until now
assert "the message names $saved_file:4" grep -q -F -- "$saved_file:4" "$work/err"
assert "the message names $oldest" grep -q -F -- "$oldest" "$work/err"

expect "--from $saved (purged GTID position) exits 5" 5 live --from "$saved" --until now
assert "the message names $saved and $oldest" bash -c "grep -q -F -- '$saved' '$work/err' && grep -q -F -- '$oldest' '$work/err'"

"$stream" --file "$srv/data/$oldest" >"$work/want.ndjson" 2>/dev/null
expect "--from earliest starts at the oldest binlog left and exits 0" 0 live --from earliest --until now
span_checked "$work/out"
same_changes "--from earliest equals --file decoding of $oldest" "$work/want.ndjson" "$work/out"
assert "--from earliest holds the rows 5 and 6" jq -e -s '[.[] | select(.op == "c") | .key.id] == [5, 6]' "$work/out"

finish
