#!/usr/bin/env bash
# Issue 29's crash-point exploration of cdc-stream (tests/integration/crash_points.py), on a
# server of its own, so that the history between two positions is fixed: every single fault at
# every step of a clean run (kill, SIGTERM, a dropped connection, a torn write, at each event,
# write, checkpoint and state save), each dropped connection followed by a stop in each step of
# the reconnect, a crash followed by another, and random schedules from a printed seed; after
# each schedule a clean run, and the output must hold every transaction once, in order.
# CDC_CRASH_RANDOM (default 1000) random schedules, for CDC_CRASH_SECONDS at most (default 45);
# CDC_CRASH_SEED replays (with CDC_CRASH_RANDOM=1: one schedule alone).
# fault_crash_points_sync.sh and fault_crash_points_snapshot.sh explore cdc-sync and cdc-snapshot,
# fault_crash_points_stdout.sh cdc-stream on standard output.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/crash_points_lib.sh"
seed_args=()
[[ -n ${CDC_CRASH_SEED:-} ]] && seed_args=(--seed "$CDC_CRASH_SEED")
crash_points --stream "$stream" --random "${CDC_CRASH_RANDOM:-1000}" --budget "${CDC_CRASH_SECONDS:-45}" \
  "${seed_args[@]}"
