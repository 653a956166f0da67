#!/usr/bin/env bash
# The tools of the proof-under-load tests, proved with cdc-stream alone: for each key shape
# (int, composite, varbinary) cdc-test-load creates a table of 2,000 rows and changes it with
# 1,500 random transactions (inserts, updates, deletes, primary-key moves, multi-row updates,
# rollbacks), the three loads running at once; cdc-stream captures everything from before the
# CREATE TABLE to the end; cdc-test-replay applies it to empty copies, which must then equal
# their sources row for row. A table of every column type (stream_changes.sh's rows) goes the
# same way, for the value conversions. And the check can fail: the compare sees a microsecond
# and an accent; the same changes with one delete left out, one insert doubled or one
# primary-key move doubled must not replay into an equal copy. Two loads from one seed agree.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/proof_lib.sh"
require_live_mode
proof_require_tools
throwaway_start "$srv" || exit 1
started=$SECONDS
kinds=(int composite varbinary)
seed=20260601

# The start: the server's end before any table exists. (No --state: saving it after each of
# the ~4,500 transactions, with fsyncs, took from 2 to 35 s on a busy machine.)
from=$(gtid_pos)
assert "the server has a GTID position to start from ($from)" test -n "$from"

for kind in "${kinds[@]}"; do
  expect "cdc-test-load --create makes p.t_$kind with 2000 rows" 0 proof_create "$kind" "p.t_$kind" 2000 "$seed"
  assert "p.t_$kind has 2000 rows" test "$(root -N -e "SELECT COUNT(*) FROM p.t_$kind")" == 2000
done
root <<'SQL' || exit 1
CREATE DATABASE ty;
CREATE TABLE ty.types (
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  de DECIMAL(10,2), dw DECIMAL(65,30), f FLOAT, d DOUBLE,
  dt DATE, tm TIME, tm3 TIME(3), dtm DATETIME, dtm6 DATETIME(6), ts TIMESTAMP(3) NULL, yr YEAR,
  b1 BIT(1), b64 BIT(64), e ENUM('small','medium','large'), s SET('a','b','c'),
  cu CHAR(10) CHARACTER SET utf8mb4, vu VARCHAR(100) CHARACTER SET utf8mb4,
  vl VARCHAR(100) CHARACTER SET latin1, tx TEXT CHARACTER SET utf8mb4,
  bn BINARY(4), vb VARBINARY(10), bl BLOB, j JSON, g GEOMETRY
) ENGINE=InnoDB;
SET time_zone = '+02:00';
INSERT INTO ty.types VALUES (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,
  -99999999.99, '-12345678901234567890123456789012345.123456789012345678901234567890', -1.5, -2.25,
  '1000-01-01', '-838:59:59', '-12:34:56.789', '1000-01-01 00:00:00', '2024-09-04 10:52:12.000001',
  '1970-01-01 02:00:01.000', 1901, b'0', b'0', 'small', '', '', '', '', '', '', '', '', '[]', POINT(0, 0));
INSERT INTO ty.types VALUES (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,
  9223372036854775807, 18446744073709551615, 99999999.99, '0.000000000000000000000000000001', 3.14, 0.1,
  '9999-12-31', '838:59:59', '838:59:59.000', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999',
  '2038-01-19 05:14:07.999', 2155, b'1', b'1111111111111111111111111111111111111111111111111111111111111111',
  'large', 'a,b,c', 'héllo😀', 'ünï "dq" back\\slash tab\t', 'café ÿ', REPEAT('x', 300),
  x'01020304', x'00ff10', x'DEADBEEF', '{"a": [1, 2.5, "x"], "b": null}',
  ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))'));
INSERT INTO ty.types (id) VALUES (3);
INSERT INTO ty.types (id, dt, dtm, ts, yr, s) VALUES (4, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', 0, '');
INSERT INTO ty.types (id, f, d, tx, bl) VALUES (5, 3.40282e38, -2.2250738585072014e-308, 'x\0y\nz', x'00');
UPDATE ty.types SET ti = ti + 1, j = '{"b": 2}' WHERE id = 1;
UPDATE ty.types SET id = 20 WHERE id = 2;
DELETE FROM ty.types WHERE id = 3;
SQL

for kind in "${kinds[@]}"; do
  proof_load_bg "$kind" "p.t_$kind" "$seed" tx:1500
done
load_started=$SECONDS
if proof_wait_load; then
  passes=$((passes + 1))
  echo "ok   the three loads end with exit 0"
else
  fail "a load failed"
fi
echo "  loads took $((SECONDS - load_started)) s"
for kind in "${kinds[@]}"; do
  assert "the $kind load rolled some transactions back" grep -q -E ' [1-9][0-9]* rolled back' "$work/load.p.t_$kind.err"
done

changes=$work/changes.ndjson
# is_move FILE: per line of FILE, true when it is an update that changes the primary key.
is_move() { jq -c '.op == "u" and (. as $l | any($l.key | keys[]; $l.before[.] != $l.after[.]))' "$1"; }
expect "cdc-stream --from START --until now captures the changes" 0 live --from "$from" --until now --tables 'p.*,ty.*'
cp "$work/out" "$changes"
echo "  $(wc -l <"$changes") lines: $(grep -c '"op":"c"' "$changes") c, $(grep -c '"op":"u"' "$changes") u, $(grep -c '"op":"d"' "$changes") d"
for kind in "${kinds[@]}"; do
  lines=$work/changes.$kind.ndjson
  grep -F "\"db\":\"p\",\"table\":\"t_$kind\"" "$changes" >"$lines"
  for op in c u d; do
    assert "the $kind changes hold op $op lines" grep -q "\"op\":\"$op\"" "$lines"
  done
  moves=$(is_move "$lines" | grep -c true)
  assert "the $kind changes hold primary-key moves ($moves)" test "$moves" -gt 0
done

replay_started=$SECONDS
expect "cdc-test-replay applies the changes to empty copies" 0 proof_replay copy "$changes"
echo "  $(cat "$work/err")"
echo "  replay took $((SECONDS - replay_started)) s"
for kind in "${kinds[@]}"; do
  proof_compare "p.t_$kind" copy
done
proof_compare ty.types copy

# The compare sees small differences: a microsecond, an accent.
root -e "UPDATE copy.t_int SET ts = ts + INTERVAL 1 MICROSECOND WHERE ts IS NOT NULL ORDER BY id LIMIT 1" || exit 1
assert "the compare sees a TIMESTAMP one microsecond off" test "$(proof_diff p.t_int copy | head -1)" != ""
root -e "UPDATE copy.t_composite SET note = REPLACE(note, 'é', 'e') WHERE note LIKE BINARY '%é%' LIMIT 1" || exit 1
assert "the compare sees é become e" test "$(proof_diff p.t_composite copy | head -1)" != ""

# The load follows from its seed: two runs from the same seed make equal tables.
for db in same1 same2; do
  proof_create int "$db.t_int" 500 7 >/dev/null 2>&1 || exit 1
  proof_load_bg int "$db.t_int" 7 tx:200
  proof_wait_load >/dev/null || exit 1
done
proof_compare same1.t_int same2

# The check can fail. One delete left out: the replay stops on a later change of that key, or
# the copy keeps a row the source does not have.
lines=$work/changes.int.ndjson
awk '!done && /"op":"d"/ { done = 1; next } { print }' "$lines" >"$work/lost_delete.ndjson"
assert "the changes without their first delete are one line shorter" \
  test "$(wc -l <"$work/lost_delete.ndjson")" == "$(($(wc -l <"$lines") - 1))"
status=0
proof_replay lost "$work/lost_delete.ndjson" >"$work/lost.out" 2>"$work/lost.err" || status=$?
if ((status != 0)); then
  passes=$((passes + 1))
  echo "ok   a lost delete is caught by cdc-test-replay: $(cat "$work/lost.err")"
elif ! proof_diff p.t_int lost >"$work/lost.diff"; then
  passes=$((passes + 1))
  echo "ok   a lost delete is caught by the compare: $(head -1 "$work/lost.diff")"
else
  fail "a lost delete went unnoticed"
fi

# One insert doubled: the replay must stop at the second copy of the line, naming it.
first_c=$(line_of "$lines" '"op":"c"')
awk -v n="$first_c" '{ print } NR == n { print }' "$lines" >"$work/doubled_insert.ndjson"
expect "a doubled insert makes cdc-test-replay exit 1" 1 proof_replay doubled "$work/doubled_insert.ndjson"
assert "the error names the line, the table and the key: $(cat "$work/err")" \
  grep -q -E "doubled_insert.ndjson:$((first_c + 1)): INSERT duplicate key p.t_int key \{\"id\":[0-9]+\}" "$work/err"

# One update doubled: harmless to the row, but not to a primary-key move, which then finds no
# row: a doubled move must make the replay exit 1.
move_at=$(is_move "$lines" | grep -n -m1 true | cut -d: -f1)
awk -v n="$move_at" '{ print } NR == n { print }' "$lines" >"$work/doubled_move.ndjson"
expect "a doubled primary-key move makes cdc-test-replay exit 1" 1 proof_replay doubled_move "$work/doubled_move.ndjson"
assert "the error says the update matched no row: $(cat "$work/err")" \
  grep -q "doubled_move.ndjson:$((move_at + 1)): UPDATE matched no row in p.t_int key" "$work/err"

echo "  whole test: $((SECONDS - started)) s"
finish
