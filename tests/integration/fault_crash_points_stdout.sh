#!/usr/bin/env bash
# Issue 29's crash-point exploration of cdc-stream on standard output (crash_points.py
# --stdout), on a server of its own: the same schedules as fault_crash_points.sh (every single
# fault at every step, each dropped connection followed by a stop in each step of the
# reconnect, crashes that come back), each run's output a file of its own, read as a consumer
# reads them one after the other: discard lines drop what they say, a transaction counts at
# its commit line; every transaction once, in order, and the repeats only those cdc-stream(1)
# allows (none after a clean stop, the transaction in flight after a kill).
# CDC_CRASH_RANDOM (default 1000) random schedules for CDC_CRASH_SECONDS at most (default 15);
# CDC_CRASH_SEED replays.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/crash_points_lib.sh"
seed_args=()
[[ -n ${CDC_CRASH_SEED:-} ]] && seed_args=(--seed "$CDC_CRASH_SEED")
crash_points --stream "$stream" --stdout --random "${CDC_CRASH_RANDOM:-1000}" --budget "${CDC_CRASH_SECONDS:-15}" \
  "${seed_args[@]}"
