#!/usr/bin/env bash
# cdc-stream live mode and DDL: --on-ddl emit writes "ddl" lines (sql, db, pos) as file mode
# does; --on-ddl stop exits 3 just before a DDL on a captured table, with its GTID and SQL on
# stderr and the state saved before it; a rerun stops again; --accept-ddl GTID emits that one
# DDL and goes on to the next. The pieces together equal one --on-ddl emit run.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1

root -e 'CREATE DATABASE t; CREATE TABLE t.other (id INT PRIMARY KEY) ENGINE=InnoDB; CREATE TABLE t.a (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB' || exit 1
from=$(gtid_pos)
ddl1='ALTER TABLE a ADD COLUMN extra INT'
ddl2='CREATE INDEX iv ON a (v)'
root t <<SQL || exit 1
INSERT INTO a VALUES (1, 'one');
INSERT INTO a VALUES (2, 'two');
$ddl1;
INSERT INTO a VALUES (3, 'three', 3);
ALTER TABLE other ADD COLUMN o INT;
INSERT INTO other VALUES (1, 1);
UPDATE a SET v = 'uno' WHERE id = 1;
$ddl2;
INSERT INTO a VALUES (4, 'four', 4);
SQL
until_pos=$(gtid_pos)

# --on-ddl emit (the default) over every table: as file mode decodes it.
mapfile -t files < <(binlog_files)
"$stream" --file "${files[@]}" >"$work/full.ndjson" 2>/dev/null
n=$(line_of "$work/full.ndjson" "\"position\":\"$from\"")
after_line "$work/full.ndjson" "$n" >"$work/want_emit.ndjson"
expect "--on-ddl emit exits 0" 0 live --from "$from" --until "$until_pos" --on-ddl emit
span_checked "$work/out"
same_changes "--on-ddl emit equals --file decoding" "$work/want_emit.ndjson" "$work/out"
expect "without --on-ddl (emit is the default) exits 0" 0 live --from "$from" --until "$until_pos"
span_checked "$work/out"
same_changes "the default is emit" "$work/want_emit.ndjson" "$work/out"
assert "three ddl lines, each with sql, db and a whole pos" jq -e -s --arg d1 "$ddl1" --arg d2 "$ddl2" '
  [.[] | select(.op == "ddl")] as $d
  | ($d | length) == 3 and $d[0].sql == $d1 and $d[2].sql == $d2
  and all($d[]; .db == "t" and (.pos.file | test("^binlog\\.")) and (.pos.offset | type == "number")
          and (.pos.gtid | test("^0-1-[0-9]+$")))' "$work/out"
# Table lines: t.a is described before its first change and again after ADD COLUMN (CREATE
# INDEX changes nothing the line says), t.other once, after its ALTER, before its insert.
for run in "$work/want_emit.ndjson" "$work/out"; do
  table_lines_checked "$(basename "$run")" "$run"
  assert "$(basename "$run"): t.a described twice, before and after $ddl1, t.other once" jq -e -s --arg d "$ddl1" '
    (map(.op == "ddl" and .sql == $d) | index(true)) as $ddl
    | [to_entries[] | select(.value.op == "table" and .value.table == "a")] as $a
    | ($a | length) == 2 and $a[0].key < $ddl and $a[1].key > $ddl
    and [$a[].value | [.columns[].name]] == [["id","v"],["id","v","extra"]]
    and ([.[] | select(.op == "table" and .table == "other") | [.columns[].name]] == [["id","o"]])' "$run"
done
gtid1=$(jq -r -s --arg d "$ddl1" '.[] | select(.op == "ddl" and .sql == $d) | .pos.gtid' "$work/out")
gtid2=$(jq -r -s --arg d "$ddl2" '.[] | select(.op == "ddl" and .sql == $d) | .pos.gtid' "$work/out")
echo "DDL GTIDs: $gtid1 ($ddl1), $gtid2 ($ddl2)"

# --on-ddl stop on t.a: the reference is --on-ddl emit on t.a.
expect "emit, --tables t.a, exits 0" 0 live --from "$from" --until "$until_pos" --tables t.a
span_checked "$work/out"
cp "$work/out" "$work/want_a.ndjson"
before1=$(line_of "$work/want_a.ndjson" "\"sql\":\"$ddl1\"")
[[ -n $before1 ]] || { echo "FAIL the emit run on t.a has no line for $ddl1"; exit 1; }
state=$work/state
run_stop() { live --state "$state" --from "$from" --until "$until_pos" --tables t.a --on-ddl stop "$@"; }

expect "--on-ddl stop exits 3 before $ddl1" 3 run_stop
drop_spans "$work/out"
cp "$work/out" "$work/part1.ndjson"
head -n "$((before1 - 1))" "$work/want_a.ndjson" >"$work/want_part1.ndjson"
same_file "it wrote every transaction before the DDL, and not the DDL" "$work/want_part1.ndjson" "$work/part1.ndjson"
assert "stderr names the DDL's GTID $gtid1" grep -q -F -- "$gtid1" "$work/err"
assert "stderr holds the DDL's SQL" grep -q -F -- "$ddl1" "$work/err"
echo "  stderr: $(head -c 400 "$work/err")"
want_state=$(tail -1 "$work/want_part1.ndjson" | jq -r .position)
assert "the state was saved just before the DDL (position $want_state)" jq -e --arg p "$want_state" '.position == $p' "$state"

expect "a rerun without --accept-ddl stops again with 3" 3 run_stop
drop_spans "$work/out"
assert "it wrote nothing" test ! -s "$work/out"
assert "stderr names $gtid1 again" grep -q -F -- "$gtid1" "$work/err"

status=0
run_stop --accept-ddl "$gtid2" >"$work/out" 2>"$work/err" || status=$?
drop_spans "$work/out"
assert "--accept-ddl with another GTID ($gtid2) does not pass $gtid1 (exit 3 or 2, got $status)" \
  test "$status" == 3 -o "$status" == 2
assert "it wrote nothing" test ! -s "$work/out"

expect "--accept-ddl $gtid1 goes on, and stops with 3 before the next DDL on t.a" 3 run_stop --accept-ddl "$gtid1"
drop_spans "$work/out"
cp "$work/out" "$work/part2.ndjson"
assert "stderr names $gtid2, the next DDL" grep -q -F -- "$gtid2" "$work/err"
assert "it emitted the accepted DDL first" jq -e -s --arg d "$ddl1" '.[0].op == "ddl" and .[0].sql == $d' "$work/part2.ndjson"
assert "the DDL on t.other did not stop it" jq -e -s '[.[] | select(.op == "u")] | length == 1' "$work/part2.ndjson"

expect "--accept-ddl $gtid2 runs to --until and exits 0" 0 run_stop --accept-ddl "$gtid2"
span_checked "$work/out"
cp "$work/out" "$work/part3.ndjson"
cat "$work/part1.ndjson" "$work/part2.ndjson" "$work/part3.ndjson" >"$work/parts.ndjson"
table_lines_checked "the resumed run" "$work/part3.ndjson"
same_changes "the stopped and resumed runs together equal one --on-ddl emit run" "$work/want_a.ndjson" "$work/parts.ndjson"
assert "the state is at the end" jq -e --arg p "$until_pos" '.position == $p' "$state"

finish
