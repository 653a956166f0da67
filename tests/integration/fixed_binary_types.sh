#!/usr/bin/env bash
# MariaDB's INET4, INET6 and UUID, with the server as the oracle (issue 30): edge values and a
# few hundred random ones (any bytes, IPv4-compatible and -mapped addresses, UUIDs of every
# version and variant) are written, updated, and then read back with SELECT over the text
# protocol; for every row, what each tool writes must be exactly that text (NULL as null), with
# no expected value written here:
#   cdc-snapshot          the rows of cdc-plan's chunks;
#   cdc-stream            live, --file --catalog, and each --format (debezium, canal, maxwell,
#                         with and without --flink): the rows after the inserts and updates;
#   cdc-stream --file     without --catalog, the documented fallback: base64 of the bytes
#                         (TO_BASE64 of CAST(... AS BINARY(n))) and binary(n) in the table line;
#   cdc-plan/cdc-merge    tables keyed by each type, snapshotted one chunk at a time with rows
#                         inserted, updated and deleted in every key range between chunks, merge
#                         into exactly the table's rows: chunk bounds and the deltas' placement
#                         follow the server's order of the keys.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1
plan_bin=$tools_dir/cdc-plan
snapshot_bin=$tools_dir/cdc-snapshot
merge_bin=$tools_dir/cdc-merge
cdc_as() { MYSQL_PWD=$THROWAWAY_CDC_PASSWORD timeout -k 5 120 "$@"; }
connection=(-h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc)

# SQL expressions for random values. A group of an INET6 is zero half the time, so that runs of
# zeros of every length and place occur; a UUID's version nibble is any of 0-f, its variant
# nibble any the server takes as text for that version.
group="IF(RAND() < 0.5, '0000', LPAD(HEX(FLOOR(RAND() * 65536)), 4, '0'))"
random_inet6="CAST(UNHEX(CASE FLOOR(RAND() * 4)
    WHEN 0 THEN CONCAT(REPEAT('0', 20), 'FFFF', HEX(RANDOM_BYTES(4)))
    WHEN 1 THEN CONCAT(REPEAT('0', 24), HEX(RANDOM_BYTES(4)))
    ELSE CONCAT($group, $group, $group, $group, $group, $group, $group, $group) END) AS INET6)"
random_version="SUBSTR('0123456789abcdef', 1 + FLOOR(RAND() * 16), 1)"
random_uuid_text="CONCAT(LOWER(HEX(RANDOM_BYTES(4))), '-', LOWER(HEX(RANDOM_BYTES(2))), '-', @v := $random_version,
    SUBSTR(LOWER(HEX(RANDOM_BYTES(2))), 2), '-',
    IF(@v >= '8', SUBSTR('9abcdef', 1 + FLOOR(RAND() * 7), 1), SUBSTR('0123456789abcdef', 1 + FLOOR(RAND() * 16), 1)),
    SUBSTR(LOWER(HEX(RANDOM_BYTES(2))), 2), '-', LOWER(HEX(RANDOM_BYTES(6))))"
random_inet4="INET_NTOA(FLOOR(RAND() * 4294967296))"

start=$(gtid_pos)
root <<SQL >/dev/null || exit 1
CREATE DATABASE fb;
CREATE TABLE fb.vals (id INT PRIMARY KEY, a INET6, b UUID, c INET4);
INSERT INTO fb.vals VALUES
  (1, '::', '00000000-0000-0000-0000-000000000000', '0.0.0.0'),
  (2, '::1', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '255.255.255.255'),
  (3, '::ffff:0.0.0.0', '123e4567-e89b-12d3-a456-426614174000', '10.0.0.1'),
  (4, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', UUID(), '10.0.0.0'),
  (5, '::ffff:255.255.255.255', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', '0.0.0.1'),
  (6, '::1.2.3.4', '01890a5d-ac96-774b-bcce-b302099a8057', '1.0.0.0'),
  (7, '::0.1.0.0', '1ec9414c-232a-6b00-b3c8-9e6bdeced846', '127.0.0.1'),
  (8, '1::', '11111111-2222-4333-0444-555555555555', '192.168.0.255'),
  (9, '1:0:2:3:4:5:6:7', '11111111-2222-0333-8444-555555555555', '8.8.8.8'),
  (10, '1:0:0:2:0:0:3:4', '11111111-2222-5333-e444-555555555500', '100.64.0.0'),
  (11, '1:2:3:4:5:6:7:0', '11111111-2222-8333-9444-555555555555', '224.0.0.0'),
  (12, '2001:db8::1', '11111111-2222-f333-f444-555555555555', '9.255.255.255'),
  (13, '::ffff:0:0', '11111111-2222-1333-c444-555555555555', '172.16.0.1'),
  (14, '64:ff9b::1.2.3.4', '11111111-2222-2333-d444-555555555555', '10.255.0.0'),
  (15, 'fe80::1', '11111111-2222-3333-7444-555555555555', '0.255.255.0'),
  (16, '::100', '00000000-0000-1000-8000-000000000000', '1.2.3.4'),
  (17, '::ffff', '00000000-0000-0000-0000-000000000001', '4.3.2.1'),
  (18, '1:2:3:4:5:6:7:8', '00000000-0000-0000-0000-000000000100', '0.0.1.0'),
  (19, NULL, NULL, NULL);
-- Random values; the UUIDs of the even ids from any 16 bytes (versions 8-f with variant 0
-- included, which the server stores differently), the odd ones from text.
INSERT INTO fb.vals SELECT 100 + seq, $random_inet6,
  IF(seq % 2 = 0, CAST(RANDOM_BYTES(16) AS UUID), $random_uuid_text), $random_inet4 FROM mysql.seq_1_to_400;
SQL
root -N -e "SELECT id, a, b, c FROM fb.vals ORDER BY id" >"$work/before.tsv" || exit 1
# Updates, so that before and after images both hold these types.
root -e "UPDATE fb.vals SET a = $random_inet6, b = $random_uuid_text, c = $random_inet4 WHERE id % 3 = 0;
         UPDATE fb.vals SET a = NULL WHERE id % 7 = 0" || exit 1
until=$(gtid_pos)

# rows_of_tsv: the mariadb client's rows (id, a, b, c; NULL as NULL) as JSON objects, one a line.
rows_of_tsv() {
  jq -R -c 'split("\t") | map(if . == "NULL" then null else . end) | {id: (.[0] | tonumber), a: .[1], b: .[2], c: .[3]}'
}
# The server's rows, over the text protocol: one JSON object a row, sorted by id.
root -N -e "SELECT id, a, b, c FROM fb.vals ORDER BY id" | rows_of_tsv >"$work/server.ndjson" || exit 1
rows_of_tsv <"$work/before.tsv" >"$work/server_before.ndjson"
assert "the server has every row" test "$(wc -l <"$work/server.ndjson")" = 419

# rows_of JQ_FILTER FILE: the rows a tool's output leaves, one object {id,a,b,c} a row sorted by
# id: the last image of each row that JQ_FILTER selects (it yields objects with those members).
rows_of() {
  jq -n -c "[inputs | $1] | map({id: (.id | tonumber), a, b, c}) | reduce .[] as \$r ({}; .[\$r.id | tostring] = \$r)
            | [.[]] | sort_by(.id) | .[]" "$2"
}
# same_rows NAME FILE: FILE holds exactly the server's rows.
same_rows() {
  if cmp -s "$2" "$work/server.ndjson"; then
    passes=$((passes + 1))
    echo "ok   $1"
  else
    fail "$1"
    diff "$work/server.ndjson" "$2" | head -6 | sed 's/^/  /'
  fi
}

# ---- cdc-snapshot --------------------------------------------------------------------------
expect "cdc-plan of fb.vals" 0 cdc_as "$plan_bin" "${connection[@]}" --tables fb.vals --chunk-size 100
cp "$work/out" "$work/vals_chunks.ndjson"
expect "cdc-snapshot of its chunks" 0 cdc_as "$snapshot_bin" "${connection[@]}" "$work/vals_chunks.ndjson"
rows_of 'select(.op == "r") | .after' "$work/out" >"$work/snapshot.ndjson"
same_rows "cdc-snapshot writes every value as the server's text" "$work/snapshot.ndjson"
assert "cdc-snapshot's table line names the types" grep -q -F '{"name":"a","type":"inet6","nullable":true},'\
'{"name":"b","type":"uuid","nullable":true},{"name":"c","type":"inet4","nullable":true}' "$work/out"

# ---- cdc-stream live, --file --catalog -------------------------------------------------------
expect "cdc-stream live" 0 live --from "$start" --until "$until" --tables fb.vals
cp "$work/out" "$work/live.ndjson"
rows_of 'select(.op == "c" or .op == "u") | .after' "$work/live.ndjson" >"$work/live_rows.ndjson"
same_rows "cdc-stream live: the rows after every change are the server's text" "$work/live_rows.ndjson"
rows_of 'select(.op == "c") | .after' "$work/live.ndjson" >"$work/live_inserted.ndjson"
assert "cdc-stream live: the inserted rows are the server's text before the updates" \
  cmp -s "$work/live_inserted.ndjson" "$work/server_before.ndjson"
# Each updated row's first before image is the row as it was before the updates.
jq -n -c '[inputs | select(.op == "u")] | group_by(.key.id) | map(.[0].before) | sort_by(.id) | .[]' \
  "$work/live.ndjson" >"$work/live_before.ndjson"
jq -c 'select(.id % 3 == 0 or .id % 7 == 0)' "$work/server_before.ndjson" >"$work/server_updated_before.ndjson"
assert "cdc-stream live: the before images of the updates are the server's text before them" \
  cmp -s "$work/live_before.ndjson" "$work/server_updated_before.ndjson"
assert "cdc-stream live: the table line names the types" grep -q -F '{"name":"b","type":"uuid","nullable":true}' \
  "$work/live.ndjson"
assert "cdc-stream live: no warning" test ! -s "$work/err" -o "$(grep -c warning "$work/err")" = 0

mapfile -t files < <(binlog_files)
expect "cdc-stream --file --catalog" 0 cdc_as "$stream" --file "${files[@]}" --catalog "${connection[@]}" \
  --tables fb.vals
assert "cdc-stream --file --catalog writes what the live stream writes" \
  cmp -s <(grep -v '"op":"span' "$work/out" | jq -c 'select(.op == "c" or .op == "u")') \
  <(jq -c 'select(.op == "c" or .op == "u")' "$work/live.ndjson")

# ---- the fallback: --file alone -------------------------------------------------------------
expect "cdc-stream --file without the catalog" 0 cdc_as "$stream" --file "${files[@]}" --tables fb.vals
rows_of 'select(.op == "c" or .op == "u") | .after' "$work/out" >"$work/file_rows.ndjson"
root -N -e "SELECT id, TO_BASE64(CAST(a AS BINARY(16))), TO_BASE64(CAST(b AS BINARY(16))),
            TO_BASE64(CAST(c AS BINARY(4))) FROM fb.vals ORDER BY id" | rows_of_tsv >"$work/server_base64.ndjson"
assert "without the catalog: base64 of the bytes, as BINARY(n)" \
  cmp -s "$work/file_rows.ndjson" "$work/server_base64.ndjson"
assert "without the catalog: the table line says binary(16)" \
  grep -q -F '{"name":"b","type":"binary(16)","nullable":true}' "$work/out"

# ---- every --format --------------------------------------------------------------------------
for flink in "" --flink; do
  expect "--format debezium $flink" 0 live --from "$start" --until "$until" --tables fb.vals --format debezium $flink
  rows_of 'select(.op == "c" or .op == "u") | .after' "$work/out" >"$work/debezium.ndjson"
  same_rows "--format debezium $flink: the server's text" "$work/debezium.ndjson"
  expect "--format canal $flink" 0 live --from "$start" --until "$until" --tables fb.vals --format canal $flink
  rows_of 'select(.type == "INSERT" or .type == "UPDATE") | .data[]' "$work/out" >"$work/canal.ndjson"
  same_rows "--format canal $flink: the server's text" "$work/canal.ndjson"
  assert "--format canal $flink: mysqlType and sqlType" \
    test "$(jq -c 'select(.type == "INSERT") | [.mysqlType.b, .sqlType.b]' "$work/out" | sort -u)" = '["uuid",12]'
  expect "--format maxwell $flink" 0 live --from "$start" --until "$until" --tables fb.vals --format maxwell $flink
  rows_of 'select(.type == "insert" or .type == "update") | .data' "$work/out" >"$work/maxwell.ndjson"
  same_rows "--format maxwell $flink: the server's text" "$work/maxwell.ndjson"
done
expect "--format debezium with schemas" 0 live --from "$start" --until "$until" --tables fb.vals --format debezium \
  --format-option schemas.enable=true
cp "$work/out" "$work/debezium_schemas.ndjson"
uuid_schema_names=$(jq -c 'select(.payload.op == "c") | .schema.fields[] | select(.field == "after") | .fields[] |
  select(.field == "b") | .name' "$work/debezium_schemas.ndjson" | sort -u)
assert "debezium: a UUID's schema is io.debezium.data.Uuid" test "$uuid_schema_names" = '"io.debezium.data.Uuid"'

# ---- keys: cdc-plan, chunk by chunk with changes between, cdc-merge ---------------------------
random_uuid_key="IF(RAND() < 0.3, UUID(), $random_uuid_text)"
root <<SQL >/dev/null || exit 1
CREATE TABLE fb.ku (k UUID NOT NULL PRIMARY KEY, n INT NOT NULL);
CREATE TABLE fb.k6 (k INET6 NOT NULL PRIMARY KEY, n INT NOT NULL);
CREATE TABLE fb.k4 (k INET4 NOT NULL PRIMARY KEY, n INT NOT NULL);
INSERT INTO fb.ku VALUES ('00000000-0000-0000-0000-000000000000', 0), ('ffffffff-ffff-ffff-ffff-ffffffffffff', 0),
  ('11111111-2222-0333-8444-555555555555', 0), ('11111111-2222-7333-c444-555555555555', 0);
INSERT INTO fb.k6 VALUES ('::', 0), ('::1', 0), ('::ffff:0.0.0.0', 0), ('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 0);
INSERT INTO fb.k4 VALUES ('0.0.0.0', 0), ('255.255.255.255', 0);
INSERT IGNORE INTO fb.ku SELECT $random_uuid_key, seq FROM mysql.seq_1_to_150;
INSERT IGNORE INTO fb.k6 SELECT $random_inet6, seq FROM mysql.seq_1_to_150;
INSERT IGNORE INTO fb.k4 SELECT $random_inet4, seq FROM mysql.seq_1_to_150;
SQL
# One round of changes in every key range: new keys, deleted keys, updated rows.
change_keys() {
  root -e "INSERT IGNORE INTO fb.ku SELECT $random_uuid_key, 1000 + seq FROM mysql.seq_1_to_6;
           INSERT IGNORE INTO fb.k6 SELECT $random_inet6, 1000 + seq FROM mysql.seq_1_to_6;
           INSERT IGNORE INTO fb.k4 SELECT $random_inet4, 1000 + seq FROM mysql.seq_1_to_6;
           DELETE FROM fb.ku ORDER BY RAND() LIMIT 3; DELETE FROM fb.k6 ORDER BY RAND() LIMIT 3;
           DELETE FROM fb.k4 ORDER BY RAND() LIMIT 3;
           UPDATE fb.ku SET n = n + 1 ORDER BY RAND() LIMIT 4; UPDATE fb.k6 SET n = n + 1 ORDER BY RAND() LIMIT 4;
           UPDATE fb.k4 SET n = n + 1 ORDER BY RAND() LIMIT 4" </dev/null
}
expect "cdc-plan of the keyed tables" 0 cdc_as "$plan_bin" "${connection[@]}" --tables 'fb.k*' --chunk-size 20
cp "$work/out" "$work/key_chunks.ndjson"
assert "cdc-plan splits each keyed table" \
  test "$(jq -r 'select(.index == 3) | .table' "$work/key_chunks.ndjson" | sort | tr '\n' ' ')" = "k4 k6 ku "
# The chunk bounds of each table increase in the server's order.
declare -A key_type=([ku]=UUID [k6]=INET6 [k4]=INET4)
bounds_ordered=1
for table in ku k6 k4; do
  while IFS=$'\t' read -r lower upper; do
    [[ $(root -N -e "SELECT CAST('$lower' AS ${key_type[$table]}) < '$upper'" </dev/null) == 1 ]] || bounds_ordered=0
  done < <(jq -r --arg t "$table" 'select(.table == $t and .start != null and .end != null) |
    [.start[0], .end[0]] | @tsv' "$work/key_chunks.ndjson")
done
assert "every chunk's start is below its end by the server's comparison" test "$bounds_ordered" = 1
mkdir -p "$work/chunks"
snapshot_failed=0
mapfile -t key_chunks <"$work/key_chunks.ndjson"
for ((i = 0; i < ${#key_chunks[@]}; i++)); do
  printf '%s\n' "${key_chunks[i]}" | cdc_as "$snapshot_bin" "${connection[@]}" --output-dir "$work/chunks" - \
    2>>"$work/snap.err" || snapshot_failed=1
  # Not after the last: the merged snapshot is the tables at its high watermark, compared below
  # with the tables as they are.
  ((i + 1 == ${#key_chunks[@]})) || change_keys || snapshot_failed=1
done
assert "every chunk snapshotted, with changes after each" test "$snapshot_failed" = 0
read -r span_from span_until < <("$merge_bin" --span "$work"/chunks/*)
expect "the deltas of the span" 0 live --from "$span_from" --until "$span_until" --tables 'fb.k*'
cp "$work/out" "$work/deltas.ndjson"
assert "the deltas hold changes to merge" test "$(grep -c '"op":"[cud]"' "$work/deltas.ndjson")" -gt 50
expect "cdc-merge of the keyed tables" 0 "$merge_bin" "$work"/chunks/* --deltas "$work/deltas.ndjson"
cp "$work/out" "$work/merged.ndjson"
for table in ku k6 k4; do
  jq -c --arg t "$table" 'select(.op == "r" and .table == $t) | .after' "$work/merged.ndjson" |
    sort >"$work/merged_$table"
  root -N -e "SELECT k, n FROM fb.$table" | jq -R -c 'split("\t") | {k: .[0], n: (.[1] | tonumber)}' |
    sort >"$work/server_$table"
  assert "cdc-merge: fb.$table holds exactly the server's rows ($(wc -l <"$work/server_$table") keys)" \
    cmp -s "$work/merged_$table" "$work/server_$table"
done

finish
