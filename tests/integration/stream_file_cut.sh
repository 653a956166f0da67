#!/usr/bin/env bash
# cdc-stream --file on binlogs a throwaway MariaDB wrote, cut at the event boundary before
# the XID that commits a transaction with rows. A closed file (rotated by FLUSH BINARY LOGS)
# never ends there, so it was cut short: exit 65, an error naming the file, the offset and
# the transaction's GTID. The active file (the server still writes it: its format description
# has LOG_EVENT_BINLOG_IN_USE_F) ends where the server is: a warning, exit 0. Either way the
# rows are out without a commit line, also in a format that holds rows until the commit.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
throwaway_start "$srv" || exit 1

root <<'SQL' || exit 1
CREATE DATABASE t;
CREATE TABLE t.a (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB;
BEGIN;
INSERT INTO t.a VALUES (1, 'one'), (2, 'two');
UPDATE t.a SET v = 'uno' WHERE id = 1;
COMMIT;
SQL
closed=$(binlog_files | tail -n 1)
root -e 'FLUSH BINARY LOGS' || exit 1
root <<'SQL' || exit 1
BEGIN;
INSERT INTO t.a VALUES (3, 'three');
DELETE FROM t.a WHERE id = 2;
COMMIT;
SQL
active=$(binlog_files | tail -n 1)
mkdir -p "$work/closed" "$work/active"

# cut_before_last_xid FILE OUT: OUT is FILE up to the XID event of its last transaction with
# rows; prints that offset and the transaction's GTID. The commit line's offset is where the
# XID ends; MariaDB's XID event with CRC32 is 19 + 8 + 4 bytes. (A cut off by a byte would be
# a "truncated event" error instead, and the checks below would say so.)
cut_before_last_xid() {
  local file=$1 out=$2 commit end
  commit=$("$stream" --file "$file" | jq -c 'select(.op == "commit" and .rows > 0)' | tail -n 1)
  end=$(jq -r '.pos.offset' <<<"$commit")
  head -c "$((end - 31))" "$file" >"$out"
  echo "$((end - 31)) $(jq -r '.gtid' <<<"$commit")"
}

expect "the whole closed file decodes: exit 0" 0 "$stream" --file "$closed"
read -r offset gtid < <(cut_before_last_xid "$closed" "$work/closed/${closed##*/}")
cut="$work/closed/${closed##*/}"
expect "a closed file cut inside a transaction: exit 65" 65 "$stream" --file "$cut"
assert "the error names the file, the offset and the transaction" \
  grep -qF "cdc-stream: error: $cut:$offset: the file ends inside transaction $gtid (begun at ${closed##*/}:" "$work/err"
assert "the error says the file was cut and its rows must not be applied" \
  grep -q "yet the server had closed the file: it was cut short; the 3 row line(s) of that transaction above have no commit line and must not be applied" "$work/err"
assert "the rows of the cut transaction are out" \
  jq -e -s --arg g "$gtid" '[.[] | select(.pos.gtid == $g and (.op == "c" or .op == "u"))] | length == 3' "$work/out"
assert "and have no commit line" jq -e -s --arg g "$gtid" '[.[] | select(.op == "commit" and .gtid == $g)] | length == 0' "$work/out"
expect "--stop-position at the transaction's XID is asked for: exit 0" 0 \
  "$stream" --file "$closed" --stop-position "$offset"
assert "and says nothing about it" test "$(grep -c "ends inside" "$work/err")" = 0

read -r offset gtid < <(cut_before_last_xid "$active" "$work/active/${active##*/}")
cut="$work/active/${active##*/}"
expect "the active file cut inside a transaction: exit 0" 0 "$stream" --file "$cut"
assert "a warning names the file, the offset and the transaction" \
  grep -qF "cdc-stream: warning: $cut:$offset: the file ends inside transaction $gtid (begun at ${active##*/}:" "$work/err"
assert "and says the server still had it open" grep -q "the server still had the file open, so its 2 row line(s)" "$work/err"
assert "its rows have no commit line" jq -e -s --arg g "$gtid" '[.[] | select(.op == "commit" and .gtid == $g)] | length == 0' "$work/out"
# A format that holds a transaction's rows until its commit (Maxwell's commit:true goes on the
# last one) writes them at the end of the input, as NDJSON does, none marked as the last.
expect "--format maxwell on the active file cut inside a transaction: exit 0" 0 "$stream" --file "$cut" --format maxwell
assert "its two rows are out, an insert and a delete" \
  test "$(jq -r 'select(.data.id == 3 or .data.id == 2) | .type' "$work/out" | tr '\n' ' ')" = "insert delete "
assert "and none of them says it commits" jq -e -s '[.[] | select(.data.id == 3 or .data.id == 2) | select(.commit)] | length == 0' "$work/out"

finish
