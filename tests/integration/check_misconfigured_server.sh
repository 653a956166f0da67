#!/usr/bin/env bash
# A second throwaway MariaDB with binlog_format=STATEMENT and binlog_row_image=MINIMAL: the
# check must fail (exit 78) and name both settings, their values and the fixes.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$source_dir/scripts/lib/throwaway_mariadb.sh"
plan="$tools_dir/cdc-plan"

server="$work/misconfigured"
trap 'exit_status=$?; throwaway_stop "$server"; remove_work' EXIT
throwaway_start "$server" --binlog-format=STATEMENT --binlog-row-image=MINIMAL --binlog-row-metadata=MINIMAL \
  --server-id=7 || exit 1

expect "check fails with exit 78" 78 env MYSQL_PWD="$THROWAWAY_CDC_PASSWORD" \
  "$plan" --check -h 127.0.0.1 -P "$THROWAWAY_PORT" -u cdc
assert "binlog_format fails with its value" jq -e -s \
  'any(.[]; .name == "binlog_format" and .status == "fail" and .value == "STATEMENT" and (.fix | contains("SET GLOBAL binlog_format = '"'ROW'"'")))' \
  "$work/out"
assert "binlog_row_image fails with its value" jq -e -s \
  'any(.[]; .name == "binlog_row_image" and .status == "fail" and .value == "MINIMAL" and (.fix | contains("binlog_row_image = FULL")))' \
  "$work/out"
assert "binlog_row_metadata only warns" jq -e -s 'any(.[]; .name == "binlog_row_metadata" and .status == "warn")' "$work/out"
assert "the summary lists exactly the two failures" jq -e -s \
  '.[-1].usable == false and .[-1].failed == ["binlog_format","binlog_row_image"]' "$work/out"
assert "stderr names binlog_format and its fix" grep -q "fail: binlog_format is 'STATEMENT', want ROW.*fix: SET GLOBAL" "$work/err"
assert "stderr names binlog_row_image" grep -q "fail: binlog_row_image is 'MINIMAL'" "$work/err"
assert "stderr ends with the verdict" grep -q "error: 127.0.0.1:$THROWAWAY_PORT is not usable for CDC" "$work/err"

finish
