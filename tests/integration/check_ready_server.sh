#!/usr/bin/env bash
# cdc-plan --check against the well configured test server: exit 0, valid NDJSON, every line ok.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
plan="$tools_dir/cdc-plan"

expect "check passes on the test server" 0 \
  env MYSQL_PWD="$CDC_TEST_PASSWORD" "$plan" --check -h 127.0.0.1 -P "$CDC_TEST_PORT" -u "$CDC_TEST_USER"
assert "every stdout line is a JSON object with op and v" \
  jq -e -s 'length == 16 and all(.[]; type == "object" and (.op | type == "string") and .v == 1)' "$work/out"
assert "every check line is ok" jq -e -s '[.[] | select(.op == "check" and .status != "ok")] | length == 0' "$work/out"
assert "the summary says usable, mariadb" \
  jq -e -s '.[-1] == {"op":"check_summary","v":1,"flavor":"mariadb","usable":true,"failed":[],"warnings":[]}' "$work/out"
assert "the lines named by the issue are all there" jq -e -s '[.[].name] | contains(["server","log_bin",
  "binlog_format","binlog_row_image","binlog_row_metadata","binlog_row_value_options","gtid_strict_mode",
  "gtid_binlog_pos","binlog_retention","server_id","binlog_checksum","grant_replication_slave",
  "grant_binlog_monitor","grant_select","grant_show_databases"])' "$work/out"
assert "nothing on stderr when all is well" test ! -s "$work/err"

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
