#!/usr/bin/env bash
# cdc-stream live mode against a throwaway MariaDB of its own: every column type at its
# extremes, multi-row and multi-table transactions, a ROLLBACK, a binlog rotation mid-stream,
# and every start form (earliest, now, FILE:OFFSET, GTID position) and stop form (--until now,
# GTID, FILE:OFFSET), plus --tables. The live lines must equal, byte for byte, what
# `cdc-stream --file` decodes from the same binlog files in the datadir.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

root <<'SQL' || exit 1
CREATE DATABASE t;
CREATE TABLE t.types (
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
CREATE TABLE t.a (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB;
CREATE TABLE t.b (id INT PRIMARY KEY, n BIGINT) ENGINE=InnoDB;
CREATE TABLE t.other (id INT PRIMARY KEY) ENGINE=InnoDB;
SQL
pos_setup=$(gtid_pos)

# Two streams tail the server while the changes are made: one from the oldest binlog, one
# from the server's end at start-up.
live_bg --from earliest >"$work/tail_earliest.ndjson" 2>"$work/tail_earliest.err" &
bg_pids+=($!)
tail_earliest=$!
live_bg --from now >"$work/tail_now.ndjson" 2>"$work/tail_now.err" &
bg_pids+=($!)
tail_now=$!
wait_dump_threads 2
assert "both tailing streams registered with the server" test "$(dump_threads)" == 2

root <<'SQL' || exit 1
SET time_zone = '+02:00';
INSERT INTO t.types VALUES (1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,
  -99999999.99, '-12345678901234567890123456789012345.123456789012345678901234567890', -1.5, -2.25,
  '1000-01-01', '-838:59:59', '-12:34:56.789', '1000-01-01 00:00:00', '2024-09-04 10:52:12.000001',
  '1970-01-01 02:00:01.000', 1901, b'0', b'0', 'small', '', '', '', '', '', '', '', '', '[]', POINT(0, 0));
INSERT INTO t.types VALUES (2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,
  9223372036854775807, 18446744073709551615, 99999999.99, '0.000000000000000000000000000001', 3.14, 0.1,
  '9999-12-31', '838:59:59', '838:59:59.000', '9999-12-31 23:59:59', '9999-12-31 23:59:59.999999',
  '2038-01-19 05:14:07.999', 2155, b'1', b'1111111111111111111111111111111111111111111111111111111111111111',
  'large', 'a,b,c', 'héllo😀', 'ünï "dq" back\\slash tab\t', 'café ÿ', REPEAT('x', 300),
  x'01020304', x'00ff10', x'DEADBEEF', '{"a": [1, 2.5, "x"], "b": null}',
  ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))'));
INSERT INTO t.types (id) VALUES (3);
INSERT INTO t.types (id, dt, dtm, ts, yr, s) VALUES (4, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', 0, '');
UPDATE t.types SET ti = ti + 1 WHERE id = 1;
DELETE FROM t.types WHERE id = 2;
INSERT INTO t.a VALUES (1, 'a1'), (2, 'a2'), (3, 'a3');
UPDATE t.a SET v = CONCAT(v, '!') WHERE id <= 3;
BEGIN;
INSERT INTO t.a VALUES (10, 'multi');
INSERT INTO t.b VALUES (10, -1);
UPDATE t.a SET v = 'multi2' WHERE id = 10;
DELETE FROM t.b WHERE id = 10;
INSERT INTO t.other VALUES (10);
COMMIT;
BEGIN;
INSERT INTO t.a VALUES (999, 'rolled back');
INSERT INTO t.b VALUES (999, 999);
ROLLBACK;
INSERT INTO t.other VALUES (1);
SQL
pos_before_flush=$(gtid_pos)
root -e 'FLUSH BINARY LOGS' || exit 1
root <<'SQL' || exit 1
INSERT INTO t.a VALUES (20, 'after rotation');
INSERT INTO t.b VALUES (20, 9223372036854775807);
INSERT INTO t.other VALUES (2);
DELETE FROM t.a WHERE id = 1;
SQL
pos_end=$(gtid_pos)
echo "positions: setup $pos_setup, before the rotation $pos_before_flush, end $pos_end"

# The reference: file mode over every binlog file of the datadir.
mapfile -t files < <(binlog_files)
"$stream" --file "${files[@]}" >"$work/full.ndjson" 2>"$work/full.err" || {
  echo "FAIL decoding the datadir's binlogs with --file: $(head -c 600 "$work/full.err")"
  exit 1
}
assert "the binlog was rotated into a second file" test "${#files[@]}" == 2

# The tailing streams caught up with the end; SIGTERM ends them cleanly.
for name in tail_earliest tail_now; do
  assert "$name: reached the last transaction ($pos_end)" \
    wait_for_text "$work/$name.ndjson" "\"position\":\"$pos_end\"" 20
done
kill -TERM "$tail_earliest" "$tail_now"
status=0; wait "$tail_earliest" || status=$?
assert "tail from earliest: SIGTERM exits 0 (got $status)" test "$status" == 0
status=0; wait "$tail_now" || status=$?
assert "tail from now: SIGTERM exits 0 (got $status)" test "$status" == 0
bg_pids=()
same_changes "tail from earliest, live through the workload and the rotation, equals --file decoding" \
  "$work/full.ndjson" "$work/tail_earliest.ndjson"
n=$(line_of "$work/full.ndjson" "\"position\":\"$pos_setup\"")
after_line "$work/full.ndjson" "$n" >"$work/want_now.ndjson"
same_changes "tail from now holds exactly the transactions after start-up" "$work/want_now.ndjson" "$work/tail_now.ndjson"

expect "--from earliest --until now exits 0" 0 live --from earliest --until now
span_checked "$work/out"
cp "$work/out" "$work/until.ndjson"
same_changes "--from earliest --until now equals --file decoding" "$work/full.ndjson" "$work/until.ndjson"

# Values, as DESIGN.md's table says, checked as exact text (jq 1.6 would round big integers).
row1='{"id":1,"ti":-128,"tiu":0,"si":-32768,"siu":0,"mi":-8388608,"miu":0,"i":-2147483648,"iu":0,"bi":-9223372036854775808,"biu":0,"de":"-99999999.99","dw":"-12345678901234567890123456789012345.123456789012345678901234567890","f":-1.5,"d":-2.25,"dt":"1000-01-01","tm":"-838:59:59","tm3":"-12:34:56.789","dtm":"1000-01-01 00:00:00","dtm6":"2024-09-04 10:52:12.000001","ts":"1970-01-01 00:00:01.000Z","yr":1901,"b1":0,"b64":0,"e":"small","s":"","cu":"","vu":"","vl":"","tx":"","bn":"AAAAAA==","vb":"","bl":"","j":"[]","g":"AAAAAAEBAAAAAAAAAAAAAAAAAAAAAAAAAA=="}'
row1u=${row1/\"ti\":-128/\"ti\":-127}
x300=$(printf 'x%.0s' {1..300})
row2='{"id":2,"ti":127,"tiu":255,"si":32767,"siu":65535,"mi":8388607,"miu":16777215,"i":2147483647,"iu":4294967295,"bi":9223372036854775807,"biu":18446744073709551615,"de":"99999999.99","dw":"0.000000000000000000000000000001","f":3.14,"d":0.1,"dt":"9999-12-31","tm":"838:59:59","tm3":"838:59:59.000","dtm":"9999-12-31 23:59:59","dtm6":"9999-12-31 23:59:59.999999","ts":"2038-01-19 03:14:07.999Z","yr":2155,"b1":1,"b64":18446744073709551615,"e":"large","s":"a,b,c","cu":"héllo😀","vu":"ünï \"dq\" back\\slash tab\t","vl":"café ÿ","tx":"'$x300'","bn":"AQIDBA==","vb":"AP8Q","bl":"3q2+7w==","j":"{\"a\": [1, 2.5, \"x\"], \"b\": null}","g":"AAAAAAEDAAAAAQAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA8D8AAAAAAAAAAAAAAAAAAPA/AAAAAAAA8D8AAAAAAAAAAAAAAAAAAAAA"}'
row3='{"id":3,"ti":null,"tiu":null,"si":null,"siu":null,"mi":null,"miu":null,"i":null,"iu":null,"bi":null,"biu":null,"de":null,"dw":null,"f":null,"d":null,"dt":null,"tm":null,"tm3":null,"dtm":null,"dtm6":null,"ts":null,"yr":null,"b1":null,"b64":null,"e":null,"s":null,"cu":null,"vu":null,"vl":null,"tx":null,"bn":null,"vb":null,"bl":null,"j":null,"g":null}'
row4='{"id":4,"ti":null,"tiu":null,"si":null,"siu":null,"mi":null,"miu":null,"i":null,"iu":null,"bi":null,"biu":null,"de":null,"dw":null,"f":null,"d":null,"dt":"0000-00-00","tm":null,"tm3":null,"dtm":"0000-00-00 00:00:00","dtm6":null,"ts":"0000-00-00 00:00:00.000","yr":0,"b1":null,"b64":null,"e":null,"s":"","cu":null,"vu":null,"vl":null,"tx":null,"bn":null,"vb":null,"bl":null,"j":null,"g":null}'
geo1=$(root -N -e "SELECT REPLACE(TO_BASE64(g), '\n', '') FROM t.types WHERE id = 1")
assert "GEOMETRY is base64 of what SELECT returns (SRID + WKB)" grep -q -F "\"g\":\"$geo1\"" "$work/until.ndjson"
has() { grep -q -F -- "$2" "$1"; }
assert "insert of the minimums: exact values" has "$work/until.ndjson" \
  "\"op\":\"c\",\"v\":1,\"db\":\"t\",\"table\":\"types\",\"key\":{\"id\":1},\"before\":null,\"after\":$row1,"
assert "insert of the maximums: exact values" has "$work/until.ndjson" \
  "\"op\":\"c\",\"v\":1,\"db\":\"t\",\"table\":\"types\",\"key\":{\"id\":2},\"before\":null,\"after\":$row2,"
assert "insert of NULLs" has "$work/until.ndjson" "\"key\":{\"id\":3},\"before\":null,\"after\":$row3,"
assert "insert of zero dates" has "$work/until.ndjson" "\"key\":{\"id\":4},\"before\":null,\"after\":$row4,"
assert "update: whole before and after images" has "$work/until.ndjson" \
  "\"op\":\"u\",\"v\":1,\"db\":\"t\",\"table\":\"types\",\"key\":{\"id\":1},\"before\":$row1,\"after\":$row1u,"
assert "delete: before image, after null" has "$work/until.ndjson" \
  "\"op\":\"d\",\"v\":1,\"db\":\"t\",\"table\":\"types\",\"key\":{\"id\":2},\"before\":$row2,\"after\":null,"

# Table lines, and where the changes come from.
table_lines_checked "--file" "$work/full.ndjson"
table_lines_checked "--from earliest --until now" "$work/until.ndjson"
table_lines_checked "tail from now" "$work/tail_now.ndjson"
assert "a live run describes t.a with information_schema's COLUMN_TYPE, --file with the binlog's type" \
  jq -e -s --slurpfile file "$work/full.ndjson" '
    def id_type(lines): [lines[] | select(.op == "table" and .table == "a") | .columns[0].type][0];
    id_type(.) == "int(11)" and id_type($file) == "int"' "$work/until.ndjson"
assert "change lines: server_id 1, thread null (MariaDB writes no BEGIN event); commit lines: an xid" jq -e -s '
  ([.[] | select(.op == "c" or .op == "u" or .op == "d")] | length > 0
   and all(.server_id == 1 and .thread == null))
  and ([.[] | select(.op == "commit" and .rows > 0)] | length > 0 and all(.xid | type == "number"))' \
  "$work/until.ndjson"

# Transactions.
assert "multi-row insert: one event, rows indexed 0..2" jq -e -s '
  [.[] | select(.op == "c" and .table == "a" and .key.id <= 3)] as $r
  | ($r | length) == 3 and ([$r[].pos.index] == [0,1,2]) and ([$r[].pos.offset] | unique | length) == 1' \
  "$work/until.ndjson"
assert "multi-row update: 3 u lines, one commit with rows 3" jq -e -s '
  [.[] | select(.op == "u" and .table == "a" and .key.id <= 3)] as $r
  | ($r | length) == 3 and ([$r[].after.v] == ["a1!","a2!","a3!"])
  and ([.[] | select(.op == "commit" and .gtid == $r[0].pos.gtid and .rows == 3)] | length) == 1' \
  "$work/until.ndjson"
assert "multi-table transaction: its 5 lines in order, one gtid, one commit with rows 5" jq -e -s '
  map(select(.op != "table")) | (map(.op == "c" and .table == "a" and .key.id == 10) | index(true)) as $i
  | .[$i:$i+6] as $t
  | ([$t[:5][] | "\(.op) \(.table) \(.key.id)"] == ["c a 10","c b 10","u a 10","d b 10","c other 10"])
  and ([$t[:5][].pos.gtid] | unique | length) == 1
  and $t[5].op == "commit" and $t[5].gtid == $t[0].pos.gtid and $t[5].rows == 5' "$work/until.ndjson"
assert "ROLLBACK: nothing of the rolled-back transaction" bash -c "! grep -q -e 'rolled back' -e '\"id\":999' '$work/until.ndjson'"
assert "every commit's gtid is the gtid of its lines" jq -e -s '
  reduce .[] as $l ({ok: true, g: null};
    if $l.op == "commit" then {ok: (.ok and (.g == null or .g == $l.gtid)), g: null}
    else {ok: (.ok and (.g == null or .g == $l.pos.gtid)), g: $l.pos.gtid} end) | .ok' "$work/until.ndjson"

# Rotation: the lines after FLUSH BINARY LOGS name the new file.
file2=$(basename "${files[1]}")
assert "lines after the rotation name $file2" jq -e -s --arg f "$file2" '
  (map(.op == "c" and .table == "a" and .key.id == 20) | index(true)) as $i
  | [.[$i:][].pos.file] | unique == [$f]' "$work/until.ndjson"
assert "lines before the rotation name the first file" jq -e -s --arg f "$(basename "${files[0]}")" '
  (map(.op == "c" and .table == "a" and .key.id == 20) | index(true)) as $i
  | [.[:$i][].pos.file] | unique == [$f]' "$work/until.ndjson"

# Start and stop positions, from the commit lines: resuming after a commit emits exactly the
# lines that follow it; stopping at one emits exactly the lines up to it.
n_multi=$(jq -r -s 'map(.op == "commit" and .rows == 5) | index(true) + 1' "$work/full.ndjson")
n_flush=$(line_of "$work/full.ndjson" "\"position\":\"$pos_before_flush\"")
for n in "$n_multi" "$n_flush"; do
  commit=$(sed -n "${n}p" "$work/full.ndjson")
  gtid_position=$(jq -r .position <<<"$commit")
  file_offset=$(jq -r '"\(.pos.file):\(.pos.offset)"' <<<"$commit")
  after_line "$work/full.ndjson" "$n" >"$work/want_suffix.ndjson"
  head -n "$n" "$work/full.ndjson" >"$work/want_prefix.ndjson"
  for from in "$gtid_position" "$file_offset"; do
    expect "--from $from --until now exits 0" 0 live --from "$from" --until now
    span_checked "$work/out"
    same_changes "--from $from emits exactly the transactions after that commit" "$work/want_suffix.ndjson" "$work/out"
    expect "--from earliest --until $from exits 0" 0 live --from earliest --until "$from"
    span_checked "$work/out"
    same_changes "--until $from emits exactly the transactions up to that commit" "$work/want_prefix.ndjson" "$work/out"
  done
done
# A FILE:OFFSET inside a transaction (a rows event's, from a change line) is refused, exit 2,
# and a refused run writes nothing, not even the span's first line.
inside=$(sed -n "$((n_multi - 1))p" "$work/full.ndjson" | jq -r '"\(.pos.file):\(.pos.offset)"')
expect "--from $inside (inside a transaction) --until now exits 2" 2 live --from "$inside" --until now
assert "... saying so" grep -q "is inside a transaction" "$work/err"
assert "... and writes nothing on stdout" test ! -s "$work/out"
expect "--from the end --until now exits 0" 0 live --from "$pos_end" --until now
span_checked "$work/out"
assert "--from the end --until now writes nothing" test ! -s "$work/out"

# --tables / --exclude select as in file mode.
"$stream" --file "${files[@]}" --tables 't.a' >"$work/want_a.ndjson" 2>/dev/null
expect "--tables t.a exits 0" 0 live --from earliest --until now --tables 't.a'
span_checked "$work/out"
same_changes "--tables t.a equals --file --tables t.a" "$work/want_a.ndjson" "$work/out"
assert "--tables t.a: only table a" jq -e -s '[.[] | select(.op == "c" or .op == "u" or .op == "d") | .table] | unique == ["a"]' "$work/out"
"$stream" --file "${files[@]}" --tables 't.*' --exclude 't.other' >"$work/want_excl.ndjson" 2>/dev/null
expect "--tables 't.*' --exclude t.other exits 0" 0 live --from earliest --until now --tables 't.*' --exclude 't.other'
span_checked "$work/out"
same_changes "--exclude equals file mode's" "$work/want_excl.ndjson" "$work/out"
assert "--exclude t.other: no line of it" bash -c "! grep -q '\"table\":\"other\"' '$work/out'"

finish
