#!/usr/bin/env bash
# cdc-apply into MariaDB, exactly once (issue 32): cdc-sync --output reads a table set with
# most column types (a keyed table, a composite key, a keyless table with duplicates) under a
# random load; cdc-apply applies its snapshot and stream into another database with
# --create-tables (which creates it), is killed with kill -9 at random points of its progress
# (and its connection killed once on the server) and run again until it ends, and
#   the target equals the source, row for row (the keyless table as a multiset);
#   the position table holds the stream's last commit position;
#   a rerun applies nothing and changes nothing;
#   --follow applies a file as it grows, cut back and written again as cdc-stream does at a
#   restart, and ends with exit 0 at SIGTERM;
#   an update of a row the target lacks is exit 65 naming its position, table and key, and
#   nothing of its target transaction is applied;
#   a DDL stops it with exit 3 under --on-ddl stop, naming the statement.
# CDC_APPLY_SEED replays a run.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
command -v python3 >/dev/null || { echo "skipped: python3 (the load) is not installed" && exit 77; }
require_live_mode
throwaway_start "$srv" || exit 1
seed=${CDC_APPLY_SEED:-$RANDOM}
echo "     seed $seed (CDC_APPLY_SEED=$seed replays it)"
# The target is a second database of the same server; the apply connects as root by socket.
source "$(dirname "$0")/apply_lib.sh"
apply_make_source "$seed" 1

# kill -9 at random moments, then run again, until a run ends by itself.
# First the stream cut inside a transaction, as a file still being written: that transaction
# is left out, and the next run applies it whole.
cut_at=$(grep -n '"op":"[cud]"' "$work/stream.ndjson" | cut -d: -f1 |
  python3 -c "import random, sys; lines = sys.stdin.read().split(); print(random.Random($seed).choice(lines[10:len(lines) // 4]))")
head -n "$cut_at" "$work/stream.ndjson" >"$work/cut.ndjson"
expect "the stream cut inside a transaction: exit 0" 0 \
  "$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database b --create-tables --batch-rows 10 \
  "$work/dir/snapshot.ndjson" "$work/cut.ndjson"
assert "  the incomplete transaction is left out" grep -q "dropped 1 incomplete" "$work/err"
assert "  the position is that of the last whole one" test "$(root -N -e "SELECT position FROM b.cdc_apply_position")" \
  == "$(grep '"op":"commit"' "$work/cut.ndjson" | tail -1 | jq -r .position)"

# Then runs killed with kill -9 at random points of their progress, and the connection killed
# once on the server (apply_lib.sh, apply_interrupted_runs); then a run to the end.
applied() {
  local count
  count=$(root -N -e "SELECT transactions + snapshot_rows FROM b.cdc_apply_position" 2>/dev/null)
  echo "${count:-0}"
}
apply_cmd=("$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database b --create-tables)
# Round 4: the connection dropped instead (KILL on the server): exit 69, and the next run goes on.
apply_fault() {
  (($1 == 4)) || return 1
  root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'root' AND ID <> CONNECTION_ID()
              AND COMMAND <> 'Binlog Dump'" | while read -r id; do root -e "KILL $id" 2>/dev/null; done
  fault_name="the connection killed on the server"
}
apply_interrupted_runs "$seed"
expect "after $kills runs killed with kill -9 ($midway after they had committed some), a run to the end: exit 0" 0 \
  "${apply_cmd[@]}" "${inputs[@]}"
echo "     $(tail -1 "$work/err")"
assert "at least three runs were killed after they had applied some" test "$midway" -ge 3

same_rows() {
  local table=$1 order=$2
  [[ "$(root -N -e "SELECT * FROM a.$table ORDER BY $order")" == "$(root -N -e "SELECT * FROM b.$table ORDER BY $order")" ]]
}
check_target() {
  local when=$1
  assert "$when: a.t == b.t, row for row, every column" same_rows t id
  assert "$when: a.c == b.c (composite key)" same_rows c "k1, k2"
  assert "$when: a.k == b.k as a multiset (no key)" same_rows k "v, w, f"
}
check_target "after the kills"
assert "the source tables are not empty" test "$(root -N -e 'SELECT COUNT(*) FROM a.t')" -gt 100
last=$(grep '"op":"commit"' "$work/stream.ndjson" | tail -1 | jq -r .position)
assert "the position table holds the last commit's position ($last)" \
  test "$(root -N -e "SELECT position FROM b.cdc_apply_position")" == "$last"

expect "a rerun applies nothing (exit 0)" 0 \
  "$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database b "${inputs[@]}"
assert "  it says so" grep -q "applied 0 transactions (0 rows)" "$work/err"
check_target "after the rerun"

# The stream piped in, as from cdc-stream: the same, into a third database.
cat "${inputs[@]}" | "$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database p --create-tables >/dev/null \
  2>"$work/pipe.err"
assert "from standard input: exit 0" test "$?" == 0 || cat "$work/pipe.err"
assert "from standard input: a.t == p.t" \
  test "$(root -N -e "SELECT * FROM a.t ORDER BY id")" == "$(root -N -e "SELECT * FROM p.t ORDER BY id")"
echo "     $(tail -1 "$work/pipe.err")"

# --follow: the stream file grows while cdc-apply reads it, is cut back to an earlier
# transaction (as cdc-stream does at a restart) and written on again; SIGTERM ends it, exit 0.
lines=$(wc -l <"$work/stream.ndjson")
: >"$work/growing.ndjson"
"$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database f --create-tables --follow "$work/dir/snapshot.ndjson" \
  "$work/growing.ndjson" >/dev/null 2>"$work/follow.err" &
follower=$!
bg_pids+=("$follower")
head -n $((lines / 2)) "$work/stream.ndjson" >>"$work/growing.ndjson"
follow_position() { root -N -e "SELECT position FROM f.cdc_apply_position" 2>/dev/null; }
follow_at() { [[ $(follow_position) == "$1" ]]; }
half=$(head -n $((lines / 2)) "$work/stream.ndjson" | grep '"op":"commit"' | tail -1 | jq -r .position)
wait_until 30 follow_at "$half"
assert "--follow: it applies the lines as they come" test "$(follow_position)" == "$half"
cut_line=$(head -n $((lines / 4)) "$work/stream.ndjson" | grep -n '"op":"commit"' | tail -1 | cut -d: -f1)
truncate -s "$(head -n "$cut_line" "$work/stream.ndjson" | wc -c)" "$work/growing.ndjson"
sleep 0.3
tail -n +$((cut_line + 1)) "$work/stream.ndjson" >>"$work/growing.ndjson"
wait_until 30 follow_at "$last"
kill -TERM "$follower"
status=0
wait "$follower" || status=$?
bg_pids=()
assert "--follow: SIGTERM ends it with exit 0 (got $status)" test "$status" == 0
assert "--follow: the file cut back and written again: a.t == f.t" \
  test "$(root -N -e "SELECT * FROM a.t ORDER BY id")" == "$(root -N -e "SELECT * FROM f.t ORDER BY id")"
assert "--follow: a.k == f.k" \
  test "$(root -N -e "SELECT * FROM a.k ORDER BY v, w, f")" == "$(root -N -e "SELECT * FROM f.k ORDER BY v, w, f")"
assert "--follow: the transactions written again were skipped" grep -q "skipped [1-9][0-9]* transactions" "$work/follow.err"
echo "     $(tail -1 "$work/follow.err")"

# An update of a row the target does not have: exit 65, naming where; the batch not applied.
root -e "CREATE DATABASE e; CREATE TABLE e.c LIKE a.c; INSERT INTO e.c VALUES ('x', 1, 'old')" >/dev/null
cat >"$work/bad.ndjson" <<'LINES'
{"op":"table","v":1,"db":"a","table":"c","columns":[{"name":"k1","type":"varchar(10)","nullable":false},{"name":"k2","type":"int(11)","nullable":false},{"name":"v","type":"varchar(20)","nullable":true}],"key":["k1","k2"],"pos":null,"ts_ms":0}
{"op":"u","v":1,"db":"a","table":"c","key":{"k1":"x","k2":1},"before":{"k1":"x","k2":1,"v":"old"},"after":{"k1":"x","k2":1,"v":"new"},"pos":{"file":"binlog.000001","offset":100,"index":0,"gtid":"0-1-1"},"server_id":1,"thread":null,"ts_ms":0}
{"op":"u","v":1,"db":"a","table":"c","key":{"k1":"y","k2":9},"before":{"k1":"y","k2":9,"v":"a"},"after":{"k1":"y","k2":9,"v":"b"},"pos":{"file":"binlog.000001","offset":100,"index":1,"gtid":"0-1-1"},"server_id":1,"thread":null,"ts_ms":0}
{"op":"commit","v":1,"gtid":"0-1-1","pos":{"file":"binlog.000001","offset":200},"position":"0-1-1","rows":2,"xid":1,"ts_ms":0}
LINES
expect "an update the target has no row for is exit 65" 65 \
  "$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database e "$work/bad.ndjson"
# The two updates keep their keys: one statement (an upsert counted row by row), run again a
# row at a time to name the row the target lacks.
assert "  it names the position, the table and the key of the row the target lacks" \
  grep -qF 'the target has no row to update, or already a row to insert, for the insert or update of a.c at binlog.000001:100#1 (gtid 0-1-1) key {"k1":"y","k2":9} (counted 1, 2 expected; one of the 2 rows of a statement that counted 3, 4 expected)' "$work/err" ||
  cat "$work/err"
assert "  nothing of its transaction was applied" test "$(root -N -e "SELECT v FROM e.c")" == "old"
assert "  nor its position" test "$(root -N -e "SELECT COUNT(*) FROM e.cdc_apply_position")" == 0

# A DDL under --on-ddl stop: exit 3 before it, naming it.
cat >"$work/ddl.ndjson" <<'LINES'
{"op":"ddl","v":1,"db":"a","sql":"ALTER TABLE c ADD COLUMN z INT","pos":{"file":"binlog.000001","offset":300,"index":0,"gtid":"0-1-2"},"ts_ms":0}
{"op":"commit","v":1,"gtid":"0-1-2","pos":{"file":"binlog.000001","offset":400},"position":"0-1-2","rows":0,"xid":null,"ts_ms":0}
LINES
expect "a DDL under --on-ddl stop is exit 3" 3 \
  "$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database e "$work/ddl.ndjson"
assert "  it names the statement and where it is" grep -qF "binlog.000001:300" "$work/err"
expect "--on-ddl apply runs it (exit 0)" 0 \
  "$apply_bin" -S "$THROWAWAY_SOCKET" -u root --database e --on-ddl apply "$work/ddl.ndjson"
assert "  the column is there" root -N -e "SELECT z FROM e.c"
finish
