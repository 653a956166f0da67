#!/usr/bin/env bash
# --format debezium on real tool output (cdc-formats(7)), against a throwaway MariaDB:
#   cdc-stream live   inserts, updates, a primary key change, deletes, a two-row transaction
#                     and a DDL come out as Debezium's events, in order: transaction BEGIN/END,
#                     c/u/d with their keys, tombstones, d + tombstone + c for the key change,
#                     the schema change event; source.server_id, thread, gtid, file, pos as
#                     the server logged them; values as Debezium's type mapping;
#   cdc-stream --file the same binlog gives the same lines;
#   --state/--output  a run killed with SIGKILL while a writer commits, then rerun, ends byte
#                     for byte equal to one uninterrupted run;
#   stdout            with the dump thread killed again and again (reconnects), big
#                     transactions spilled, the output is line for line one uninterrupted run:
#                     transactions go out whole, so there is nothing to discard;
#   cdc-sync/merge    initial_only's snapshot comes out as r events with Debezium's snapshot
#                     markers, the same bytes as cdc-merge --format debezium on the same state
#                     directory; initial's stream after it is Debezium too, and the state
#                     directory's files stay canonical.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
command -v python3 >/dev/null || { echo "skipped: python3 (which reads the events) is not installed" && exit 77; }
require_live_mode
throwaway_start "$srv" || exit 1
sync_bin="$tools_dir/cdc-sync"
merge_bin="$tools_dir/cdc-merge"

root <<'SQL' >/dev/null || exit 1
CREATE DATABASE shop;
CREATE TABLE shop.items (id INT NOT NULL PRIMARY KEY, name VARCHAR(32) NOT NULL, price DECIMAL(8,2) NOT NULL,
  updated DATETIME(3) NOT NULL, size ENUM('s','m') NULL, flag BIT(1) NULL, data VARBINARY(8) NULL,
  big BIGINT UNSIGNED NULL, day DATE NULL, span TIME(6) NULL) ENGINE=InnoDB;
INSERT INTO shop.items VALUES (1, 'one', 1.50, '2024-01-01 00:00:00', 's', b'1', x'00', 1, '2024-09-04', '-838:59:59');
SQL
from=$(gtid_pos)
server_id=$(root -N -e 'SELECT @@server_id')

root <<'SQL' >/dev/null || exit 1
INSERT INTO shop.items VALUES (7, 'lamp', 19.90, '2024-09-05 08:00:01.250', 'm', b'0', x'cafe',
  18446744073709551615, '1000-01-01', '10:52:12.189');
UPDATE shop.items SET price = 17.50, updated = '2024-09-05 08:00:02.500' WHERE id = 7;
UPDATE shop.items SET id = 8 WHERE id = 7;
DELETE FROM shop.items WHERE id = 8;
BEGIN;
INSERT INTO shop.items (id, name, price, updated) VALUES (3, 'three', 0.01, '2024-01-01 00:00:00');
INSERT INTO shop.items (id, name, price, updated) VALUES (4, 'four', -0.50, '2024-01-01 00:00:00');
COMMIT;
ALTER TABLE shop.items ADD COLUMN note VARCHAR(10) NULL;
INSERT INTO shop.items (id, name, price, updated, note) VALUES (9, 'nine', 99.99, '2024-01-01 00:00:00', 'n');
SQL
until=$(gtid_pos)

dbz=(--format debezium --key --topic --format-option topic.prefix=dbz1 --format-option provide.transaction.metadata=true)
expect "live --format debezium: exit 0" 0 live --from "$from" --until "$until" "${dbz[@]}"
cp "$work/out" "$work/live.dbz"

# check_events FILE: the events, in order, and their members, against what the SQL above did.
check_events() {
  python3 - "$1" "$server_id" <<'PY'
import json, re, sys
path, server_id = sys.argv[1], int(sys.argv[2])
events = []
for line in open(path, encoding="utf-8").read().splitlines():
    topic, key, value = line.split("\t")
    key = json.loads(key) if key else None
    value = json.loads(value) if value else None
    if topic == "dbz1.transaction":
        events.append(value["status"])
    elif topic == "dbz1":
        events.append("ddl " + value["ddl"].split()[0])
        assert value["databaseName"] == "shop" and key == {"databaseName": "shop"}, line
    elif value is None:
        events.append("tombstone %d" % key["id"])
    else:
        row = value["after"] if value["op"] == "c" else value["before"]
        events.append("%s %d" % (value["op"], row["id"]))
        assert key == {"id": row["id"]}, line
        src = value["source"]
        assert list(src) == ["version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us",
                             "ts_ns", "table", "server_id", "gtid", "file", "pos", "row", "thread", "query"], src
        assert list(value) == ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
        # MariaDB logs no BEGIN query event (its GTID event starts the transaction): thread null.
        assert src["server_id"] == server_id and (src["thread"] is None or src["thread"] > 0), src
        assert src["snapshot"] == "false" and src["name"] == "dbz1" and src["connector"] == "mysql", src
        assert re.fullmatch(r"\d+-\d+-\d+", src["gtid"]) and src["file"].startswith("binlog") and src["pos"] > 4, src
        assert value["transaction"]["id"] == src["gtid"], value["transaction"]
        assert src["ts_us"] == src["ts_ms"] * 1000
want = ["BEGIN", "c 7", "END", "BEGIN", "u 7", "END", "BEGIN", "d 7", "tombstone 7", "c 8", "END",
        "BEGIN", "d 8", "tombstone 8", "END", "BEGIN", "c 3", "c 4", "END", "ddl ALTER", "BEGIN", "c 9", "END"]
assert events == want, events
lines = [l.split("\t")[2] for l in open(path, encoding="utf-8").read().splitlines()]
c7 = json.loads(lines[1])["after"]
# FORMATS 2.7: Decimal bytes, Timestamp ms, Enum, BIT(1) boolean, bytes base64, BIGINT UNSIGNED
# wrapped (long), Date days, MicroTime.
assert c7 == {"id": 7, "name": "lamp", "price": "B8Y=", "updated": 1725523201250, "size": "m", "flag": False,
              "data": "yv4=", "big": -1, "day": -354285, "span": 39132189000}, c7
u7 = json.loads(lines[4])
assert u7["before"]["price"] == "B8Y=" and u7["after"]["price"] == "BtY=", u7
assert json.loads(lines[17])["after"]["price"] == "zg==", lines[17]  # -0.50: unscaled -50, 0xCE
end = json.loads(lines[18])
assert end["event_count"] == 2 and end["data_collections"] == [{"data_collection": "shop.items", "event_count": 2}]
assert json.loads(lines[21])["after"]["note"] == "n"  # the column the ALTER added
PY
}
assert "live: the events in order, keys, tombstones, PK change, DDL, source block, values" check_events "$work/live.dbz"

# --file: the same binlog, decoded without a server, gives the same lines (those before $from too).
mapfile -t files < <(binlog_files)
expect "--file --format debezium: exit 0" 0 "$stream" --file "${files[@]}" "${dbz[@]}"
subsequence() {
  python3 - "$1" "$2" <<'PY'
import sys
want = open(sys.argv[1], encoding="utf-8").read().splitlines()
got = iter(open(sys.argv[2], encoding="utf-8").read().splitlines())
missing = [w for w in want if not any(g == w for g in got)]
sys.exit(1 if missing else 0)
PY
}
assert "--file: the live run's lines, in order" subsequence "$work/live.dbz" "$work/out"

# Exactly once with --state and --output: killed while a writer commits, then rerun.
writer_table_sql | root >/dev/null || exit 1
load_from=$(gtid_pos)
RANDOM=${STREAM_FORMATS_SEED:-4242}
writer_sql 1 60 0.03 >"$work/writer.sql"
root <"$work/writer.sql" >"$work/writer.log" 2>&1 &
writer=$!
bg_pids+=("$writer")
kills=0
while kill -0 "$writer" 2>/dev/null; do
  live_bg --from "$load_from" --state "$work/k.state" --output "$work/k.dbz" "${dbz[@]}" 2>>"$work/k.err" &
  pid=$!
  bg_pids+=("$pid")
  sleep "0.$((2 + RANDOM % 5))"
  kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
  wait "$pid" 2>/dev/null
done
wait "$writer"
load_until=$(gtid_pos)
expect "--state/--output: the rerun after $kills kills finishes" 0 \
  live --from "$load_from" --until "$load_until" --state "$work/k.state" --output "$work/k.dbz" "${dbz[@]}"
expect "--output: one uninterrupted run" 0 \
  live --from "$load_from" --until "$load_until" --output "$work/whole.dbz" "${dbz[@]}"
assert "the uninterrupted run has the load's transactions" test "$(grep -c '"status":"END"' "$work/whole.dbz")" -ge 60
same_file "--state/--output after kill -9: line for line the uninterrupted run" "$work/whole.dbz" "$work/k.dbz"

# On standard output after lost connections: the dump thread killed while a writer commits
# (some transactions past the 256 KiB buffer, spilled); each transaction is written whole at
# its commit, so the output, without any discard line, is line for line one uninterrupted run.
load2_from=$(gtid_pos)
writer_sql 61 160 0.02 >"$work/writer2.sql"
root <"$work/writer2.sql" >"$work/writer2.log" 2>&1 &
writer=$!
bg_pids+=("$writer")
live_bg --from "$load2_from" "${dbz[@]}" >"$work/pipe.dbz" 2>"$work/pipe.err" &
pid=$!
bg_pids+=("$pid")
dump_kills=0
while kill -0 "$writer" 2>/dev/null; do
  sleep "0.$((2 + RANDOM % 5))"
  for id in $(root -N -e "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'"); do
    root -e "KILL $id" 2>/dev/null && dump_kills=$((dump_kills + 1))
  done
done
wait "$writer"
load2_until=$(gtid_pos)
expect "stdout: one uninterrupted run" 0 live --from "$load2_from" --until "$load2_until" "${dbz[@]}"
cp "$work/out" "$work/pipe_whole.dbz"
ends=$(grep -c '"status":"END"' "$work/pipe_whole.dbz")
caught_up() { [[ $(grep -c '"status":"END"' "$work/pipe.dbz") -ge $ends ]]; }
wait_until 60 caught_up
kill -TERM "$pid"
wait_exit "$pid" 10
assert "stdout after $dump_kills dump kills: reconnected (notices) and stopped cleanly" \
  bash -c "[[ $status == 0 && $dump_kills -gt 0 ]] && grep -q reconnecting '$work/pipe.err'"
same_file "stdout after lost connections: line for line the uninterrupted run" "$work/pipe_whole.dbz" "$work/pipe.dbz"

# cdc-sync initial_only: the merged snapshot through cdc-sync's output stage; cdc-merge's own.
sync() {
  MYSQL_PWD=$THROWAWAY_CDC_PASSWORD CDC_TOOLS_DIR=$tools_dir timeout -k 5 120 \
    "$sync_bin" -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc "$@"
}
expect "cdc-sync initial_only --format debezium --key: exit 0" 0 \
  sync --tables 'shop.*' --dir "$work/sync" --mode initial_only --chunk-size 2 --format debezium --key
cp "$work/out" "$work/snapshot.dbz"
check_snapshot() {
  python3 - "$1" "$(root -N -e 'SELECT COUNT(*) FROM shop.items')" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert len(lines) == int(sys.argv[2]), len(lines)
markers = []
for line in lines:
    key, value = line.split("\t")
    value = json.loads(value)
    assert value["op"] == "r" and value["before"] is None and json.loads(key) == {"id": value["after"]["id"]}
    src = value["source"]
    assert src["server_id"] == 0 and src["thread"] is None and src["gtid"] is None and src["pos"] > 4, src
    markers.append(src["snapshot"])
assert markers == ["first"] + ["true"] * (len(lines) - 2) + ["last"], markers
PY
}
assert "initial_only: r events, first ... last, server_id 0, the snapshot's file/pos" check_snapshot "$work/snapshot.dbz"
assert "the sync directory's snapshot stays canonical" grep -q '^{"op":"r","v":1,' "$work/sync/snapshot.ndjson"
expect "cdc-merge --format debezium on the same chunks and deltas: exit 0" 0 \
  "$merge_bin" "$work"/sync/chunks/* --deltas "$work/sync/deltas.ndjson" --format debezium --key
same_file "cdc-merge --format debezium: the bytes cdc-sync wrote" "$work/snapshot.dbz" "$work/out"

# cdc-sync initial: the snapshot, then the stream (a change made at snapshot_end), on stdout,
# both Debezium; the state directory's deltas stay canonical.
cat >"$work/hook.sh" <<EOF
#!/usr/bin/env bash
[[ \$1 == snapshot_end ]] || exit 0
mariadb --no-defaults -S "$THROWAWAY_SOCKET" -uroot -e "UPDATE shop.items SET price = price + 1 WHERE id = 1"
EOF
chmod +x "$work/hook.sh"
expect "cdc-sync initial --until now: exit 0" 0 \
  sync --tables 'shop.*' --dir "$work/sync2" --until now --on-phase "$work/hook.sh" --format debezium
# r_then_u FILE: r events (at least one), then exactly one u event.
r_then_u() {
  python3 -c 'import json,re,sys; ops=" ".join(json.loads(l)["op"] for l in open(sys.argv[1])); sys.exit(not re.fullmatch("(r )+u", ops))' "$1"
}
assert "initial: the snapshot's r events, then the update as a u event" r_then_u "$work/out"
assert "initial: no canonical line on stdout" bash -c "! grep -q '\"v\":1' '$work/out'"
assert "initial: the deltas stay canonical" grep -q '"op":"span_start"' "$work/sync2/deltas.ndjson"

# --output: initial_only's snapshot converted into the file; initial's stream into the file,
# the snapshot left canonical in the state directory.
expect "cdc-sync initial_only --output --format debezium --key: exit 0" 0 \
  sync --tables 'shop.*' --dir "$work/sync3" --mode initial_only --output "$work/snapshot_file.dbz" --format debezium --key
assert "initial_only --output: nothing on stdout" test ! -s "$work/out"
assert "initial_only --output: the file holds the r events, first ... last" check_snapshot "$work/snapshot_file.dbz"
expect "cdc-sync initial --until now --output --format debezium: exit 0" 0 \
  sync --tables 'shop.*' --dir "$work/sync4" --until now --on-phase "$work/hook.sh" --output "$work/stream_file.dbz" \
  --format debezium
only_u() { python3 -c 'import json,sys; sys.exit([json.loads(l)["op"] for l in open(sys.argv[1])] != ["u"])' "$1"; }
assert "initial --output: the stream's update as a u event in the file" only_u "$work/stream_file.dbz"

expect "--format-option of another format: exit 2" 2 live --from "$from" --until "$until" --format debezium \
  --format-option message=row
assert "--format-option: the known names listed" grep -q 'its options: topic.prefix, schemas.enable' "$work/err"
finish
