#!/usr/bin/env bash
# Issue 29's crash-point exploration of cdc-sync's state machine (tests/integration/
# crash_points.py, SyncExplorer), on tables that do not change: a crash or stop at every step of
# cdc-sync (its saves, the tools it starts, its writes) and of each tool it runs, and a crash of
# the rerun after each of its saves, in the initial and the add-tables flows; after each schedule
# the same command without faults: the merged snapshot must be the clean run's, the stream its
# one span, and no tool may outlive the cdc-sync that started it.
set -uo pipefail
source "$(dirname "$0")/lib.sh" "$@"
source "$(dirname "$0")/live_lib.sh"
source "$(dirname "$0")/crash_points_lib.sh"
crash_points --sync "$tools_dir/cdc-sync"
