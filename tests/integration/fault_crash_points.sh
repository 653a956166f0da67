#!/usr/bin/env bash
# Issue 29's crash-point exploration (tests/integration/crash_points.py), on a server of its
# own, so that the history between two positions is fixed. cdc-stream: every single fault at
# every step of a clean run (kill, SIGTERM, a dropped connection, a torn write, at each event,
# write, checkpoint and state save), each dropped connection followed by a stop in each step of
# the reconnect, a crash followed by another, and random schedules from a printed seed; after
# each schedule a clean run, and the output must hold every transaction once, in order.
# cdc-sync: a crash or stop at every step of its own and of each tool it runs, and a crash of
# the rerun after each of its saves, in the initial and the add-tables flows; the merged
# snapshot must be the clean run's. cdc-snapshot --output-dir: a crash, stop or lost connection
# before each chunk and at each batch of rows, a torn write, a lost connection followed by
# another fault while the chunk is read again; the chunk files must hold the clean run's rows. CDC_CRASH_RANDOM (default 1000) random schedules, for CDC_CRASH_SECONDS at most
# (default 60); CDC_CRASH_SEED replays (with CDC_CRASH_RANDOM=1: one schedule alone).
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
require_live_mode
# Each run's dump thread outlives it on the server by about a heartbeat (the server notices
# the closed socket when it next writes): hundreds of short runs need more than 151.
throwaway_start "$srv" --max-connections=2000 || exit 1
seed_args=()
[[ -n ${CDC_CRASH_SEED:-} ]] && seed_args=(--seed "$CDC_CRASH_SEED")
python3 "$source_dir/tests/integration/crash_points.py" --stream "$stream" --sync "$tools_dir/cdc-sync" \
  --snapshot "$tools_dir/cdc-snapshot" --socket "$THROWAWAY_SOCKET" \
  --port "$THROWAWAY_PORT" --password "$THROWAWAY_CDC_PASSWORD" --work "$work" \
  --random "${CDC_CRASH_RANDOM:-1000}" --budget "${CDC_CRASH_SECONDS:-60}" "${seed_args[@]}"
