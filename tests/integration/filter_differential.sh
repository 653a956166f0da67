#!/usr/bin/env bash
# The --where evaluator against the server (issue 31; tests/integration/filter_differential.py),
# on a throwaway MariaDB of its own: random rows of every type class --where compares, random
# expressions of the subset over them; the rows the server's SELECT ... WHERE returns must be
# the rows the evaluator finds TRUE, and to_sql must mean to the server what the text means.
# CDC_WHERE_SEED replays a run; CDC_WHERE_EXPRESSIONS (default 4000) sets its size.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1
seed_args=()
[[ -n ${CDC_WHERE_SEED:-} ]] && seed_args=(--seed "$CDC_WHERE_SEED")
if python3 "$source_dir/tests/integration/filter_differential.py" --socket "$THROWAWAY_SOCKET" \
    --port "$THROWAWAY_PORT" --password "$THROWAWAY_CDC_PASSWORD" --tools "$tools_dir" \
    --test-tools "$tools_dir/../tests/tools" --work "$work" --expressions "${CDC_WHERE_EXPRESSIONS:-4000}" \
    "${seed_args[@]}"; then
  passes=$((passes + 1))
else
  fail "the evaluator and the server disagree (above)"
fi
finish
