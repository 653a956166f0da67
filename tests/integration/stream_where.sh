#!/usr/bin/env bash
# cdc-stream --where against a throwaway MariaDB, the server as the oracle: a random load of
# inserts, updates (one row and many, in transactions) and deletes moves rows of w.t into and
# out of an expression over case- and accent-insensitive text, NULLs, a DECIMAL, a DATETIME and
# an INT. The filtered stream, replayed onto the rows the expression was true on at the start
# ("c" inserts, which must be new; "d" deletes, which must find the row; "u" updates), gives the
# server's own SELECT * FROM w.t WHERE EXPR at the end, row for row:
#   live (tailing), --file from the start's FILE:OFFSET, and --format debezium (each "c" and
#   "d" written for an update is an insert or a delete there too);
#   an update that leaves the set is a "d" line of its before image, one that enters it a "c"
#   line of its after image; a transaction whose rows are all dropped writes no line, and the
#   positions still advance (the last commit line's position is the server's at the end);
#   a bad --where is a usage error (exit 2) before anything is streamed: an unknown column,
#   a literal that does not fit, live against the server's tables, --file as the table appears;
#   a DDL that drops a column the expression names stops the stream with exit 2, live and --file.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
command -v python3 >/dev/null || { echo "skipped: python3 (the load and the replay) is not installed" && exit 77; }
require_live_mode
throwaway_start "$srv" || exit 1

expr="(name = 'cafe' AND NOT (n > 7)) OR (amount BETWEEN 20.25 AND 60.75 AND at >= '2026-03-01 12:00:00') OR name IN ('Über', 'zoe ')"
root <<'SQL' >/dev/null || exit 1
CREATE DATABASE w;
CREATE DATABASE r;
CREATE TABLE w.t (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_general_ci, amount DECIMAL(8,2),
                  at DATETIME(3), n INT) CHARACTER SET utf8mb4 ENGINE=InnoDB;
SQL

source "$(dirname "$0")/where_lib.sh"
load 1 300 >"$work/initial.sql"
root <"$work/initial.sql" >/dev/null || fail "the initial load"
root -e "CREATE TABLE r.start LIKE w.t; INSERT INTO r.start SELECT * FROM w.t WHERE $expr" >/dev/null || exit 1
from=$(gtid_pos)
read -r start_file start_offset < <(root -N -e 'SHOW MASTER STATUS' | awk '{print $1, $2}')

live_bg --from "$from" --tables 'w.*' --where "w.t:$expr" --state "$work/live.state" >"$work/live.ndjson" \
  2>"$work/live.err" &
bg_pids+=($!)
tail_live=$!
live_bg --from "$from" --tables 'w.*' --where "w.t:$expr" --format debezium >"$work/debezium.ndjson" \
  2>"$work/debezium.err" &
bg_pids+=($!)
tail_debezium=$!
wait_dump_threads 2

load 2 1500 >"$work/load.sql"
root <"$work/load.sql" >/dev/null || fail "the load"
# A transaction whose rows the expression drops: no line, but its position counts.
root -e "INSERT INTO w.t VALUES (1000, 'tea', NULL, NULL, 1)" >/dev/null || fail "the last insert"
until=$(gtid_pos)
assert "live: the state has the server's position at the end, after a transaction it wrote nothing of" \
  wait_for_text "$work/live.state" "\"position\":\"$until\"" 30
kill -TERM "$tail_live" "$tail_debezium"
wait "$tail_live" "$tail_debezium"
bg_pids=()
assert "live: the dropped last transaction wrote no line" \
  bash -c "! grep -q '\"id\":1000' '$work/live.ndjson'"

mapfile -t files < <(binlog_files)
start_at=0
for i in "${!files[@]}"; do [[ ${files[$i]} == */"$start_file" ]] && start_at=$i; done
"$stream" --file "${files[@]:$start_at}" --start-position "$start_offset" --where "w.t:$expr" \
  >"$work/file.ndjson" 2>"$work/file.err" || fail "--file --where: $(head -c 300 "$work/file.err")"
same_changes "--file: the same lines as live" "$work/live.ndjson" "$work/file.ndjson"

want=$(root -N -e "SELECT * FROM w.t WHERE $expr ORDER BY id")
assert "the filtered set is not empty" test -n "$want"
for name in live file; do
  root -e "CREATE TABLE r.$name LIKE w.t; INSERT INTO r.$name SELECT * FROM r.start" >/dev/null || exit 1
  replay "$work/$name.ndjson" "r.$name" >"$work/replay_$name.sql"
  if root <"$work/replay_$name.sql" >/dev/null 2>"$work/replay_$name.err"; then
    got=$(root -N -e "SELECT * FROM r.$name ORDER BY id")
    assert "$name: the replayed rows are the server's SELECT WHERE, row for row" test "$got" == "$want"
  else
    fail "$name: the replay failed (a c of a row already there, or a d of one not there): $(head -c 300 "$work/replay_$name.err")"
  fi
done
# Debezium's values are its own (DECIMAL as base64, DATETIME as epoch milliseconds): its
# envelopes replayed by key only, which the inserts and deletes move.
root -e "CREATE TABLE r.debezium (id INT PRIMARY KEY); INSERT INTO r.debezium SELECT id FROM r.start" >/dev/null || exit 1
replay "$work/debezium.ndjson" r.debezium debezium >"$work/replay_debezium.sql"
if root <"$work/replay_debezium.sql" >/dev/null 2>"$work/replay_debezium.err"; then
  assert "debezium: the replayed keys are the server's SELECT id WHERE" \
    test "$(root -N -e "SELECT id FROM r.debezium ORDER BY id")" == "$(root -N -e "SELECT id FROM w.t WHERE $expr ORDER BY id")"
else
  fail "debezium: the replay failed: $(head -c 300 "$work/replay_debezium.err")"
fi

# Updates that cross the expression's border are converted: some rows leave, some enter.
ops=$(jq -r 'select(.op == "c" or .op == "u" or .op == "d") | .op' "$work/live.ndjson" | sort | uniq -c | tr -s ' \n' ' ')
echo "     lines by op: $ops"
assert "the load left the filtered set (d lines)" grep -q '"op":"d"' "$work/live.ndjson"
assert "the load entered it (c lines) and stayed in it (u lines)" grep -q '"op":"u"' "$work/live.ndjson"
# Every line's images match the expression where the op says they are in the set.
root -e "CREATE TABLE r.images LIKE w.t" >/dev/null
jq -c 'select(.op == "c" or .op == "u") | .after' "$work/live.ndjson" | python3 -c '
import json, sys
for i, line in enumerate(sys.stdin):
    a = json.loads(line)
    lit = lambda v: "NULL" if v is None else (repr(v) if isinstance(v, int) else "'"'"'" + str(v).replace("'"'"'", "'"'"''"'"'") + "'"'"'")
    print("INSERT INTO r.images VALUES (%d, %s, %s, %s, %s);" % (i, lit(a["name"]), lit(a["amount"]), lit(a["at"]), lit(a["n"])))
' | root >/dev/null
outside=$(root -N -e "SELECT COUNT(*) FROM r.images WHERE NOT ($expr) OR ($expr) IS NULL")
assert "every c and u line's after image matches the expression" test "$outside" == 0

# Bad expressions: usage errors naming the character, live before streaming, --file at the table.
expect "live: an unknown column is exit 2 before streaming" 2 \
  live --from "$until" --until "$until" --where 'w.t:nope = 1'
assert "  it names the column and the character" grep -q 'at character 1: no column `nope`' "$work/err"
expect "live: a literal that does not fit is exit 2" 2 live --from "$until" --until "$until" --where "w.t:amount = 'x'"
assert "  it names the table" grep -q "w.t" "$work/err"
expect "--file: an unknown column is exit 2 when the table appears" 2 \
  "$stream" --file "${files[@]:$start_at}" --start-position "$start_offset" --where 'w.t:n = 1 OR nope = 2'
assert "  it names the character" grep -q "at character 10: no column" "$work/err"
expect "two --where for one table are exit 2" 2 \
  "$stream" --file "${files[@]:$start_at}" --where 'w.t:n = 1' --where 'w.*:n = 2'

# A DDL that drops a column of the expression: the next change of the table stops the stream,
# live (which checked the expression against the table before) and --file.
ddl_from=$(gtid_pos)
live_bg --from "$ddl_from" --tables 'w.*' --where "w.t:$expr" >"$work/ddl.ndjson" 2>"$work/ddl.err" &
bg_pids+=($!)
tail_ddl=$!
wait_dump_threads 1
root -e "INSERT INTO w.t VALUES (1999, 'cafe', NULL, NULL, 1)" >/dev/null || exit 1
root -e "ALTER TABLE w.t DROP COLUMN n; INSERT INTO w.t VALUES (2000, 'cafe', NULL, NULL)" >/dev/null || exit 1
wait_exit "$tail_ddl" 30
bg_pids=()
assert "live: a DDL that leaves the expression without its column stops it with exit 2" test "$status" == 2
assert "  it says a DDL changed the table" grep -q "no longer fits w.t, which a DDL changed" "$work/ddl.err"
assert "  the ddl line is out before it, after the change of the table before it" \
  grep -q '"op":"ddl"' "$work/ddl.ndjson"
assert "  the change before it is out" grep -q '"id":1999' "$work/ddl.ndjson"
mapfile -t files < <(binlog_files)
expect "--file: the same DDL stops it with exit 2" 2 \
  "$stream" --file "${files[@]:$start_at}" --start-position "$start_offset" --where "w.t:$expr"
assert "  it says a DDL changed the table" grep -q "no longer fits w.t, which a DDL changed" "$work/err"

finish
