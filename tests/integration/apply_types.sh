#!/usr/bin/env bash
# Every type of the type proof through cdc-apply (issue 32; tests/integration/apply_types.py):
# type_differential.py's tables and values, read by cdc-sync (a snapshot, then inserts, updates
# and deletes in the stream), applied with --create-tables into a MariaDB database and into a
# throwaway PostgreSQL, each target then equal to its source row for row, the servers rendering
# every value. On a throwaway MariaDB of its own. CDC_TYPE_SEED replays a run; CDC_TYPE_ROWS
# (default 400) sets its size. Skipped (77) where PostgreSQL or python3 is not installed.
# fault_apply.sh carries the same tables through its faults (apply_types.py make-source and
# compare); this test alone applies the zero dates (MariaDB) and refuses them (PostgreSQL).
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$source_dir/scripts/lib/throwaway_postgres.sh"
pg_throwaway_bin >/dev/null || { echo "skipped: PostgreSQL is not installed (Debian's postgresql)" && exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 is not installed" && exit 77; }
source "$(dirname "$0")/live_lib.sh"
pg="$work/pg"
trap 'exit_status=$?; live_cleanup; pg_throwaway_stop "$pg"; remove_work' EXIT
require_live_mode
throwaway_start "$srv" || exit 1
pg_throwaway_start "$pg" || exit 1
seed_args=()
[[ -n ${CDC_TYPE_SEED:-} ]] && seed_args=(--seed "$CDC_TYPE_SEED")
if python3 "$source_dir/tests/integration/apply_types.py" run --socket "$THROWAWAY_SOCKET" --port "$THROWAWAY_PORT" \
    --password "$THROWAWAY_CDC_PASSWORD" --tools "$tools_dir" --work "$work" --pg-conninfo "$PG_THROWAWAY_CONNINFO" \
    --pg-admin "host=$PG_THROWAWAY_SOCKET_DIR port=$PG_THROWAWAY_PORT dbname=copy user=postgres" \
    --psql "$(pg_throwaway_bin)/psql" --rows "${CDC_TYPE_ROWS:-400}" "${seed_args[@]}"; then
  passes=$((passes + 1))
else
  fail "a target differs from its source (above)"
fi
finish
