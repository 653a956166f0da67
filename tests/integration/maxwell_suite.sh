#!/usr/bin/env bash
# Maxwell's own JSON test files (issue 30; tests/fixtures/maxwell, from zendesk/maxwell's
# src/test/resources/sql/json) against cdc-stream --file --format maxwell, on a throwaway
# MariaDB booted as Maxwell's test server boots its own (utf8, UTC): each file's statements in
# one session, its binary log decoded from the position before them, and the rows matched
# against the file's expected objects by Maxwell's harness rules, in order, with no other row
# (tests/integration/maxwell_suite.py, which also lists the MariaDB adjustments and why).
# Arguments after the two usual ones run only those files.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
shift 2
throwaway_start "$srv" --character-set-server=utf8 --default-time-zone=+00:00 || exit 1
if python3 "$source_dir/tests/integration/maxwell_suite.py" --socket "$THROWAWAY_SOCKET" --tools "$tools_dir" \
    --fixtures "$source_dir/tests/fixtures/maxwell" --work "$work" "$@"; then
  passes=$((passes + 1))
else
  fail "cdc-stream --format maxwell does not write what Maxwell's test files expect (above)"
fi
finish
