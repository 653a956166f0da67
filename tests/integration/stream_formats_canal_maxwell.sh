#!/usr/bin/env bash
# cdc-stream --format canal|maxwell and cdc-sync --format maxwell against a throwaway MariaDB of
# their own: a transaction of two rows events (an insert of three rows, an update of two that
# sets a NULL column), a one-column update, a delete, a keyless table, an ALTER and a change
# after it. Canal: one message per rows event, old as Canal accumulates it, ENUM/SET numbers,
# DDL types, mysqlType after the ALTER; Maxwell with --key --topic: each line TOPIC<TAB>KEY<TAB>
# VALUE, the transaction's xid on all its rows and commit on the last, old, the keyless table's
# _uuid, DDL with output_ddl; cdc-sync's snapshot as bootstrap-start/insert/complete (--flink:
# insert); no canonical line ever reaches the output; a bad --format-option exits 2.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
if ! "$stream" --help | grep -- '--format' >/dev/null; then
  echo "cdc-stream has no --format in this build: skipped"
  exit 77
fi
throwaway_start "$srv" || exit 1

root <<'SQL' >/dev/null || exit 1
CREATE DATABASE shop;
CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(32) NOT NULL, price DECIMAL(8,2) NOT NULL,
  size ENUM('s','m','l'), tags SET('a','b','c'), note VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE shop.log (msg VARCHAR(20)) ENGINE=InnoDB;
BEGIN;
INSERT INTO shop.items VALUES (1, 'lamp', 19.90, 'm', 'a,c', NULL), (2, 'desk', 120.00, 'l', '', NULL),
  (3, 'pen', 1.50, NULL, 'b', 'blue');
UPDATE shop.items SET note = 'x' WHERE id IN (1, 2);
COMMIT;
UPDATE shop.items SET price = 17.50 WHERE id = 1;
DELETE FROM shop.items WHERE id = 2;
INSERT INTO shop.log VALUES ('hello');
ALTER TABLE shop.items ADD COLUMN extra INT;
UPDATE shop.items SET extra = 5 WHERE id = 1;
SQL

# ---- canal ----------------------------------------------------------------------------------
expect "canal: exit 0" 0 live --from earliest --until now --tables 'shop.*' --format canal
cp "$work/out" "$work/canal.json"
canal() { jq -c "$1" "$work/canal.json"; }
assert "canal: no canonical line in the output" test "$(grep -c '"op":' "$work/canal.json")" = 0
assert "canal: every line is JSON" jq -e . "$work/canal.json"
assert "canal: the three-row insert is one message" \
  test "$(canal 'select(.type == "INSERT" and .table == "items") | .data | length')" = 3
assert "canal: ENUM as its index, SET as its bitmask" \
  test "$(canal 'select(.type == "INSERT" and .table == "items") | .data[0] | [.size, .tags]')" = '["2","5"]'
assert "canal: the two-row update is one message, old per row (NULL to a value as null)" \
  test "$(canal 'select(.type == "UPDATE" and (.data | length) == 2) | .old')" = '[{"note":null},{"note":null}]'
assert "canal: a one-column update's old" \
  test "$(canal 'select(.type == "UPDATE" and .data[0].price == "17.50" and (.data[0] | has("extra") | not)) | .old')" \
  = '[{"price":"19.90"}]'
assert "canal: the delete" test "$(canal 'select(.type == "DELETE") | .data[0].id')" = '"2"'
assert "canal: the keyless table has no pkNames" \
  test "$(canal 'select(.table == "log" and .isDdl == false) | .pkNames')" = null
assert "canal: CREATE TABLE and ALTER TABLE typed" \
  test "$(canal 'select(.isDdl) | .type' | tr '\n' ' ')" = '"QUERY" "CREATE" "CREATE" "ALTER" '
assert "canal: mysqlType and sqlType after the ALTER" \
  test "$(canal 'select(.data[0].extra == "5") | [.mysqlType.extra, .sqlType.extra, .mysqlType.price, .pkNames]')" \
  = '["int(11)",4,"decimal(8,2)",["id"]]'

expect "canal --key: exit 0" 0 live --from earliest --until now --tables 'shop.items' --format canal --key
assert "canal --key: one message per row, keyed by the primary key" \
  test "$(grep -c $'^{"id":"1"}\t{"data":\\[{"id":"1"' "$work/out")" = 4

expect "canal: an option it does not have: exit 2" 2 live --from now --until now --format canal --format-option flatMessage=true
assert "canal: the error lists its options" grep -q 'its options: message' "$work/err"

# ---- maxwell --------------------------------------------------------------------------------
expect "maxwell --key --topic: exit 0" 0 live --from earliest --until now --tables 'shop.*' --format maxwell \
  --key --topic --format-option output_ddl=true --format-option output_xoffset=true
cp "$work/out" "$work/maxwell.tsv"
assert "maxwell: every line is TOPIC<TAB>KEY<TAB>VALUE" \
  test "$(awk -F'\t' 'NF != 3' "$work/maxwell.tsv" | wc -l)" = 0
cut -f3 "$work/maxwell.tsv" >"$work/maxwell.json"
maxwell() { jq -c "$1" "$work/maxwell.json"; }
assert "maxwell: no canonical line in the output" test "$(grep -c '"op":' "$work/maxwell.json")" = 0
assert "maxwell: the rows' topics and keys" \
  grep -q $'^shop.items\t{"database":"shop","table":"items","pk.id":3}\t{"database":"shop","table":"items","type":"insert"' \
  "$work/maxwell.tsv"
assert "maxwell: the keyless table's key is a _uuid" \
  grep -q $'^shop.log\t{"database":"shop","table":"log","_uuid":"[0-9a-f-]\\{36\\}"}\t' "$work/maxwell.tsv"
assert "maxwell: one xid on the transaction's five rows" \
  test "$(maxwell 'select(.table == "items" and (.type | startswith("table") | not)) | .xid' | head -5 | sort -u |
    grep -c '^[0-9][0-9]*$')" = 1
assert "maxwell: xoffset 0..3, commit on the fifth row" \
  test "$(maxwell 'select(.table == "items" and (.type | startswith("table") | not)) | [.xoffset, .commit]' |
    head -5 | tr '\n' ' ')" \
  = '[0,null] [1,null] [2,null] [3,null] [null,true] '
assert "maxwell: SET as an array, ENUM as the member, DECIMAL as a number" \
  test "$(maxwell 'select(.type == "insert" and .data.id == 1) | [.data.tags, .data.size, .data.price]')" \
  = '[["a","c"],"m",19.9]'
assert "maxwell: DECIMAL keeps its scale in the text" grep -q '"price":19.90' "$work/maxwell.json"
assert "maxwell: a one-column update's old" \
  test "$(maxwell 'select(.type == "update" and .old.price != null) | .old')" = '{"price":19.9}'
assert "maxwell: NULL to a value in old" test "$(maxwell 'select(.type == "update" and .data.id == 2) | .old')" \
  = '{"note":null}'
assert "maxwell: the ALTER as table-alter (ts in ms)" \
  test "$(maxwell 'select(.type == "table-alter") | [.database, .table, (.ts > 100000000000)]')" = '["shop","items",true]'

# ---- cdc-sync: the snapshot as Maxwell's bootstrap ------------------------------------------
sync_bin="$tools_dir/cdc-sync"
sync() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir timeout -k 5 120 \
    "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"
}
expect "sync maxwell: exit 0" 0 sync --tables 'shop.items' --dir "$work/sync1" --mode initial_only --format maxwell
assert "sync maxwell: bootstrap-start, two bootstrap-inserts, bootstrap-complete" \
  test "$(jq -r .type "$work/out" | tr '\n' ' ')" = 'bootstrap-start bootstrap-insert bootstrap-insert bootstrap-complete '
assert "sync maxwell: the snapshot rows as they stand" \
  test "$(jq -c 'select(.type == "bootstrap-insert") | .data' "$work/out" | head -1)" \
  = '{"id":1,"name":"lamp","price":17.5,"size":"m","tags":["a","c"],"note":"x","extra":5}'
expect "sync maxwell --flink: exit 0" 0 sync --tables 'shop.items' --dir "$work/sync2" --mode initial_only \
  --format maxwell --flink
assert "sync maxwell --flink: inserts only" test "$(jq -r .type "$work/out" | tr '\n' ' ')" = 'insert insert '
expect "sync canal: exit 0" 0 sync --tables 'shop.items' --dir "$work/sync3" --mode initial_only --format canal
assert "sync canal: one INSERT message per snapshot row" \
  test "$(jq -r '[.type, (.data | length)] | @tsv' "$work/out" | sort -u)" = $'INSERT\t1'

finish
