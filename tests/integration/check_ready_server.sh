#!/usr/bin/env bash
# cdc-plan --check against the well configured test server: exit 0, valid NDJSON, every line ok.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
plan="$tools_dir/cdc-plan"

expect "check passes on the test server" 0 \
  env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check -h 127.0.0.1 -P "$CDC_TEST_PORT" -u "$CDC_TEST_USER"
assert "every stdout line is a JSON object with op and v" \
  jq -e -s 'length == 17 and all(.[]; type == "object" and (.op | type == "string") and .v == 1)' "$work/out"
assert "every check line is ok" jq -e -s '[.[] | select(.op == "check" and .status != "ok")] | length == 0' "$work/out"
assert "the summary says usable, mariadb" \
  jq -e -s '.[-1] == {"op":"check_summary","v":1,"flavor":"mariadb","usable":true,"failed":[],"warnings":[]}' "$work/out"
assert "the lines named by the issue are all there" jq -e -s '[.[].name] | contains(["server","log_bin",
  "binlog_format","binlog_row_image","binlog_row_metadata","binlog_row_value_options","binlog_annotate_row_events",
  "gtid_strict_mode","gtid_binlog_pos","binlog_retention","server_id","binlog_checksum","grant_replication_slave",
  "grant_binlog_monitor","grant_select","grant_show_databases"])' "$work/out"
assert "nothing on stderr when all is well" test ! -s "$work/err"

# With --tables, the snapshot_length line weighs the tables' snapshot against the retention
# (the warning itself is tested on hand-written facts: this shared server's retention stays).
# Two tables of its own (as root, over the socket), and the pattern selects just them.
mariadb --no-defaults --socket="$CDC_TEST_SOCKET" -uroot -e "DROP DATABASE IF EXISTS check_tables;
  CREATE DATABASE check_tables; CREATE TABLE check_tables.a (id INT PRIMARY KEY) ENGINE=InnoDB;
  CREATE TABLE check_tables.b (id INT PRIMARY KEY) ENGINE=InnoDB;
  INSERT INTO check_tables.a SELECT seq FROM check_tables.seq_1_to_1000; ANALYZE TABLE check_tables.a" >/dev/null || exit 1
expect "check --tables: exit 0" 0 env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check --tables 'check_tables.*' \
  -h 127.0.0.1 -P "$CDC_TEST_PORT" -u "$CDC_TEST_USER"
assert "check --tables: a snapshot_length line, ok, with the estimate and the retention it wants" \
  jq -e -s '[.[] | select(.name == "snapshot_length")] | length == 1 and .[0].status == "ok" and
    (.[0].value | test("^2 table\\(s\\), about [0-9]+ rows and 0 MiB: about 0 s for one cdc-snapshot")) and
    (.[0].want | startswith("a binlog retention of at least 1 h"))' "$work/out"
expect "check --tables that select nothing: exit 0 (a warning)" 0 env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check \
  --tables 'no_such_db.*' -h 127.0.0.1 -P "$CDC_TEST_PORT" -u "$CDC_TEST_USER"
assert "check --tables that select nothing: the warning on stderr names it" \
  grep -q "warn: snapshot_length is '0 table(s).*--tables selects no table on this server" "$work/err"
assert "check --tables that select nothing: listed among the summary's warnings" \
  jq -e -s '.[-1].warnings == ["snapshot_length"]' "$work/out"

# A closed stdout is an I/O error, not a silent success.
status=0
MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check -h 127.0.0.1 -P "$CDC_TEST_PORT" -u "$CDC_TEST_USER" \
  >/dev/full 2>"$work/err" || status=$?
assert "a full stdout exits 74" test "$status" = 74
assert "a full stdout is named" grep -q "stdout" "$work/err"

# A reader that went away (`cdc-plan --check | head -1`) is a normal end, as for the other
# tools: exit 0, nothing on stderr. The fifo's only reader closes before the first write.
mkfifo "$work/fifo"
{
  MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check -h 127.0.0.1 -P "$CDC_TEST_PORT" -u "$CDC_TEST_USER" \
    >"$work/fifo" 2>"$work/err"
  echo $? >"$work/status"
} &
exec {reader}<"$work/fifo"
exec {reader}<&-
wait $!
assert "a reader that went away exits 0" test "$(<"$work/status")" = 0
assert "a reader that went away keeps stderr empty" test ! -s "$work/err"

finish
