#!/usr/bin/env bash
# Every MariaDB type against the server (issue 30; tests/integration/type_differential.py), on a
# throwaway MariaDB of its own: random and edge values of every type, text in every character
# set, a system-versioned table and a sequence, written by the server; what cdc-stream (--file
# and live), cdc-snapshot and cdc-sync write, in every --format, must be the server's own text
# after the encoding the man pages document. CDC_TYPE_SEED replays a run; CDC_TYPE_ROWS (default
# 120) sets its size.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
throwaway_start "$srv" || exit 1
seed_args=()
[[ -n ${CDC_TYPE_SEED:-} ]] && seed_args=(--seed "$CDC_TYPE_SEED")
if python3 "$source_dir/tests/integration/type_differential.py" --socket "$THROWAWAY_SOCKET" \
    --port "$THROWAWAY_PORT" --password "$THROWAWAY_CDC_PASSWORD" --tools "$tools_dir" --datadir "$srv/data" \
    --work "$work" --rows "${CDC_TYPE_ROWS:-120}" "${seed_args[@]}"; then
  passes=$((passes + 1))
else
  fail "a tool writes a value other than the server's (above)"
fi
finish
